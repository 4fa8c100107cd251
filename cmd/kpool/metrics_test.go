package main

import (
	"io"
	"log/slog"
	"maps"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/service"
	"github.com/kpool/kpool/store/storetest"
	"github.com/kpool/kpool/store/testdb"
)

// TestFleetMetrics: kpool_nodepools counts the pools by provider, phase and
// health, kpool_clusters the clusters by their Reachable condition (with
// the reason of False), from what is stored at the scrape; every phase
// and status of a known provider is served, at 0 when none.
func TestFleetMetrics(t *testing.T) {
	st := testdb.SQLite(t)
	reg := catalog.Registry()
	svc := service.New(st, reg)
	a := storetest.NewCluster(t, svc, "alice@example.com", "a")
	b := storetest.NewCluster(t, svc, "alice@example.com", "b")
	storetest.NewCluster(t, svc, "bob@example.com", "c")
	storetest.NewPool(t, svc, a, "web")
	storetest.NewPool(t, svc, a, "batch")
	storetest.NewPool(t, svc, b, "web")
	report := func(c *kpool.Cluster, status, reason string) {
		ctx := storetest.Ctx(storetest.Controller)
		cond := kpool.Condition{Type: kpool.ConditionReachable, Status: status, Reason: reason, Message: "m"}
		if _, err := svc.ReportClusterStatus(ctx, c.ID, kpool.ClusterReport{Conditions: []kpool.Condition{cond}}); err != nil {
			t.Fatal(err)
		}
	}
	report(a, kpool.ConditionTrue, "Listed")
	report(b, kpool.ConditionFalse, kpool.ReasonNoCredential)

	m, _ := newMetrics(st, reg.Types(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	want := api.BuildVersion()
	p := string(a.Spec.Platform.Type)
	other := string(reg.Types()[0])
	if other == p {
		other = string(reg.Types()[1])
	}
	l := func(kv ...string) map[string]string {
		out := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	tests := []struct {
		name, family string
		labels       map[string]string
		want         float64
	}{
		{"pools pending", "kpool_nodepools", l("provider", p, "phase", "Pending", "health", "unknown"), 3},
		{"pools ready", "kpool_nodepools", l("provider", p, "phase", "Ready", "health", "healthy"), 0},
		{"another provider's failed pools", "kpool_nodepools", l("provider", other, "phase", "Failed", "health", "unhealthy"), 0},
		{"reachable", "kpool_clusters", l("provider", p, "condition", "Reachable", "status", "True", "reason", ""), 1},
		{"unreachable, no credential", "kpool_clusters", l("provider", p, "condition", "Reachable", "status", "False", "reason", "NoCredential"), 1},
		{"unreachable without a reason", "kpool_clusters", l("provider", p, "condition", "Reachable", "status", "False", "reason", ""), 0},
		{"not looked at yet", "kpool_clusters", l("provider", p, "condition", "Reachable", "status", "Unknown", "reason", ""), 1},
		{"read", "kpool_fleet_scrape_success", l(), 1},
		{"build", "kpool_build_info", l("version", want.Version, "revision", want.Commit, "goversion", want.Go), 1},
	}
	mfs, err := m.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, ok := value(mfs, tc.family, tc.labels)
			if !ok {
				t.Fatalf("%s%v not served", tc.family, tc.labels)
			}
			if v != tc.want {
				t.Fatalf("%s%v = %v, want %v", tc.family, tc.labels, v, tc.want)
			}
		})
	}
}

// value is the gauge of family with exactly labels.
func value(mfs []*dto.MetricFamily, family string, labels map[string]string) (float64, bool) {
	for _, mf := range mfs {
		if mf.GetName() != family {
			continue
		}
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, lp := range m.GetLabel() {
				got[lp.GetName()] = lp.GetValue()
			}
			if maps.Equal(got, labels) {
				return m.GetGauge().GetValue(), true
			}
		}
	}
	return 0, false
}

// TestFleetMetricsStoreDown: a store that cannot be read makes
// kpool_fleet_scrape_success 0 and leaves the fleet's series out, rather
// than failing the whole scrape.
func TestFleetMetricsStoreDown(t *testing.T) {
	st := testdb.SQLite(t)
	m, _ := newMetrics(st, catalog.Registry().Types(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	st.Close()
	mfs, err := m.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := value(mfs, "kpool_fleet_scrape_success", map[string]string{}); !ok || v != 0 {
		t.Fatalf("kpool_fleet_scrape_success %v (served: %v), want 0", v, ok)
	}
	if n, err := testutil.GatherAndCount(m, "kpool_nodepools", "kpool_clusters"); err != nil || n != 0 {
		t.Fatalf("%d fleet series with the store down (%v)", n, err)
	}
}

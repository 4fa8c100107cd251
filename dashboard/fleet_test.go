package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/service"

	"github.com/google/uuid"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/store/storetest"
	"github.com/kpool/kpool/store/testdb"
)

// bigFleet is a dashboard on an SQLite store of clusters×pools pools
// (AKS), written straight through the store in transactions of 10,000 so
// that 100,000 take seconds: pool 0 of every 10 is Failed, pool 5
// Degraded, the rest Ready. It returns the dashboard and an admin's
// request context (an admin sees every pool).
func bigFleet(tb testing.TB, clusters, pools int) (*Handler, context.Context) {
	tb.Helper()
	reg := catalog.Registry()
	svc := service.New(testdb.SQLite(tb), reg)
	ctx := storetest.Ctx(owner)
	var proto *kpool.NodePool
	var all []*kpool.NodePool
	gens := map[string]int64{}
	for c := range clusters {
		cl, err := svc.CreateCluster(ctx, service.ClusterCreate{Name: fmt.Sprintf("c%04d", c), Spec: json.RawMessage(fmt.Sprintf(
			`{"platform":{"type":"azure","azure":{"subscriptionId":"0b1f6471-1bf0-4dda-aec3-11112222%04d","resourceGroup":"rg","clusterName":"c%04d","location":"westeurope"}}}`, c, c))})
		if err != nil {
			tb.Fatal(err)
		}
		gens[cl.ID] = cl.Generation
		if proto == nil {
			if proto, err = svc.CreateNodePool(ctx, service.NodePoolCreate{Name: "proto", ClusterID: cl.ID,
				Spec: json.RawMessage(`{"platform":{"azure":{"vmSize":"Standard_D4s_v5"}},"nodeCount":3,"zones":["1","2","3"]}`)}); err != nil {
				tb.Fatal(err)
			}
		}
		at := time.Now().UTC()
		for i := range pools {
			p := *proto
			p.ID, p.Name, p.ClusterID, p.CreatedAt, p.UpdatedAt = uuid.Must(uuid.NewV7()).String(), fmt.Sprintf("p%05d", i), cl.ID, at, at
			p.ProviderName = fmt.Sprintf("p%05d", i)
			p.Spec.Labels = map[string]string{"team": fmt.Sprintf("t%d", i%4)}
			p.Status.Phase, p.Status.Message = kpool.PhaseReady, ""
			switch i % 10 {
			case 0:
				p.Status.Phase, p.Status.Message = kpool.PhaseFailed, "quota exceeded"
			case 5:
				p.Status.Phase, p.Status.Message = kpool.PhaseDegraded, "quota exceeded"
			}
			p.Status.Health = kpool.HealthOf(p.Status.Phase)
			all = append(all, &p)
		}
	}
	for len(all) > 0 {
		batch := all[:min(10_000, len(all))]
		all = all[len(batch):]
		if err := svc.Store.Write(context.Background(), func(tx kpool.Tx) error {
			for _, p := range batch {
				if err := tx.CreateNodePool(p, gens[p.ClusterID]); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			tb.Fatal(err)
		}
	}
	h := New(Options{Service: svc, Profiles: reg, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	id := &kpool.Identity{Email: storetest.Admin, Admin: true}
	return h, context.WithValue(kpool.WithIdentity(context.Background(), id), ctxKey{}, id)
}

// TestFleetPages: a fleet larger than a page is paged by cluster, its
// totals still over every page (from the counters), each cluster naming a
// few of the pools needing attention and counting the rest; a search by
// label reads at most SearchBudget pools and says so.
func TestFleetPages(t *testing.T) {
	h, ctx := bigFleet(t, ClustersPerPage+5, 300)
	first := get(h.fleet, ctx, "/").Body.String()
	for _, want := range []string{"30 clusters, 9001 pools", "⚠ 1800 need attention", "(30 clusters)", "Clusters 1–25 of 30",
		`href="/?page=2" rel="next"`, ">c0024<", "⚠ and 55 more"} {
		if !strings.Contains(first, want) {
			t.Errorf("first page: no %q", want)
		}
	}
	if strings.Contains(first, ">c0025<") || strings.Count(first, "is Failed: ") > ClustersPerPage*attentionShown {
		t.Errorf("first page shows more than a page")
	}
	for _, tc := range []struct {
		query string
		want  []string
		not   string
	}{
		{"?page=2", []string{"Clusters 26–30 of 30", ">c0025<", `rel="prev"`}, ">c0024<"},
		{"?page=9", []string{"Clusters 26–30 of 30"}, ">c0001<"}, // past the end: the last page
		{"?phase=failed&cluster=c0003", []string{"1 clusters, 30 pools", "and 10 more"}, "is Degraded"},
		{"?label=team%3Dt1", []string{"pools read, and the search stopped there"}, ">c0020<"},
		{"?label=team%3Dt1&cluster=c0002", []string{"1 clusters, 75 pools", "300 pools read"}, "p00002<"},
	} {
		body := get(h.fleet, ctx, "/"+tc.query).Body.String()
		for _, want := range tc.want {
			if !strings.Contains(body, want) {
				t.Errorf("%s: no %q", tc.query, want)
			}
		}
		if strings.Contains(body, tc.not) {
			t.Errorf("%s: shows %q", tc.query, tc.not)
		}
	}
}

// BenchmarkFleet100k is the fleet view of 100,000 pools in 100 clusters
// (SQLite) as an admin, who sees every pool: a page of 25 clusters with
// their counts and the pools needing attention named, from the counters
// and limited queries. Before paging, the view read every pool (97,080
// pools on PostgreSQL: no answer after 108 s).
func BenchmarkFleet100k(b *testing.B) {
	h, ctx := bigFleet(b, 100, 1000)
	b.ResetTimer()
	for b.Loop() {
		if w := get(h.fleet, ctx, "/"); w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}

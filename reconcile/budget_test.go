package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/service"
	"github.com/kpool/kpool/store/testdb"
)

// reading is the fake driver with each list sending n requests, as a
// driver that describes every node group does: each is charged to the
// pass's budget as the wire would (provider.Charge).
type reading struct {
	*fake.Driver
	n int
}

func (d reading) NodePoolList(ctx context.Context, c *kpool.Cluster) ([]provider.Pool, error) {
	for range d.n {
		if err := provider.Charge(ctx, provider.Read); err != nil {
			return nil, err
		}
	}
	return d.Driver.NodePoolList(ctx, c)
}

// platformWith is the test platform whose cluster spec holds s.
func platformWith(t *testing.T, s string) kpool.PlatformType {
	for pt, p := range platforms {
		if strings.Contains(p.cluster, s) {
			return pt
		}
	}
	t.Fatalf("no test platform's cluster has %s", s)
	return ""
}

// TestDriftStretchesPastTheReadBudget: two clusters of one account whose
// drift passes cost 45 reads each, every minute, would take 1.5 reads a
// second; the account's budget of 1 leaves 0.5 to drift: its clusters are
// looked at every 3 minutes, and their status says so. A cluster of
// another account, alone in it, is stretched by its own demand only
// (0.75 / 0.5: every 90 s).
func TestDriftStretchesPastTheReadBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pt := platformWith(t, "subscriptionId")
		w := newWorld(t, testdb.SQLite(t), pt)
		w.drivers.Add(reading{Driver: w.drv, n: 45})
		same := w.addCluster("b")
		spec := strings.NewReplacer("0b1f6471", "1b1f6471", "aks-prod", "aks-other").Replace(platforms[pt].cluster)
		other, err := w.svc.CreateCluster(w.ctx(), service.ClusterCreate{Name: "other", Spec: json.RawMessage(spec)})
		if err != nil {
			t.Fatal(err)
		}
		stop := w.start("a", func(c *reconcile.Config) {
			c.DriftInterval = time.Minute
			c.Budgets = map[kpool.PlatformType]provider.Quota{pt: {Reads: 1}}
		})
		defer stop()
		pools := []*kpool.NodePool{w.createPool("web", 1), w.createPoolIn(same, "web", 1), w.createPoolIn(other, "web", 1)}
		w.until(30*time.Minute, func() (bool, string) {
			for _, p := range pools {
				if ok, why := w.ready(p.ID)(); !ok {
					return false, why
				}
			}
			return true, ""
		})
		w.until(30*time.Minute, func() (bool, string) {
			a, b, o := w.driftOf(w.cluster.ID), w.driftOf(same.ID), w.driftOf(other.ID)
			return a.EverySeconds == 180 && b.EverySeconds == 180 && o.EverySeconds == 90, fmt.Sprintf("drift schedules %+v %+v %+v", a, b, o)
		})
		d := w.driftOf(w.cluster.ID)
		want := "drift checked every 3m (stretched from 1m: account " + string(pt) + "/0b1f6471-1bf0-4dda-aec3-111122223333/westeurope's read budget)"
		if d.ConfiguredSeconds != 60 || d.Notice() != want {
			t.Fatalf("notice %q, want %q", d.Notice(), want)
		}
		if got := w.stretch(); len(got) != 2 || got[0] != 1.5 || got[1] != 3 {
			t.Fatalf("kpool_drift_stretch %v, want 1.5 and 3", got)
		}
		// Over 18 minutes, a stretched cluster is listed every 3 minutes,
		// the other account's every 90 s.
		before := map[string]int{w.cluster.ID: w.lists(w.cluster.ID), other.ID: w.lists(other.ID)}
		w.advance(18 * time.Minute)
		if n := w.lists(w.cluster.ID) - before[w.cluster.ID]; n < 5 || n > 7 {
			t.Fatalf("%d lists of a cluster stretched to 3m in 18m, want 6", n)
		}
		if n := w.lists(other.ID) - before[other.ID]; n < 11 || n > 13 {
			t.Fatalf("%d lists of a cluster stretched to 90s in 18m, want 12", n)
		}
	})
}

// driftOf is a cluster's stored drift schedule (zero: as configured).
func (w *world) driftOf(id string) kpool.DriftSchedule {
	w.t.Helper()
	cl, err := w.svc.Store.Cluster(context.Background(), id)
	if err != nil {
		w.t.Fatal(err)
	}
	if cl.Status.Drift == nil {
		return kpool.DriftSchedule{}
	}
	return *cl.Status.Drift
}

// stretch is kpool_drift_stretch's values, lowest first.
func (w *world) stretch() []float64 {
	var out []float64
	for _, m := range w.family("kpool_drift_stretch") {
		out = append(out, m.GetGauge().GetValue())
	}
	if len(out) == 2 && out[0] > out[1] {
		out[0], out[1] = out[1], out[0]
	}
	return out
}

// lists counts the driver's lists of a cluster.
func (w *world) lists(id string) int {
	n := 0
	for _, c := range w.drv.Calls() {
		if c.Op == fake.List && c.Cluster == id {
			n++
		}
	}
	return n
}

package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
	"github.com/kpool/kpool/store/testdb"
)

// BenchmarkConverge1000 creates 1,000 pools in 10 clusters on the AKS
// emulator, owner's marks on, and measures the time until every pool is Ready, the provider
// calls that took, and the provider calls per pool of a settled resync.
func BenchmarkConverge1000(b *testing.B) {
	for b.Loop() {
		converge1000(b)
	}
}

func converge1000(b *testing.B) {
	w := newAKSWorld(b, testdb.SQLite(b), nil)
	w.installation = prodInstallation // as kpool serve runs them: every pool marked
	clusters := []string{w.cluster.ID}
	for i := 1; i < 10; i++ {
		name := fmt.Sprintf("aks-%d", i)
		w.sim.AddCluster(sub, group, name, "westeurope", "1.30.4")
		var spec map[string]any
		raw, _ := json.Marshal(w.cluster.Spec)
		_ = json.Unmarshal(raw, &spec)
		spec["platform"].(map[string]any)["azure"].(map[string]any)["clusterName"] = name
		raw, _ = json.Marshal(spec)
		c, err := w.svc.CreateCluster(w.ctx(), service.ClusterCreate{Name: name, Spec: raw})
		if err != nil {
			b.Fatal(err)
		}
		clusters = append(clusters, c.ID)
	}
	start := time.Now()
	for ci, cid := range clusters {
		for i := range 100 {
			if _, err := w.svc.CreateNodePool(w.ctx(), service.NodePoolCreate{Name: fmt.Sprintf("p-%d-%d", ci, i), ClusterID: cid,
				Spec: json.RawMessage(`{"platform":{"azure":{"vmSize":"Standard_D4s_v5"}},"nodeCount":2,"zones":["1"]}`)}); err != nil {
				b.Fatal(err)
			}
		}
	}
	stop := w.start("bench")
	defer stop()
	w.waitFor(5*time.Minute, func() (bool, string) {
		_, ready, err := w.svc.Store.NodePools(context.Background(), kpool.NodePoolFilter{Phase: kpool.PhaseReady, Page: kpool.Page{Limit: 1}})
		if err != nil {
			return false, err.Error()
		}
		return ready == 1000, fmt.Sprintf("%d of 1000 Ready", ready)
	})
	converge := time.Since(start)
	calls := len(w.sim.Calls())
	b.ReportMetric(converge.Seconds(), "s-to-converge")
	b.ReportMetric(float64(calls)/1000, "calls/pool-to-converge")
	// A settled resync: every cluster once more (ResyncSlow is 1s in the
	// test controller); count the calls of the next few seconds.
	before := len(w.sim.Calls())
	window := 5 * time.Second
	time.Sleep(window)                // a benchmark measures over a window of time
	resyncs := window.Seconds() / 1.0 // one slow resync a second per cluster
	b.ReportMetric(float64(len(w.sim.Calls())-before)/1000/resyncs, "calls/pool/resync")
}

package reconcile_test

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/store/testdb"
)

// TestWritesYield: a pass over a cluster with many pools to create stops
// at WritesPerPass and gives its worker to the cluster queued behind it,
// then comes again at once to go on where it stopped: with one worker, the
// other cluster's create is sent between the first cluster's, not after
// all of them, and every pool is created once.
func TestWritesYield(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) { writesYield(t) })
}

func writesYield(t *testing.T) {
	w := newWorld(t, testdb.SQLite(t), fleetPT)
	other := w.addCluster("other")
	var ids []string
	for i := range 7 {
		ids = append(ids, w.createPool(fmt.Sprintf("p%d", i), 1).ID)
	}
	ids = append(ids, w.createPoolIn(other, "q", 1).ID)
	stop := w.start("a", func(c *reconcile.Config) { c.Workers, c.WritesPerPass = 1, 3 })
	defer stop()
	for _, id := range ids {
		w.until(10*time.Minute, w.ready(id))
	}

	var order []string // the clusters of the creates, in order
	for _, c := range w.drv.Calls() {
		if c.Op == fake.Create && c.Err == nil {
			order = append(order, c.Cluster)
		}
	}
	want := []string{w.cluster.ID, w.cluster.ID, w.cluster.ID, other.ID, w.cluster.ID, w.cluster.ID, w.cluster.ID, w.cluster.ID}
	if !slices.Equal(order, want) {
		t.Fatalf("creates by cluster %v, want the other cluster's fourth: %v", order, want)
	}
	if n := w.calls(fake.Create, ""); n != len(ids) {
		t.Fatalf("%d creates for %d pools", n, len(ids))
	}
}

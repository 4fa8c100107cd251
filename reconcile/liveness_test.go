package reconcile_test

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/store/testdb"
)

// eightWorkers runs a controller with kpool's default worker count.
func eightWorkers(c *reconcile.Config) { c.Workers = 8 }

// TestDeadEndpointsFirstContact (N6): forty clusters whose endpoints
// accept calls and never answer, registered at once, do not hold up a
// healthy cluster's scale at first contact, nor after a restart: the
// controllers keep workers for clusters not known to hang, and remember
// in the store which clusters did.
func TestDeadEndpointsFirstContact(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := testdb.SQLite(t)
		w := newWorld(t, st, kpool.PlatformAzure)
		stop := w.start("a", eightWorkers)
		defer func() { stop() }()
		p := w.createPool("web", 2)
		w.until(5*time.Minute, w.ready(p.ID))
		scale := func(n int) time.Duration {
			start := w.clock.Now()
			w.patch(p.ID, fmt.Sprintf(`{"nodeCount":%d}`, n))
			w.until(10*time.Minute, w.ready(p.ID))
			return w.clock.Since(start)
		}
		alone := scale(3)

		for i := range 40 {
			c := w.addCluster(fmt.Sprintf("tarpit-%d", i))
			w.drv.Hang(c, true)
			w.createPoolIn(c, "stuck", 1)
		}
		if took := scale(4); took > 2*alone {
			t.Fatalf("first contact with 40 dead endpoints: the scale took %v, %v alone", took, alone)
		}
		w.advance(3 * time.Minute) // every dead endpoint has run out of time once
		stop()
		stop = w.start("b", eightWorkers)
		if took := scale(5); took > 2*alone {
			t.Fatalf("after a restart beside 40 dead endpoints: the scale took %v, %v alone", took, alone)
		}
	})
}

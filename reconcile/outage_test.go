package reconcile_test

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/store/testdb"
)

// TestHangingEndpoints (case 2): clusters whose endpoint accepts calls and
// never answers cannot hold the provider's slots: a scale on a healthy
// cluster is applied as fast as without them.
func TestHangingEndpoints(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		stop := w.start("a")
		defer stop()
		p := w.createPool("web", 2)
		w.until(5*time.Minute, w.ready(p.ID))
		// Fault-free: the time a scale takes.
		start := w.clock.Now()
		w.patch(p.ID, `{"nodeCount":3}`)
		w.until(5*time.Minute, w.ready(p.ID))
		alone := w.clock.Since(start)

		// More hanging clusters than the provider has slots (4).
		for i := range 6 {
			c := w.addCluster(fmt.Sprintf("tarpit-%d", i))
			w.drv.Hang(c, true)
			w.createPoolIn(c, "stuck", 1)
		}
		w.advance(2 * time.Minute) // they have all run out of time at least once
		start = w.clock.Now()
		w.patch(p.ID, `{"nodeCount":4}`)
		w.until(5*time.Minute, w.ready(p.ID))
		if took := w.clock.Since(start); took > 2*alone {
			t.Fatalf("the scale took %v beside hanging endpoints, %v alone", took, alone)
		}
		hung := 0
		for _, c := range w.drv.Calls() {
			if c.Fault == fake.FaultHang {
				hung++
			}
		}
		if hung < 6 {
			t.Fatalf("%d calls hung; the test must exercise the hanging endpoints", hung)
		}
	})
}

// TestPoolErrorsStayWithThePool (case 3): a pool whose calls keep failing
// is retried with its own backoff; the cluster's other pools progress at
// their own pace, not at the failing pool's.
func TestPoolErrorsStayWithThePool(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		stop := w.start("a", func(c *reconcile.Config) { c.BackoffBase, c.BackoffMax = time.Second, 5*time.Minute })
		defer stop()
		bad := w.createPool("bad", 1)
		w.drv.FailPool(fake.Create, bad.ProviderName, &provider.Error{Kind: provider.KindTransient, Provider: kpool.PlatformAzure, Reason: "internal error"})
		w.advance(15 * time.Minute) // its backoff is at the maximum
		good := w.createPool("good", 1)
		start := w.clock.Now()
		w.until(5*time.Minute, w.ready(good.ID))
		// A create takes 40s at the fake; a resync comes every 10s.
		if took := w.clock.Since(start); took > time.Minute {
			t.Fatalf("a healthy pool took %v beside a failing one", took)
		}
		var at []time.Time
		for _, c := range w.drv.Calls() {
			if c.Op == fake.Create && c.ProviderName == bad.ProviderName {
				at = append(at, c.At)
			}
		}
		if len(at) < 5 || len(at) > 20 {
			t.Fatalf("%d creates of the failing pool in 15m; want its own exponential backoff", len(at))
		}
		if gap := at[len(at)-1].Sub(at[len(at)-2]); gap < 2*time.Minute {
			t.Fatalf("the failing pool was retried %v apart at the end; its backoff did not grow", gap)
		}
		if got := condition(w.report(bad.ID), kpool.ConditionReady); got != "False Retrying" {
			t.Fatalf("the failing pool reports Ready %q", got)
		}
		// Its error ends: it is created on its next turn.
		w.drv.FailPool(fake.Create, bad.ProviderName, nil)
		w.until(10*time.Minute, w.ready(bad.ID))
	})
}

// TestListOutageIsTransient (case 4): a cluster-wide outage (the List
// failing transiently, as when the credential's token endpoint is down)
// backs the cluster off and never marks its pools Failed.
func TestListOutageIsTransient(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		stop := w.start("a")
		defer stop()
		p := w.createPool("web", 1)
		w.until(5*time.Minute, w.ready(p.ID))
		w.drv.FailNext(fake.List, 6, &provider.Error{Kind: provider.KindTransient, Provider: kpool.PlatformAzure, Reason: "token endpoint unreachable"})
		w.patch(p.ID, `{"nodeCount":2}`)
		w.until(10*time.Minute, func() (bool, string) {
			if ph := w.pool(p.ID).Status.Phase; ph == kpool.PhaseFailed {
				t.Fatalf("an outage marked the pool Failed: %s", w.pool(p.ID).Status.Message)
			}
			return w.ready(p.ID)()
		})
	})
}

package reconcile_test

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/store/testdb"
)

// TestRetryAfter: a throttled call is not made again before the provider's
// Retry-After has passed, and is made once it has; for a list as for a
// create.
func TestRetryAfter(t *testing.T) {
	t.Parallel()
	for _, op := range []fake.Op{fake.List, fake.Create} {
		t.Run(string(op), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
				wait := 90 * time.Second
				w.drv.FailNext(op, 1, &provider.Error{Kind: provider.KindThrottled, Provider: kpool.PlatformAzure, Reason: "slow down", RetryAfter: wait})
				stop := w.start("a")
				defer stop()
				p := w.createPool("web", 1)
				w.until(time.Minute, func() (bool, string) { return w.calls(op, "") == 1, "no call yet" })
				first := w.clock.Now()
				w.until(5*time.Minute, func() (bool, string) { return w.calls(op, "") >= 2, "not called again" })
				if waited := w.clock.Since(first); waited < wait || waited > wait+tick {
					t.Fatalf("called again after %v; Retry-After was %v", waited, wait)
				}
				w.until(5*time.Minute, w.ready(p.ID))
			})
		})
	}
}

// TestBackoff: a call that keeps failing with a transient error is retried
// after delays that double from BackoffBase (half fixed, half jitter), and
// the first success resets them.
func TestBackoff(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		fail := &provider.Error{Kind: provider.KindTransient, Provider: kpool.PlatformAzure, Reason: "try again"}
		w.drv.FailNext(fake.Create, 4, fail)
		base := 10 * time.Second
		stop := w.start("a", func(c *reconcile.Config) { c.BackoffBase, c.BackoffMax = base, 5*time.Minute })
		defer stop()
		p := w.createPool("web", 1)
		w.until(10*time.Minute, w.ready(p.ID))
		var at []time.Time
		for _, c := range w.drv.Calls() {
			if c.Op == fake.Create {
				at = append(at, c.At)
			}
		}
		if len(at) != 5 {
			t.Fatalf("%d creates, want 4 failures and a success", len(at))
		}
		for i := 1; i < len(at); i++ {
			delay := base << (i - 1)
			if got := at[i].Sub(at[i-1]); got < delay/2 || got > delay+tick {
				t.Fatalf("retry %d after %v, want %v to %v", i, got, delay/2, delay)
			}
		}
		if got := condition(w.report(p.ID), kpool.ConditionReady); got != "True NodesReady" {
			t.Fatalf("Ready %q", got)
		}
	})
}

// TestConvergesUnderFaults: 100 pools, scale 50, relabel 25, delete 25, with
// a 20% fault rate (refusals, lost replies, failed operations) and
// throttling; every pool converges, none is created twice, no delete is
// left undone, no status runs ahead of its generation.
func TestConvergesUnderFaults(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		w.drv.SetFaultRate(0.2)
		w.drv.SetRateLimit(1, 1) // throttle hard until throttling is seen
		stop := w.start("a", func(c *reconcile.Config) { c.BackoffMax = 30 * time.Second })
		defer stop()
		runWorkload(t, w, func() {
			w.until(10*time.Minute, func() (bool, string) {
				n := faults(w, fake.FaultThrottled)
				return n >= 10, fmt.Sprintf("%d throttled calls", n)
			})
			w.drv.SetRateLimit(250, 25)
		})
		if ahead := w.warns.matching("ahead"); len(ahead) > 0 {
			t.Fatalf("reports ahead of the generation: %v", ahead)
		}
		all, throttled := faults(w, ""), faults(w, fake.FaultThrottled)
		if all == throttled || throttled == 0 || faults(w, fake.FaultLostReply) == 0 {
			t.Fatalf("the run saw %d faults, %d throttled calls, %d lost replies; the test must exercise them", all, throttled, faults(w, fake.FaultLostReply))
		}
		t.Logf("%d provider calls, %d faulted, %d throttled, %v on the clock", len(w.drv.Calls()), all, throttled, w.clock.Since(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)))
	})
}

// faults counts the calls with a fault of a kind ("": any).
func faults(w *world, kind fake.Fault) int {
	n := 0
	for _, c := range w.drv.Calls() {
		if c.Fault != "" && (kind == "" || c.Fault == kind) {
			n++
		}
	}
	return n
}

// workloadWorld is a world runWorkload drives: the fake's, on its clock,
// or the AKS emulator's, on the wall clock.
type workloadWorld interface {
	createPool(name string, count int, zones ...string) *kpool.NodePool
	patch(id, spec string)
	delete(id string)
	converged(gone map[string]string) func() (bool, string)
	// reach waits until cond holds.
	reach(cond func() (bool, string))
	noneCreatedTwice()
}

// reach moves the clock until cond holds.
func (w *world) reach(cond func() (bool, string)) { w.until(2*time.Hour, cond) }

// runWorkload creates 100 pools and changes them; mid, when set, runs
// after the creates are issued.
func runWorkload(t *testing.T, w workloadWorld, mid func()) {
	var pools []*kpool.NodePool
	for i := range 100 {
		zones := []string{fmt.Sprint(i%3 + 1)}
		if i%10 == 0 {
			zones = []string{"1", "2", "3"}
		}
		pools = append(pools, w.createPool(fmt.Sprintf("pool-%03d", i), 1+i%3, zones...))
	}
	if mid != nil {
		mid()
	}
	w.reach(w.converged(nil))
	gone := map[string]string{}
	for i, p := range pools {
		switch {
		case i < 50:
			w.patch(p.ID, fmt.Sprintf(`{"nodeCount":%d}`, 2+i%4))
		case i < 75:
			w.patch(p.ID, fmt.Sprintf(`{"labels":{"team":"t%d"}}`, i))
		default:
			w.delete(p.ID)
			gone[p.ID] = p.ProviderName
		}
	}
	w.reach(w.converged(gone))
	w.noneCreatedTwice()
}

// TestRestartMidway: the controller is stopped in the middle of a pass,
// after 30 creates, and a new one finishes the work, with no pool created
// twice.
func TestRestartMidway(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		w.drv.SetFaultRate(0.2)
		// Ten calls a second: a pass over 100 pools takes ten seconds on
		// the clock, and the first controller stops inside it.
		slow := func(c *reconcile.Config) {
			c.Limits = map[kpool.PlatformType]reconcile.Limits{kpool.PlatformAzure: {Concurrency: 4, RequestsPerSecond: 10, Burst: 10}}
			c.BackoffMax = 30 * time.Second
		}
		stop := w.start("first", slow)
		runWorkload(t, w, func() {
			w.until(10*time.Minute, func() (bool, string) {
				n := w.calls(fake.Create, "")
				return n >= 30, fmt.Sprintf("%d creates so far", n)
			})
			if n := w.calls(fake.Create, ""); n >= 100 {
				t.Fatalf("%d creates before the restart; the first controller must stop midway", n)
			}
			stop()
			stop = w.start("second", slow)
		})
		stop()
	})
}

// TestReconcileResults: kpool_reconciles_total tells a pass that follows an
// operation, or waits for a retry, from one that failed: a pool whose
// create fails once and then succeeds counts one pool_failed, passes that
// follow its create, and ok once it is Ready; a create the provider
// refuses counts pool_failed once (the generation is not tried again); a
// cluster the provider refuses counts unreachable; none counts error.
func TestReconcileResults(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		w.drv.FailNext(fake.Create, 1, &provider.Error{Kind: provider.KindTransient, Provider: kpool.PlatformAzure, Reason: "try again"})
		stop := w.start("a", func(c *reconcile.Config) { c.DriftInterval = time.Minute })
		defer stop()
		p := w.createPool("web", 1)
		w.until(10*time.Minute, w.ready(p.ID))
		w.advance(2 * time.Minute)
		got := w.results()
		if got[reconcile.ResultPoolFailed] != 1 || got[reconcile.ResultFollowing] == 0 || got[reconcile.ResultOK] == 0 || got[reconcile.ResultError] != 0 {
			t.Fatalf("results %v: want one pool_failed, some following and ok, no error", got)
		}
		w.drv.FailNext(fake.Create, 1, &provider.Error{Kind: provider.KindValidation, Provider: kpool.PlatformAzure, Reason: "no such size"})
		w.createPool("batch", 1)
		w.advance(2 * time.Minute)
		if got := w.results(); got[reconcile.ResultPoolFailed] != 2 {
			t.Fatalf("results %v: want a second pool_failed, for the refused create", got)
		}
		w.drv.FailNext(fake.List, 1, &provider.Error{Kind: provider.KindPermissionDenied, Provider: kpool.PlatformAzure, Reason: "no"})
		w.advance(2 * time.Minute)
		if got := w.results(); got[reconcile.ResultUnreachable] != 1 || got[reconcile.ResultError] != 0 {
			t.Fatalf("results %v: want one unreachable, no error", got)
		}
		for result := range w.results() {
			if !slices.Contains(reconcile.Results, result) {
				t.Errorf("result %q is not in reconcile.Results", result)
			}
		}
	})
}

// results is kpool_reconciles_total by result.
func (w *world) results() map[string]float64 {
	out := map[string]float64{}
	for _, m := range w.family("kpool_reconciles_total") {
		out[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
	}
	return out
}

// TestBusyCluster: a cluster that takes one operation at a time (GKE)
// refuses a create while another runs. Its pools are created one after
// another at the pace of following the operations, without backoff
// growing between them, and a pass sends at most one create the cloud
// refuses: the others of the pass wait without a call.
func TestBusyCluster(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		w.drv.OneOperationAtATime(true)
		const pools = 6
		stop := w.start("a", func(c *reconcile.Config) { c.BackoffBase, c.BackoffMax = 10*time.Second, 5*time.Minute })
		defer stop()
		var ids []string
		for i := range pools {
			ids = append(ids, w.createPool(fmt.Sprintf("p%d", i), 1).ID)
		}
		start := w.clock.Now()
		for _, id := range ids {
			w.until(10*time.Minute, w.ready(id))
		}
		took := w.clock.Since(start)
		accepted, refused := 0, 0
		for _, c := range w.drv.Calls() {
			if c.Op != fake.Create {
				continue
			}
			if provider.IsBusy(c.Err) {
				refused++
			} else if c.Err == nil {
				accepted++
			}
		}
		if accepted != pools {
			t.Fatalf("%d creates accepted, want %d", accepted, pools)
		}
		// Each operation is followed every ResyncFast (10s by default):
		// one refusal at most per pass while one runs.
		// The fake's create of one node: 30s, and 10s for the node.
		perOp := 40*time.Second + 10*time.Second + tick
		if took > time.Duration(pools)*perOp {
			t.Errorf("%d pools one at a time took %v, want at most %v (no backoff between them)", pools, took, time.Duration(pools)*perOp)
		}
		if passes := int(took/(10*time.Second)) + 1; refused > passes {
			t.Errorf("%d creates refused busy in about %d passes: more than one a pass", refused, passes)
		}
		t.Logf("%d pools in %v: %d creates refused busy", pools, took, refused)
	})
}

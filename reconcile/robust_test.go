package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/store/testdb"
)

// The tests here are the cases of issue 11: controllers that no cloud, pool
// or endpoint can stall, that never orphan a pool, and that say why. Each
// failed on the controllers as they were before it.

// addCluster registers another cluster of the world's platform.
func (w *world) addCluster(name string) *kpool.Cluster {
	w.t.Helper()
	spec := strings.Replace(platforms[w.cluster.Spec.Platform.Type].cluster, "aks-prod", "aks-"+name, 1)
	c, err := w.svc.CreateCluster(w.ctx(), service.ClusterCreate{Name: name, Spec: json.RawMessage(spec)})
	if err != nil {
		w.t.Fatal(err)
	}
	return c
}

// createPoolIn creates a pool in another cluster of the world.
func (w *world) createPoolIn(c *kpool.Cluster, name string, count int) *kpool.NodePool {
	w.t.Helper()
	spec := fmt.Sprintf(`{"platform":%s,"nodeCount":%d}`, w.block, count)
	p, err := w.svc.CreateNodePool(w.ctx(), service.NodePoolCreate{Name: name, ClusterID: c.ID, Spec: json.RawMessage(spec)})
	if err != nil {
		w.t.Fatal(err)
	}
	return p
}

// hooked runs a function in the middle of each create, after the
// controller decided to create and before the provider answers.
type hooked struct {
	provider.Driver
	mu       sync.Mutex
	onCreate func()
}

func (h *hooked) NodePoolCreate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	h.mu.Lock()
	f := h.onCreate
	h.onCreate = nil
	h.mu.Unlock()
	out, err := h.Driver.NodePoolCreate(ctx, c, s)
	if f != nil {
		f()
	}
	return out, err
}

// TestDeleteWhileCreating (case 1): a pool deleted while its create is on
// its way to the provider is deleted there before its record goes; never
// left behind. The API's DELETE finds the controller's report of the
// create and answers Deleting, not gone.
func TestDeleteWhileCreating(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		h := &hooked{Driver: w.drv}
		w.drivers.Add(h)
		var p *kpool.NodePool
		var gone bool
		h.onCreate = func() {
			var err error
			_, gone, err = w.svc.DeleteNodePool(w.ctx(), p.ID, service.Delete{})
			if err != nil {
				t.Error(err)
			}
		}
		stop := w.start("a")
		defer stop()
		p = w.createPool("web", 2, "1")
		w.until(5*time.Minute, func() (bool, string) {
			_, atProvider := w.drv.Pool(w.cluster, p.ProviderName)
			return w.pool(p.ID) == nil && !atProvider, fmt.Sprintf("record there %v, at the provider %v", w.pool(p.ID) != nil, atProvider)
		})
		if gone {
			t.Fatal("DELETE removed the record at once while the create was on its way")
		}
		if w.calls(fake.Create, p.ProviderName) != 1 || w.calls(fake.Delete, p.ProviderName) != 1 {
			t.Fatalf("%d creates and %d deletes, want 1 and 1", w.calls(fake.Create, p.ProviderName), w.calls(fake.Delete, p.ProviderName))
		}
	})
}

// TestDeleteBeforeCreate (case 1): a pool deleted before any controller
// acted on it goes at once, and no create is ever sent for it.
func TestDeleteBeforeCreate(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		w.drv.Hang(w.cluster, true) // the controller lists and waits
		stop := w.start("a")
		defer stop()
		p := w.createPool("web", 1)
		w.settle()
		if _, gone, err := w.svc.DeleteNodePool(w.ctx(), p.ID, service.Delete{}); err != nil || !gone {
			t.Fatalf("DELETE of a pool no controller acted on: gone %v, %v", gone, err)
		}
		w.drv.Hang(w.cluster, false)
		w.advance(5 * time.Minute)
		if n := w.calls(fake.Create, ""); n != 0 {
			t.Fatalf("%d creates for a pool deleted before any", n)
		}
	})
}

// TestCreateInFlightIsWaitedFor (case 1): when the create's answer was
// lost (the provider may make the pool later), a delete waits out the call
// deadline before it calls the pool gone, then deletes what appeared.
func TestCreateInFlightIsWaitedFor(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		w.drv.Hang(w.cluster, true)
		stop := w.start("a", func(c *reconcile.Config) { c.CallTimeout = 30 * time.Second })
		defer stop()
		p := w.createPool("web", 1)
		// The list hangs; when it is cut off, the endpoint answers again
		// but the create hangs in turn.
		w.until(time.Minute, func() (bool, string) {
			return w.calls(fake.List, "") >= 1, "no list"
		})
		w.drv.Hang(w.cluster, false)
		w.until(5*time.Minute, func() (bool, string) {
			return metaString(w.report(p.ID), "create_sent_at") != "", "no create reported"
		})
		w.drv.Hang(w.cluster, true)
		w.settle()
		w.delete(p.ID)
		w.advance(10 * time.Second)
		if w.pool(p.ID) == nil {
			t.Fatal("the record went while the create could still reach the provider")
		}
		w.drv.Hang(w.cluster, false)
		w.until(5*time.Minute, func() (bool, string) { return w.pool(p.ID) == nil, "still in kpool" })
		if _, ok := w.drv.Pool(w.cluster, p.ProviderName); ok {
			t.Fatal("the pool was left at the provider")
		}
	})
}

func metaString(cs *kpool.ControllerStatus, key string) string {
	s, _ := meta(cs)[key].(string)
	return s
}

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

// TestDriftWithinInterval (case 7): a change made at the provider behind
// kpool's back is reported within the drift interval (default one
// minute), with one List per cluster per interval.
func TestDriftWithinInterval(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		stop := w.start("a")
		defer stop()
		var pools []*kpool.NodePool
		for i := range 20 {
			pools = append(pools, w.createPool(fmt.Sprintf("p%02d", i), 1))
		}
		w.until(10*time.Minute, w.converged(nil))
		w.advance(2 * time.Minute) // settled
		lists := w.calls(fake.List, "")
		w.advance(5 * time.Minute)
		if n := w.calls(fake.List, "") - lists; n < 4 || n > 6 {
			t.Fatalf("%d lists in 5 minutes of a settled cluster of 20 pools, want 5: one per minute", n)
		}
		if err := w.drv.Mutate(w.cluster, pools[7].ProviderName, func(s *provider.PoolSpec) { s.Count = 4 }); err != nil {
			t.Fatal(err)
		}
		changed := w.clock.Now()
		w.until(2*time.Minute, func() (bool, string) {
			rp := w.report(pools[7].ID)
			return condition(rp, kpool.ConditionDrifted) == "True ChangedAtProvider" || w.calls(fake.Update, pools[7].ProviderName) > 0,
				"drift not seen"
		})
		if seen := w.clock.Since(changed); seen > time.Minute+tick {
			t.Fatalf("drift seen after %v, want within the 1m interval", seen)
		}
	})
}

// TestProgressWhileOpaque (case 8): a provider that does not count ready
// nodes during an operation (ARM) is not reported as having none: a scale
// from 3 to 5 shows 3 until it ends, then 5.
func TestProgressWhileOpaque(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		w.drv = fake.New(fake.Options{Platform: kpool.PlatformAzure, Clock: w.clock, Seed: 1, Opaque: true})
		w.drivers.Add(w.drv)
		stop := w.start("a")
		defer stop()
		p := w.createPool("web", 3)
		w.until(5*time.Minute, w.ready(p.ID))
		w.patch(p.ID, `{"nodeCount":5}`)
		var seen []float64
		w.until(5*time.Minute, func() (bool, string) {
			m := meta(w.report(p.ID))
			if n, ok := m["active_nodes"].(float64); ok && (len(seen) == 0 || seen[len(seen)-1] != n) {
				seen = append(seen, n)
			}
			return w.ready(p.ID)()
		})
		for _, n := range seen {
			if n < 3 {
				t.Fatalf("ready nodes went %v during a scale from 3 to 5", seen)
			}
		}
		if seen[len(seen)-1] != 5 {
			t.Fatalf("ready nodes went %v, want 5 at the end", seen)
		}
	})
}

// TestFailedOperationSaysWhy (case 9): a pool whose operation failed at the
// provider reports the provider's reason, and is repaired with backoff.
func TestFailedOperationSaysWhy(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		stop := w.start("a")
		defer stop()
		p := w.createPool("web", 1)
		w.until(5*time.Minute, w.ready(p.ID))
		w.drv.FailOperations(fake.Update, 3)
		w.patch(p.ID, `{"nodeCount":2}`)
		w.until(5*time.Minute, func() (bool, string) {
			msg := w.pool(p.ID).Status.Message
			return strings.Contains(msg, "AllocationFailed"), "status message: " + msg
		})
		w.until(30*time.Minute, w.ready(p.ID))
		if n := w.calls(fake.Update, p.ProviderName); n != 4 {
			t.Fatalf("%d updates, want the change and 3 repairs", n)
		}
	})
}

// TestBusyPoolIsNotWritten (case 10): a pool in an operation kpool did not
// start, in a state the driver reports as busy or does not know, is waited
// on: no write until it ends; then the change is applied.
func TestBusyPoolIsNotWritten(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		state         provider.State
		providerState string
	}{
		{provider.StateUpdating, "UpgradingNodeImageVersion"},
		{provider.StateUnknown, "Migrating"},
	} {
		t.Run(tc.providerState, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
				stop := w.start("a")
				defer stop()
				p := w.createPool("web", 1)
				w.until(5*time.Minute, w.ready(p.ID))
				if err := w.drv.Operate(w.cluster, p.ProviderName, tc.state, tc.providerState, 5*time.Minute); err != nil {
					t.Fatal(err)
				}
				w.patch(p.ID, `{"nodeCount":2}`)
				w.advance(4 * time.Minute)
				if n := w.calls(fake.Update, p.ProviderName); n != 0 {
					t.Fatalf("%d updates sent into a busy pool", n)
				}
				if msg := w.pool(p.ID).Status.Message; !strings.Contains(msg, tc.providerState) {
					t.Fatalf("the pool's status does not say what it is busy with: %q", msg)
				}
				w.until(5*time.Minute, w.ready(p.ID))
				if fp, _ := w.drv.Pool(w.cluster, p.ProviderName); fp.Count != 2 {
					t.Fatalf("count %d after the operation ended, want 2", fp.Count)
				}
			})
		})
	}
}

// TestStateIsPruned (case 12): what the controllers keep per pool follows
// the stored pools down when they are deleted, and when their cluster is.
func TestStateIsPruned(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		stop := w.start("a")
		defer stop()
		var pools []*kpool.NodePool
		for i := range 30 {
			pools = append(pools, w.createPool(fmt.Sprintf("p%02d", i), 1))
		}
		w.until(10*time.Minute, w.converged(nil))
		if n := w.gauge("kpool_controller_tracked_pools"); n != 30 {
			t.Fatalf("%v pools tracked, want 30", n)
		}
		gone := map[string]string{}
		for _, p := range pools[:20] {
			w.delete(p.ID)
			gone[p.ID] = p.ProviderName
		}
		w.until(10*time.Minute, w.converged(gone))
		w.advance(2 * time.Minute)
		if n := w.gauge("kpool_controller_tracked_pools"); n != 10 {
			t.Fatalf("%v pools tracked after 20 of 30 went, want 10", n)
		}
		// A cluster deleted with its pools.
		if _, _, err := w.svc.DeleteCluster(w.ctx(), w.cluster.ID, service.Delete{Force: true}); err != nil {
			t.Fatal(err)
		}
		w.until(10*time.Minute, func() (bool, string) {
			return w.gauge("kpool_controller_tracked_pools") == 0, fmt.Sprintf("%v pools tracked", w.gauge("kpool_controller_tracked_pools"))
		})
	})
}

// TestRepairFailedCreate (case 6): a pool whose create the provider
// refused exists nowhere, so every field of it may change, zones included
// (which AKS cannot change in place); the controller then creates it.
func TestRepairFailedCreate(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		stop := w.start("a")
		defer stop()
		p := w.createPool("web", 1, "3")
		w.drv.FailPool(fake.Create, p.ProviderName, provider.ValidationError(kpool.PlatformAzure, "spec.zones", "zone 3 has no capacity for Standard_D4s_v5"))
		w.until(time.Minute, func() (bool, string) {
			got := w.pool(p.ID)
			return got.Status.Phase == kpool.PhaseFailed, string(got.Status.Phase)
		})
		if e := w.report(p.ID).Meta().Exists; e == nil || *e {
			t.Fatalf("a refused create reports exists=%v, want false", e)
		}
		w.drv.FailPool(fake.Create, p.ProviderName, nil)
		w.patch(p.ID, `{"zones":["1"]}`)
		w.until(5*time.Minute, w.ready(p.ID))
		if fp, _ := w.drv.Pool(w.cluster, p.ProviderName); len(fp.Zones) != 1 || fp.Zones[0] != "1" {
			t.Fatalf("created in zones %v, want [1]", fp.Zones)
		}
		// Once it exists, the zones are AKS's to keep.
		if _, err := w.svc.UpdateNodePool(w.ctx(), p.ID, service.Update{Patch: true, Spec: json.RawMessage(`{"zones":["2"]}`)}); err == nil {
			t.Fatal("the zones of an existing AKS pool changed in place")
		}
	})
}

// TestNoDriverSaysSo (case 5): a pool on a platform with no driver in this
// kpool says that no controller here acts on it, and an external
// controller's report still drives it.
func TestNoDriverSaysSo(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := testdb.SQLite(t)
		w := newWorld(t, st, kpool.PlatformAzure)
		// A registry without the fake: azure has no driver here.
		bare := catalog.Registry()
		w.svc = service.New(st, bare)
		stop := w.start("a", func(c *reconcile.Config) { c.Drivers = bare })
		defer stop()
		p := w.createPool("web", 1)
		w.advance(time.Minute)
		got := w.pool(p.ID)
		if got.Status.Phase != kpool.PhasePending || !strings.Contains(got.Status.Message, "no controller in this kpool") {
			t.Fatalf("%s: %q; want Pending, saying no controller acts", got.Status.Phase, got.Status.Message)
		}
		if n := len(w.drv.Calls()); n != 0 {
			t.Fatalf("%d provider calls without a driver", n)
		}
		ext := kpool.WithIdentity(context.Background(), &kpool.Identity{Email: "ext@example.com", Controller: true})
		if _, err := w.svc.ReportNodePoolStatus(ext, p.ID, kpool.ControllerStatus{ControllerName: "external", ObservedGeneration: p.Generation,
			Conditions: []kpool.Condition{{Type: kpool.ConditionReady, Status: kpool.ConditionTrue, Reason: "NodesReady"}}}); err != nil {
			t.Fatal(err)
		}
		if got := w.pool(p.ID); got.Status.Phase != kpool.PhaseReady {
			t.Fatalf("after an external report: %s %q", got.Status.Phase, got.Status.Message)
		}
	})
}

// unreadPools is a driver whose list reports some pools as not read (the
// provider's answer for them failed, as an EKS describe can), State
// Unknown with no provider state.
type unreadPools struct {
	*fake.Driver
	unread atomic.Value // string: a provider name
}

func (u *unreadPools) NodePoolList(ctx context.Context, c *kpool.Cluster) ([]provider.Pool, error) {
	pools, err := u.Driver.NodePoolList(ctx, c)
	for i := range pools {
		if name, _ := u.unread.Load().(string); pools[i].ProviderName == name {
			pools[i] = provider.Pool{PoolSpec: provider.PoolSpec{ProviderName: name}, State: provider.StateUnknown, ReadyUnknown: true, Message: "describe failed"}
		}
	}
	return pools, err
}

// TestUnreadPoolKeepsItsReport: a pool the provider's list could not read
// this time keeps its last report (Ready stays Ready) instead of flapping
// to an unknown state, and is read again.
func TestUnreadPoolKeepsItsReport(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		u := &unreadPools{Driver: fake.New(fake.Options{Platform: kpool.PlatformAzure, Clock: w.clock, Seed: 1})}
		w.drv = u.Driver
		w.drivers.Add(u)
		stop := w.start("a")
		defer stop()
		p := w.createPool("web", 2)
		w.until(5*time.Minute, w.ready(p.ID))
		before := w.report(p.ID)
		u.unread.Store(p.ProviderName)
		for end := w.clock.Now().Add(5 * time.Minute); w.clock.Now().Before(end); w.clock.Step(tick) {
			w.settle() // several drift passes
		}
		if after := w.report(p.ID); !after.UpdatedAt.Equal(before.UpdatedAt) || w.pool(p.ID).Status.Phase != kpool.PhaseReady {
			t.Fatalf("an unread pool's report changed: %+v, phase %s", after, w.pool(p.ID).Status.Phase)
		}
		u.unread.Store("")
		w.patch(p.ID, `{"nodeCount":3}`)
		w.until(5*time.Minute, w.ready(p.ID))
	})
}

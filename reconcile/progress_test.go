package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
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

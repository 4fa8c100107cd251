package reconcile_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/store/testdb"
)

// TestDeadLeaderExpires: a lease left by a process that died keeps the
// controllers idle until it expires; then they take it and act.
func TestDeadLeaderExpires(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := testdb.SQLite(t)
		if held, err := st.AcquireLease(context.Background(), reconcile.LeaseName, "dead", time.Minute); err != nil || !held {
			t.Fatal(held, err)
		}
		w := newWorld(t, st, kpool.PlatformAzure)
		stop := w.start("alive")
		defer stop()
		p := w.createPool("workers", 1)
		w.advance(2 * time.Minute)
		if n := len(w.drv.Calls()); n != 0 || w.pool(p.ID).Status.Phase != kpool.PhasePending {
			t.Fatalf("%d provider calls while another process holds the lease", n)
		}
		// The store times leases on its own clock, the wall clock, which
		// in this bubble is synctest's: sleeping moves it at once, and the
		// dead holder's minute runs out.
		time.Sleep(time.Minute + time.Second)
		w.until(5*time.Minute, w.ready(p.ID))
	})
}

// counting counts the calls a controller makes through its own registry.
type counting struct {
	provider.Driver
	mu sync.Mutex
	n  int
}

func (c *counting) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func (c *counting) add() {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
}

func (c *counting) NodePoolList(ctx context.Context, cl *kpool.Cluster) ([]provider.Pool, error) {
	c.add()
	return c.Driver.NodePoolList(ctx, cl)
}

func (c *counting) NodePoolCreate(ctx context.Context, cl *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	c.add()
	return c.Driver.NodePoolCreate(ctx, cl, s)
}

func (c *counting) NodePoolUpdate(ctx context.Context, cl *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	c.add()
	return c.Driver.NodePoolUpdate(ctx, cl, s)
}

func (c *counting) NodePoolDelete(ctx context.Context, cl *kpool.Cluster, name string) error {
	c.add()
	return c.Driver.NodePoolDelete(ctx, cl, name)
}

// TestOneHolder: two controllers on one store share the shards; the
// cluster is acted on by the holder of its shard alone; when that process
// stops, the other takes the shard over and finishes the work.
func TestOneHolder(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		drv := map[string]*counting{}
		stop := map[string]func(){}
		for _, h := range []string{"a", "b"} {
			drv[h] = &counting{Driver: w.drv}
			reg := catalog.Registry()
			reg.Add(drv[h])
			stop[h] = w.start(h, func(c *reconcile.Config) { c.Drivers = reg })
		}
		// b joined: a gives back half of the shards within a round or two.
		w.advance(10 * time.Second)
		p := w.createPool("first", 2, "1")
		w.until(5*time.Minute, w.converged(nil))
		before := map[string]int{"a": drv["a"].count(), "b": drv["b"].count()}
		w.patch(p.ID, `{"nodeCount":3}`)
		w.until(5*time.Minute, w.converged(nil))
		holder, other := "a", "b"
		if drv["b"].count() > before["b"] {
			holder, other = "b", "a"
		}
		if drv[holder].count() == before[holder] || drv[other].count() != before[other] {
			t.Fatalf("calls since the patch: a %d, b %d; want the shard's holder's alone",
				drv["a"].count()-before["a"], drv["b"].count()-before["b"])
		}
		stop[holder]()
		q := w.createPool("second", 1)
		w.patch(p.ID, `{"nodeCount":4}`)
		w.until(5*time.Minute, w.converged(nil))
		if _, ok := w.drv.Pool(w.cluster, q.ProviderName); !ok || drv[other].count() == before[other] {
			t.Fatalf("%s did not take over: %d calls", other, drv[other].count())
		}
		stop[other]()
		w.noneCreatedTwice()
	})
}

// flakyReports is a store whose reads of a pool's controller reports fail
// when told to.
type flakyReports struct {
	kpool.Store
	mu    sync.Mutex
	fail  map[string]int // pool id → reads still to fail
	reads map[string]int // pool id → reads
}

func (s *flakyReports) ControllerStatuses(ctx context.Context, poolID string) ([]kpool.ControllerStatus, error) {
	s.mu.Lock()
	s.reads[poolID]++
	failing := s.fail[poolID] > 0
	if failing {
		s.fail[poolID]--
	}
	s.mu.Unlock()
	if failing {
		return nil, fmt.Errorf("store: reading the reports of %s: connection reset", poolID)
	}
	return s.Store.ControllerStatuses(ctx, poolID)
}

func (s *flakyReports) failNext(poolID string) (reads int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[poolID]++
	return s.reads[poolID]
}

func (s *flakyReports) readsOf(poolID string) (reads, failing int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads[poolID], s.fail[poolID]
}

// TestReportReadFails: when the last report cannot be read, the controller
// retries the cluster rather than acting as if there were none; a create
// the provider refused is not sent again.
func TestReportReadFails(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := &flakyReports{Store: testdb.SQLite(t), fail: map[string]int{}, reads: map[string]int{}}
		w := newWorld(t, st, kpool.PlatformAzure)
		w.drv.FailNext(fake.Create, 1, provider.ValidationError(kpool.PlatformAzure, "spec.platform.azure.vmSize", "not offered in westeurope"))
		stop := w.start("a")
		defer stop()
		p := w.createPool("web", 1)
		w.until(time.Minute, func() (bool, string) {
			return w.pool(p.ID).Status.Phase == kpool.PhaseFailed, string(w.pool(p.ID).Status.Phase)
		})
		before := st.failNext(p.ID)
		// The next resync's read fails; the cluster is retried, and the
		// retry reads the report and leaves the refused create alone.
		w.advance(6 * time.Minute)
		reads, failing := st.readsOf(p.ID)
		if failing != 0 || reads < before+2 {
			t.Fatalf("%d reads since the failure was set (%d still to fail); want the failed one and a retry", reads-before, failing)
		}
		if n := w.calls(fake.Create, ""); n != 1 {
			t.Fatalf("%d creates; a refused create was sent again after a failed read", n)
		}
		if got := w.pool(p.ID).Status.Phase; got != kpool.PhaseFailed {
			t.Fatalf("phase %s, want Failed", got)
		}
	})
}

// leaseTrouble is a store whose leases can be taken by another process
// (as the listing says) or fail (as when the database is unreachable) for
// a holder; it counts the holder's renewals.
type leaseTrouble struct {
	kpool.Store
	mu       sync.Mutex
	acquires map[string]int
	trouble  map[string]string // holder → "taken" or "unreachable"
}

func (s *leaseTrouble) troubleOf(holder string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.trouble[holder]
}

func (s *leaseTrouble) RenewLeases(ctx context.Context, prefix, holder string, ttl time.Duration) (int, error) {
	s.mu.Lock()
	s.acquires[holder]++
	s.mu.Unlock()
	if s.troubleOf(holder) == "unreachable" {
		return 0, fmt.Errorf("store: connection refused")
	}
	return s.Store.RenewLeases(ctx, prefix, holder, ttl)
}

func (s *leaseTrouble) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	switch s.troubleOf(holder) {
	case "taken":
		return false, nil
	case "unreachable":
		return false, fmt.Errorf("store: connection refused")
	}
	return s.Store.AcquireLease(ctx, name, holder, ttl)
}

// Leases says, for a holder in trouble "taken", that another process holds
// every shard; for one in trouble "unreachable", nothing.
func (s *leaseTrouble) Leases(ctx context.Context, prefix string) ([]kpool.Lease, error) {
	ls, err := s.Store.Leases(ctx, prefix)
	for i, l := range ls {
		switch s.troubleOf(l.Holder) {
		case "unreachable":
			return nil, fmt.Errorf("store: connection refused")
		case "taken":
			if strings.Contains(l.Name, "/shard/") {
				ls[i].Holder = "other"
			}
		}
	}
	return ls, err
}

func (s *leaseTrouble) set(holder, trouble string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.trouble[holder] = trouble
}

func (s *leaseTrouble) count(holder string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.acquires[holder]
}

// TestLease: a lone process renews its leases (its membership and every
// shard) in one statement every LeaseTTL/3 on its clock; when its shards
// are taken, or cannot be renewed before they would expire, it stops
// acting at once, and acts again once it holds them again.
func TestLease(t *testing.T) {
	t.Parallel()
	tests := []struct {
		trouble string
		warning string
		within  time.Duration // when the leader must have stopped
	}{
		{"taken", "shard taken by another process", 4 * time.Second},
		{"unreachable", "shard lease could not be renewed in time", 10 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.trouble, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				st := &leaseTrouble{Store: testdb.SQLite(t), acquires: map[string]int{}, trouble: map[string]string{}}
				w := newWorld(t, st, kpool.PlatformAzure)
				stop := w.start("a")
				defer stop()
				p := w.createPool("web", 1)
				w.until(5*time.Minute, w.ready(p.ID))
				before := st.count("a")
				w.advance(time.Minute)
				// One every LeaseTTL/3 (3.3s), which a clock moving in
				// whole seconds makes every 4s.
				if n := st.count("a") - before; n < 15 || n > 19 {
					t.Fatalf("%d renewals in a minute, want one every 3.3 to 4s", n)
				}
				if w.gauge("kpool_controller_leader") != 1 || w.gauge("kpool_controller_shards") != 32 || w.gauge("kpool_controller_clusters") != 1 {
					t.Fatalf("a lone process holds %v shards, knows %v clusters, leads %v; want 32, 1, 1",
						w.gauge("kpool_controller_shards"), w.gauge("kpool_controller_clusters"), w.gauge("kpool_controller_leader"))
				}

				st.set("a", tc.trouble)
				w.advance(tc.within)
				if w.gauge("kpool_controller_leader") != 0 || w.gauge("kpool_controller_shards") != 0 || len(w.warns.matching(tc.warning)) == 0 {
					t.Fatalf("still leading %v after the lease was %s (warnings %v)", tc.within, tc.trouble, w.warns.matching(""))
				}
				calls := len(w.drv.Calls())
				w.patch(p.ID, `{"nodeCount":2}`)
				w.advance(time.Minute)
				if n := len(w.drv.Calls()) - calls; n != 0 {
					t.Fatalf("%d provider calls without the lease", n)
				}

				st.set("a", "")
				w.until(5*time.Minute, w.ready(p.ID))
				if fp, _ := w.drv.Pool(w.cluster, p.ProviderName); fp.Count != 2 {
					t.Fatalf("count %d at the provider once leading again, want 2", fp.Count)
				}
			})
		})
	}
}

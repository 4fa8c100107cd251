package reconcile_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/store/testdb"
)

// TestShards: three processes share the 32 shards evenly and handle every
// cluster, never one cluster or shard by two at once; one that stops gives
// its shards back to the others at once, and one that joins gets its share
// within a round or two. On SQLite, and on PostgreSQL when
// KPOOL_TEST_POSTGRES is set.
func TestShards(t *testing.T) {
	for name, open := range testdb.Stores() {
		t.Run(name, func(t *testing.T) {
			f := newFleet(t, open(t), 24, 2)
			for _, h := range []string{"a", "b", "c"} {
				f.start(h, f.st)
			}
			took := f.waitFor(30*time.Second, f.balanced)
			t.Logf("3 processes balanced %v after they started", took)
			took = f.waitFor(time.Minute, f.converged)
			t.Logf("48 pools in 24 clusters Ready %v later", took)

			f.procs["c"].stop()
			delete(f.procs, "c")
			took = f.waitFor(10*time.Second, f.balanced)
			t.Logf("c stopped: its shards with a and b after %v: shards %v, clusters %v", took, f.shards(), f.gauge("kpool_controller_clusters"))
			f.addPools("q")
			f.waitFor(time.Minute, f.converged)

			f.start("d", f.st)
			took = f.waitFor(10*time.Second, f.balanced)
			t.Logf("d joined: balanced after %v: shards %v, clusters %v", took, f.shards(), f.gauge("kpool_controller_clusters"))
			if took > 2*leaseTTL {
				t.Errorf("rebalancing took %v, more than two lease periods", took)
			}
			f.addPools("r")
			f.waitFor(time.Minute, f.converged)
			f.check()
		})
	}
}

// TestShardCrash: a process that dies without giving its shards back (its
// releases go nowhere) has them taken by the others within one lease
// period, and no pool it was creating is created twice.
func TestShardCrash(t *testing.T) {
	for name, open := range testdb.Stores() {
		t.Run(name, func(t *testing.T) {
			f := newFleet(t, open(t), 24, 1)
			// 2s: a busy machine's store latency is a smaller part of it.
			f.ttl = 2 * time.Second
			f.start("a", f.st)
			f.start("b", f.st)
			c := &dying{Store: f.st}
			f.start("c", c)
			f.waitFor(30*time.Second, f.balanced)
			f.waitFor(time.Minute, f.converged)
			held := f.shards()["c"]
			// Creates under way everywhere as c dies.
			f.addPools("q")
			c.dead.Store(true)
			f.procs["c"].stop()
			delete(f.procs, "c")
			took := f.waitFor(10*time.Second, f.balanced)
			t.Logf("c crashed holding %d shards: a and b hold them %v later: %v", held, took, f.shards())
			if took > f.ttl+f.ttl/3 {
				t.Errorf("c's shards moved %v after it died; want within one lease period (%v) and a round", took, f.ttl)
			}
			f.waitFor(time.Minute, f.converged)
			f.check()
		})
	}
}

// addPools creates a pool named name in every cluster.
func (f *fleet) addPools(name string) {
	svc, _ := f.service(f.st)
	for _, c := range f.clusters {
		f.createPool(svc, c, fmt.Sprint(name))
	}
}

// TestShardCountMismatch: a process that counts shards otherwise than a
// running one refuses to start and says why; the running one goes on.
func TestShardCountMismatch(t *testing.T) {
	f := newFleet(t, testdb.SQLite(t), 2, 1)
	f.start("a", f.st)
	f.waitFor(10*time.Second, f.balanced)
	svc, drivers := f.service(f.st)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := reconcile.New(reconcile.Config{Service: svc, Drivers: drivers, Log: slog.New(slog.DiscardHandler), Holder: "b",
		Shards: 16, LeaseTTL: leaseTTL}).Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "a (32 shards)") || ctx.Err() != nil {
		t.Fatalf("a process with 16 shards beside one with 32: %v", err)
	}
	if ok, why := f.balanced(); !ok {
		t.Fatalf("the running process was disturbed: %s", why)
	}
	f.waitFor(time.Minute, f.converged)
}

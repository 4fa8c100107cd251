package reconcile_test

import (
	"errors"
	"slices"
	"strings"
	"sync"
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

// quick resyncs every 10s, settled or not, so that a test sees many.
func quick(c *reconcile.Config) {
	c.ResyncFast, c.DriftInterval, c.ResyncSlow = 10*time.Second, 10*time.Second, 10*time.Second
}

// TestRefusalsAreNotRetried: NOT_IMPLEMENTED fails the pool with
// Supported=False, a validation error fails it with the provider's message,
// and neither is tried again until the spec changes; for a create as for
// an update.
func TestRefusalsAreNotRetried(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		op        fake.Op
		err       *provider.Error
		supported string // the Supported condition's status once refused
	}{
		{"create not implemented", fake.Create, provider.NotImplementedError(kpool.PlatformCivo, "no pools in this region"), kpool.ConditionFalse},
		{"create refused", fake.Create, provider.ValidationError(kpool.PlatformCivo, "spec.platform.civo.size", "size g9.huge does not exist"), kpool.ConditionTrue},
		{"update refused", fake.Update, provider.ValidationError(kpool.PlatformCivo, "spec.nodeCount", "the quota allows 3 nodes"), kpool.ConditionTrue},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				w := newWorld(t, testdb.SQLite(t), kpool.PlatformCivo)
				stop := w.start("a", quick)
				defer stop()
				p := w.createPool("w", 1)
				if tc.op == fake.Update {
					w.until(5*time.Minute, w.ready(p.ID))
					w.drv.FailPool(fake.Update, p.ProviderName, tc.err)
					w.patch(p.ID, `{"nodeCount":2}`)
				} else {
					w.drv.FailPool(fake.Create, p.ProviderName, tc.err)
				}
				w.until(time.Minute, func() (bool, string) {
					got := w.pool(p.ID)
					return got.Status.Phase == kpool.PhaseFailed, string(got.Status.Phase) + ": " + got.Status.Message
				})
				rp := w.report(p.ID)
				if got := condition(rp, kpool.ConditionSupported); !strings.HasPrefix(got, tc.supported+" ") {
					t.Fatalf("Supported=%q, want %s: %+v", got, tc.supported, rp)
				}
				if msg := w.pool(p.ID).Status.Message; !strings.Contains(msg, tc.err.Reason) {
					t.Fatalf("message %q does not give the provider's %q", msg, tc.err.Reason)
				}
				if rp.ObservedGeneration != w.pool(p.ID).Generation {
					t.Fatalf("the refusal is reported at generation %d, want %d", rp.ObservedGeneration, w.pool(p.ID).Generation)
				}
				// Ten resyncs later, still one call; a new generation tries again.
				lists := w.calls(fake.List, "")
				w.advance(100 * time.Second)
				if n := w.calls(fake.List, "") - lists; n < 10 {
					t.Fatalf("%d resyncs in 100s, want 10", n)
				}
				if n := w.calls(tc.op, p.ProviderName); n != 1 {
					t.Fatalf("%d %s calls for one generation, want 1", n, tc.op)
				}
				w.patch(p.ID, `{"nodeCount":3}`)
				w.until(time.Minute, func() (bool, string) {
					return w.calls(tc.op, p.ProviderName) == 2, "no retry after the spec changed"
				})
			})
		})
	}
}

// TestClusterNotImplemented: a list the provider answers NOT_IMPLEMENTED
// (a capability boundary) fails every pool with Supported=False, the pool
// being deleted goes, as nothing can exist at a provider without pools,
// and the cluster is looked at again slowly, not retried with backoff.
func TestClusterNotImplemented(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		stop := w.start("a")
		defer stop()
		going := w.createPool("going", 1)
		w.until(5*time.Minute, w.ready(going.ID))
		w.drv.FailNext(fake.List, 1000, provider.NotImplementedError(kpool.PlatformAzure, "no agent pools in this cluster's tier"))
		w.delete(going.ID)
		pending := w.createPool("pending", 1)
		w.until(time.Minute, func() (bool, string) {
			got := w.pool(pending.ID)
			return got.Status.Phase == kpool.PhaseFailed, string(got.Status.Phase)
		})
		rp := w.report(pending.ID)
		if got := condition(rp, kpool.ConditionReady); got != "False NotImplemented" {
			t.Fatalf("Ready=%q, want False NotImplemented", got)
		}
		if got := condition(rp, kpool.ConditionSupported); got != "False NotImplemented" {
			t.Fatalf("Supported=%q, want False NotImplemented", got)
		}
		w.until(time.Minute, func() (bool, string) { return w.pool(going.ID) == nil, "the deleting pool is still in kpool" })
		// Looked at again every ResyncSlow (5m), not retried with backoff.
		lists := w.calls(fake.List, "")
		w.advance(10 * time.Minute)
		if n := w.calls(fake.List, "") - lists; n < 1 || n > 3 {
			t.Fatalf("%d lists in 10 minutes after a refusal, want about one per 5 minutes", n)
		}
		if n := w.calls(fake.Create, pending.ProviderName); n != 0 {
			t.Fatalf("%d creates while the provider refused the cluster", n)
		}
	})
}

// TestQuotaIsRetriedSlowly: a create the provider refuses for a quota
// fails the pool with QuotaExceeded and the provider's reason, is not
// marked refused (the spec is not at fault), and is tried again once per
// ResyncSlow, not with the pool's fast backoff; once the quota allows it,
// the same generation is created.
func TestQuotaIsRetriedSlowly(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		stop := w.start("a")
		defer stop()
		p := w.createPool("big", 3)
		quota := provider.QuotaError(kpool.PlatformAzure, "spec.nodeCount", "the region's quota of 24 vCPUs allows 2 more Standard_D4s_v5")
		w.drv.FailPool(fake.Create, p.ProviderName, quota)
		w.until(time.Minute, func() (bool, string) {
			got := w.pool(p.ID)
			return got.Status.Phase == kpool.PhaseFailed, string(got.Status.Phase) + ": " + got.Status.Message
		})
		rp := w.report(p.ID)
		if got := condition(rp, kpool.ConditionReady); !strings.HasPrefix(got, "False "+reconcile.ReasonQuotaExceeded) {
			t.Fatalf("Ready=%q, want False %s", got, reconcile.ReasonQuotaExceeded)
		}
		if msg := w.pool(p.ID).Status.Message; !strings.Contains(msg, quota.Reason) {
			t.Fatalf("message %q does not give the provider's %q", msg, quota.Reason)
		}
		if fg := rp.Meta().FailedGeneration; fg != 0 {
			t.Fatalf("a quota marked generation %d refused", fg)
		}
		// The default ResyncSlow is 5 minutes: at most three tries in 10.
		creates := w.calls(fake.Create, p.ProviderName)
		w.advance(10 * time.Minute)
		if n := w.calls(fake.Create, p.ProviderName) - creates; n < 1 || n > 3 {
			t.Fatalf("%d creates in 10 minutes over quota, want about one per 5 minutes", n)
		}
		w.drv.FailPool(fake.Create, p.ProviderName, nil)
		w.until(15*time.Minute, w.ready(p.ID))
	})
}

// TestFactsLearnt: the controllers learn what the provider offers a
// cluster when they first reach it, and again after ResyncSlow; the API
// then refuses a pool whose machine type is not offered, naming the
// field, and takes one that is.
func TestFactsLearnt(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformCivo)
		var mu sync.Mutex
		offered := []kpool.MachineType{{Name: "g4s.kube.medium", CPUs: 2, MemoryMiB: 4096}}
		w.drv.SetFacts(func(*kpool.Cluster) *kpool.ClusterFacts {
			mu.Lock()
			defer mu.Unlock()
			return &kpool.ClusterFacts{Version: "1.31.2", PoolVersions: []string{"1.31.2"}, MachineTypes: slices.Clone(offered)}
		})
		stop := w.start("a", quick)
		defer stop()
		learnt := func() *kpool.ClusterFacts {
			f, err := w.svc.ClusterFacts(w.ctx(), w.cluster.ID)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
		w.until(time.Minute, func() (bool, string) { return learnt() != nil, "no facts yet" })
		first := learnt().LearnedAt
		_, err := w.svc.CreateNodePool(w.ctx(), service.NodePoolCreate{Name: "big", ClusterID: w.cluster.ID,
			Spec: []byte(`{"platform":{"civo":{"size":"g4s.kube.huge"}},"nodeCount":1}`)})
		var e *kpool.Error
		if !errors.As(err, &e) || e.Code != kpool.CodeValidation || e.Fields[0].Field != "spec.platform.civo.size" ||
			!strings.Contains(e.Fields[0].Reason, "the nearest offered: g4s.kube.medium") {
			t.Fatalf("an unoffered size: %v", err)
		}
		w.createPool("web", 1)
		mu.Lock()
		offered = append(offered, kpool.MachineType{Name: "g4s.kube.huge", CPUs: 16})
		mu.Unlock()
		w.until(time.Minute, func() (bool, string) {
			f := learnt()
			return f.LearnedAt.After(first) && len(f.MachineTypes) == 2, "not learnt again"
		})
	})
}

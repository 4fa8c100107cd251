package reconcile_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/store/testdb"
)

// reachable is the world's cluster's Reachable condition: "status reason".
func (w *world) reachable() string {
	w.t.Helper()
	c, err := w.svc.Cluster(w.ctx(), w.cluster.ID)
	if err != nil {
		w.t.Fatal(err)
	}
	if cond := c.Status.Condition(kpool.ConditionReachable); cond != nil {
		return cond.Status + " " + cond.Reason
	}
	return ""
}

// TestClusterUnreachable: a cluster the provider refuses as a whole (no
// credential, a disallowed endpoint, a refused identity, no such cluster)
// says so on the cluster (Reachable=False with the reason) and in the log,
// at once; its pools wait for it instead of failing each on its own: a
// new pool is Pending, a pool that was Ready is Degraded, a pool being
// deleted stays Deleting; nothing is created or deleted meanwhile, the
// cluster is looked at again slowly, and once it answers, everything
// carries on.
func TestClusterUnreachable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err    *provider.Error
		reason string
	}{
		{provider.ValidationError(kpool.PlatformAzure, "spec.credential", "no credential: kpool dev does not use cloud credentials unless --credentials names them"), kpool.ReasonNoCredential},
		{provider.ValidationError(kpool.PlatformAzure, "spec.endpoint", "credential \"x\" may not be sent to https://arm.example"), kpool.ReasonEndpointNotAllowed},
		{&provider.Error{Kind: provider.KindPermissionDenied, Provider: kpool.PlatformAzure, Reason: "the identity may not list agent pools"}, kpool.ReasonCredentialRefused},
		{&provider.Error{Kind: provider.KindNotFound, Provider: kpool.PlatformAzure, Reason: "ResourceNotFound: no managed cluster aks-prod"}, kpool.ReasonClusterNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.reason, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
				stop := w.start("a")
				defer stop()
				if got := w.reachable(); got != "True Listed" {
					t.Fatalf("a cluster without pools is Reachable=%q after its first pass, want True Listed", got)
				}
				ready := w.createPool("ready", 1)
				going := w.createPool("going", 1)
				w.until(5*time.Minute, w.ready(ready.ID))
				w.until(5*time.Minute, w.ready(going.ID))
				w.drv.FailNext(fake.List, 3, tc.err) // three passes, five minutes apart
				w.delete(going.ID)
				pending := w.createPool("pending", 1)
				w.until(time.Minute, func() (bool, string) {
					return w.pool(pending.ID).Status.Phase == kpool.PhasePending && w.pool(ready.ID).Status.Phase == kpool.PhaseDegraded,
						"pending " + string(w.pool(pending.ID).Status.Phase) + ", ready " + string(w.pool(ready.ID).Status.Phase)
				})
				if got := w.reachable(); got != "False "+tc.reason {
					t.Fatalf("Reachable=%q, want False %s", got, tc.reason)
				}
				for _, p := range []*kpool.NodePool{pending, ready, going} {
					got := w.pool(p.ID)
					if !strings.Contains(got.Status.Message, "cluster prod is not reachable: ") || !strings.Contains(got.Status.Message, tc.err.Reason) {
						t.Fatalf("%s (%s) says %q, not why its cluster cannot be reached", p.Name, got.Status.Phase, got.Status.Message)
					}
					if rp := w.report(p.ID); condition(rp, kpool.ConditionReady) != "Unknown "+kpool.ReasonClusterUnreachable {
						t.Fatalf("%s: Ready=%q, want Unknown %s", p.Name, condition(rp, kpool.ConditionReady), kpool.ReasonClusterUnreachable)
					}
				}
				if got := w.pool(going.ID).Status.Phase; got != kpool.PhaseDeleting {
					t.Fatalf("the pool being deleted is %s, want Deleting", got)
				}
				if warns := w.warns.matching("cluster unreachable"); len(warns) != 1 || !strings.Contains(warns[0], "cluster=prod") {
					t.Fatalf("the log says %q, want one line naming the cluster", warns)
				}
				if n := w.calls(fake.Create, pending.ProviderName) + w.calls(fake.Delete, going.ProviderName); n != 0 {
					t.Fatalf("%d creates or deletes while the provider refused the cluster", n)
				}
				// The refusal ends: the cluster is reachable again and every
				// pool carries on.
				w.until(20*time.Minute, w.ready(pending.ID))
				w.until(time.Minute, w.ready(ready.ID))
				w.until(time.Minute, func() (bool, string) { return w.pool(going.ID) == nil, "the deleting pool is still in kpool" })
				if got := w.reachable(); got != "True Listed" {
					t.Fatalf("Reachable=%q once the cluster answers, want True Listed", got)
				}
			})
		})
	}
}

// TestClusterOutage: lists that fail with outages (no answer, 5xx) are
// retried with backoff, and only once they have failed for
// UnreachableAfter (1m) is the cluster not Reachable and its pools
// waiting; throttling never makes it so.
func TestClusterOutage(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		stop := w.start("a")
		defer stop()
		p := w.createPool("web", 1)
		w.until(5*time.Minute, w.ready(p.ID))

		w.drv.FailNext(fake.List, 1000, &provider.Error{Kind: provider.KindThrottled, Provider: kpool.PlatformAzure, Reason: "too many requests"})
		w.patch(p.ID, `{"nodeCount":2}`)
		w.advance(3 * time.Minute)
		if got := w.reachable(); got != "True Listed" {
			t.Fatalf("throttling made the cluster Reachable=%q", got)
		}
		w.drv.StopFailing(fake.List)
		w.until(10*time.Minute, w.ready(p.ID))

		outage := &provider.Error{Kind: provider.KindTransient, Provider: kpool.PlatformAzure, Reason: "dial tcp 127.0.0.1:1: connect: connection refused"}
		w.drv.FailNext(fake.List, 1000, outage)
		w.patch(p.ID, `{"nodeCount":3}`)
		w.advance(30 * time.Second)
		if got := w.reachable(); got != "True Listed" {
			t.Fatalf("30s of outage made the cluster Reachable=%q; it may be a blip", got)
		}
		w.until(3*time.Minute, func() (bool, string) {
			return w.reachable() == "False "+kpool.ReasonEndpointUnreachable, "Reachable " + w.reachable()
		})
		w.until(time.Minute, func() (bool, string) {
			got := w.pool(p.ID)
			return got.Status.Phase == kpool.PhaseDegraded && strings.Contains(got.Status.Message, outage.Reason), string(got.Status.Phase) + ": " + got.Status.Message
		})
		w.drv.StopFailing(fake.List)
		w.until(10*time.Minute, w.ready(p.ID))
		if got := w.reachable(); got != "True Listed" {
			t.Fatalf("Reachable=%q once the cluster answers, want True Listed", got)
		}
	})
}

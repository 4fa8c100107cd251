package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/store/testdb"
)

// TestLifecycle: a pool is created, scaled, relabelled and deleted at the
// provider, each step reported: Creating, then Ready once the provider's
// operation ends; a delete keeps the record until the provider's pool is
// gone. Spec-to-Ready is measured on the controller's clock.
func TestLifecycle(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		stop := w.start("a")
		defer stop()
		p := w.createPool("web", 2, "1")
		w.settle()
		if n := w.calls(fake.Create, p.ProviderName); n != 1 {
			t.Fatalf("%d creates, want 1", n)
		}
		if got := condition(w.report(p.ID), kpool.ConditionReady); got != "False Creating" {
			t.Fatalf("Ready is %q while the provider creates, want False Creating", got)
		}
		w.until(5*time.Minute, w.ready(p.ID))
		fp, _ := w.drv.Pool(w.cluster, p.ProviderName)
		m := meta(w.report(p.ID))
		if fp.Count != 2 || fp.Zones[0] != "1" || m["active_nodes"] != 2.0 || m["desired_nodes"] != 2.0 || m["provisioning_state"] != "Ready" {
			t.Fatalf("ready: provider %+v, reported %v", fp, m)
		}

		w.patch(p.ID, `{"nodeCount":4}`)
		w.settle()
		if got := condition(w.report(p.ID), kpool.ConditionReady); got != "False Updating" {
			t.Fatalf("Ready is %q while the provider scales, want False Updating", got)
		}
		w.until(5*time.Minute, w.ready(p.ID))
		w.patch(p.ID, `{"labels":{"team":"web"}}`)
		w.until(5*time.Minute, w.ready(p.ID))
		if fp, _ := w.drv.Pool(w.cluster, p.ProviderName); fp.Count != 4 || fp.Labels["team"] != "web" || w.calls(fake.Update, "") != 2 {
			t.Fatalf("after two updates (%d calls): %+v", w.calls(fake.Update, ""), fp)
		}
		// Three generations readied: 50s, 50s and 30s of operations at least.
		if n, sum := w.histogram("kpool_spec_to_ready_seconds"); n != 3 || sum < 130 || sum > 300 {
			t.Fatalf("spec to ready: %d samples, %vs in all; want 3, from the clock", n, sum)
		}

		w.delete(p.ID)
		w.until(5*time.Minute, func() (bool, string) {
			_, atProvider := w.drv.Pool(w.cluster, p.ProviderName)
			if w.pool(p.ID) == nil {
				if atProvider {
					t.Fatal("the record went before the provider's pool")
				}
				return true, ""
			}
			return false, "still in kpool: " + condition(w.report(p.ID), kpool.ConditionDeleted)
		})
		if n := w.calls(fake.Delete, ""); n != 1 {
			t.Fatalf("%d deletes, want 1", n)
		}
		w.noneCreatedTwice()
		if warns := w.warns.matching(""); len(warns) > 0 {
			t.Fatalf("warnings: %v", warns)
		}
	})
}

// TestNewNodesOnlyReportsStaleNodes: on a provider that applies a change
// to new nodes only (OKE), the pool is Ready once the provider has the
// change, and its status says how many nodes still run the earlier
// configuration until they are gone.
func TestNewNodesOnlyReportsStaleNodes(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformOCI)
		stop := w.start("a")
		defer stop()
		p := w.createPool("batch", 3)
		w.until(10*time.Minute, w.ready(p.ID))
		if got := condition(w.report(p.ID), kpool.ConditionNodesCurrent); got != "True AllNodesCurrent" {
			t.Fatalf("new pool: NodesCurrent %q", got)
		}
		w.patch(p.ID, `{"platform":{"oci":{"shape":"VM.Standard.E5.Flex"}}}`)
		w.until(10*time.Minute, w.ready(p.ID))
		st := w.pool(p.ID).Status
		var nc *kpool.Condition
		for i := range st.Conditions {
			if st.Conditions[i].Type == kpool.ConditionNodesCurrent {
				nc = &st.Conditions[i]
			}
		}
		if nc == nil || nc.Status != kpool.ConditionFalse || !strings.Contains(nc.Message, "3 of 3 nodes still run an earlier configuration") {
			t.Fatalf("after a shape change: %+v", nc)
		}
		if m := meta(w.report(p.ID)); m["stale_nodes"] != float64(3) {
			t.Fatalf("stale_nodes %v", m["stale_nodes"])
		}
		// A scale-down removes old nodes first.
		w.patch(p.ID, `{"nodeCount":1}`)
		w.until(10*time.Minute, w.ready(p.ID))
		if got := condition(w.report(p.ID), kpool.ConditionNodesCurrent); got != "False NewNodesOnly" || meta(w.report(p.ID))["stale_nodes"] != float64(1) {
			t.Fatalf("after scaling to 1: %q %v", got, meta(w.report(p.ID)))
		}
	})
}

// TestPlacementLabelsReported: the pool's status says which kompox.dev
// labels its nodes carry, as the provider has them: what placement
// selects by.
func TestPlacementLabelsReported(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		stop := w.start("a")
		defer stop()
		p := w.createPool("edge", 1, "2")
		w.until(5*time.Minute, w.ready(p.ID))
		got := w.pool(p.ID).Status.PlacementLabels
		if got == nil || (*got)[provider.LabelPool] != "edge" || (*got)[provider.LabelZone] != "2" || len(*got) != 2 {
			t.Fatalf("placementLabels %v", got)
		}
		// Lost at the provider (someone relabelled the pool): the status
		// follows.
		if err := w.drv.Mutate(w.cluster, p.ProviderName, func(s *provider.PoolSpec) { delete(s.Labels, provider.LabelZone) }); err != nil {
			t.Fatal(err)
		}
		w.until(10*time.Minute, func() (bool, string) {
			l := w.pool(p.ID).Status.PlacementLabels
			return l != nil && (*l)[provider.LabelZone] == "", fmt.Sprintf("placementLabels %v", l)
		})
	})
}

// TestDeletionPolicyAbandon: a pool whose policy abandons it leaves kpool
// and stays at the provider, untouched.
func TestDeletionPolicyAbandon(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		stop := w.start("a")
		defer stop()
		p := w.createPoolWith("kept", `"nodeCount":1,"deletionPolicy":"Abandon"`)
		w.until(5*time.Minute, w.ready(p.ID))
		w.delete(p.ID)
		w.until(time.Minute, func() (bool, string) { return w.pool(p.ID) == nil, "still in kpool" })
		w.advance(time.Minute)
		fp, ok := w.drv.Pool(w.cluster, p.ProviderName)
		if !ok || fp.State != provider.StateReady || w.calls(fake.Delete, "") != 0 || w.calls(fake.Update, "") != 0 {
			t.Fatalf("abandoned pool at the provider: %+v (%v), %d deletes", fp, ok, w.calls(fake.Delete, ""))
		}
	})
}

// TestObserveModeNeverWrites: a pool in observe mode that the provider
// does not have fails as NotFound and is never created; one it has is
// reported, and deleting it in kpool leaves it there.
func TestObserveModeNeverWrites(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		ctx := context.Background()
		legacy := provider.PoolSpec{ProviderName: "legacy", MachineType: "Standard_D4s_v5", Count: 1, Mode: kpool.ModeUser,
			Labels: map[string]string{provider.LabelPool: "legacy"}}
		if _, err := w.drv.NodePoolCreate(ctx, w.cluster, legacy); err != nil {
			t.Fatal(err)
		}
		stop := w.start("a")
		defer stop()
		missing := w.createPoolWith("ghost", `"nodeCount":1,"management":"observe"`)
		present := w.createPoolWith("legacy", `"nodeCount":1,"management":"observe"`)
		w.until(5*time.Minute, w.ready(present.ID))
		w.until(time.Minute, func() (bool, string) {
			p := w.pool(missing.ID)
			return p.Status.Phase == kpool.PhaseFailed && condition(w.report(missing.ID), kpool.ConditionReady) == "False NotFound", string(p.Status.Phase)
		})
		w.delete(present.ID)
		w.until(time.Minute, func() (bool, string) { return w.pool(present.ID) == nil, "still in kpool" })
		w.advance(10 * time.Minute)
		if n := w.calls(fake.Create, "") + w.calls(fake.Update, "") + w.calls(fake.Delete, ""); n != 1 {
			t.Fatalf("%d writes to the provider, want only the test's own create", n)
		}
		if _, ok := w.drv.Pool(w.cluster, "legacy"); !ok {
			t.Fatal("an observed pool was deleted at the provider")
		}
	})
}

// TestDrift: a pool changed behind kpool's back is corrected and marked
// Drifted until it is; in observe mode it is only reported.
func TestDrift(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		stop := w.start("a")
		defer stop()
		managed := w.createPool("managed", 2, "1")
		observed := w.createPool("observed", 2, "1")
		w.until(5*time.Minute, w.converged(nil))
		w.patch(observed.ID, `{"management":"observe"}`)
		w.until(5*time.Minute, w.converged(nil))
		updates := w.calls(fake.Update, observed.ProviderName)

		for _, p := range []*kpool.NodePool{managed, observed} {
			if err := w.drv.Mutate(w.cluster, p.ProviderName, func(s *provider.PoolSpec) {
				s.Count = 5
				s.Labels["team"] = "intruder"
			}); err != nil {
				t.Fatal(err)
			}
		}
		sawDrift := false
		w.until(10*time.Minute, func() (bool, string) {
			sawDrift = sawDrift || condition(w.report(managed.ID), kpool.ConditionDrifted) == "True ChangedAtProvider"
			fp, _ := w.drv.Pool(w.cluster, managed.ProviderName)
			_, intruder := fp.Labels["team"]
			ok, why := w.ready(managed.ID)()
			return sawDrift && ok && fp.Count == 2 && !intruder && strings.HasPrefix(condition(w.report(managed.ID), kpool.ConditionDrifted), "False"),
				fmt.Sprintf("drift seen %v, count %d, %s", sawDrift, fp.Count, why)
		})
		w.until(time.Minute, func() (bool, string) {
			return condition(w.report(observed.ID), kpool.ConditionDrifted) == "True Observed", "observed pool not reported drifted"
		})
		if fp, _ := w.drv.Pool(w.cluster, observed.ProviderName); fp.Count != 5 || w.calls(fake.Update, observed.ProviderName) != updates {
			t.Fatalf("an observed pool was written: count %d", fp.Count)
		}
	})
}

// TestImport: a cluster that imports pools gets the provider's pools kpool
// did not know, in observe mode.
func TestImport(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		ctx := context.Background()
		// A pool made outside kpool.
		if _, err := w.drv.NodePoolCreate(ctx, w.cluster, provider.PoolSpec{ProviderName: "legacy", MachineType: "Standard_D2s_v5", Count: 3, Mode: "user",
			Labels: map[string]string{"team": "old"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.svc.UpdateCluster(w.ctx(), w.cluster.ID, service.Update{Spec: json.RawMessage(`{"importPools":true}`)}); err != nil {
			t.Fatal(err)
		}
		stop := w.start("a")
		defer stop()
		w.until(10*time.Minute, func() (bool, string) {
			pools, _, _ := w.svc.Store.NodePools(ctx, kpool.NodePoolFilter{ClusterID: w.cluster.ID, Page: kpool.Page{Limit: 10}})
			for _, p := range pools {
				if p.ProviderName == "legacy" {
					ok := p.Spec.Observed() && p.Spec.Count() == 3 && p.Spec.Labels["team"] == "old" && p.Spec.Platform.Azure.VMSize == "Standard_D2s_v5"
					return ok && p.Status.Phase == kpool.PhaseReady, fmt.Sprintf("imported as %+v, %s", p.Spec, p.Status.Phase)
				}
			}
			return false, "legacy not imported"
		})
		if n := w.calls(fake.Create, "") + w.calls(fake.Update, "") + w.calls(fake.Delete, ""); n != 1 {
			t.Fatalf("%d writes to the provider, want only the test's own create", n)
		}
	})
}

// TestDriftFightStops: a provider that undoes every correction (an agent
// that relabels the pool, a value the cloud owns) is corrected three times
// in a row, then no more: the pool says Drifted=True ProviderKeepsChanging
// with the field, kpool_drift_fights_total counts it once, and no update is
// sent however long it lasts. A new spec tries again.
func TestDriftFightStops(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		stop := w.start("a")
		defer stop()
		p := w.createPool("web", 2, "1")
		w.until(5*time.Minute, w.converged(nil))
		updates := w.calls(fake.Update, p.ProviderName)

		// The provider puts its own value back whenever kpool's is there.
		undo := func() {
			fp, _ := w.drv.Pool(w.cluster, p.ProviderName)
			if fp.Labels["team"] != "agent" && fp.State == provider.StateReady {
				if err := w.drv.Mutate(w.cluster, p.ProviderName, func(s *provider.PoolSpec) { s.Labels["team"] = "agent" }); err != nil {
					t.Fatal(err)
				}
			}
		}
		undo()
		w.until(30*time.Minute, func() (bool, string) {
			undo()
			got := condition(w.report(p.ID), kpool.ConditionDrifted)
			return strings.HasPrefix(got, "True "+reconcile.ReasonKeepsChanging), got
		})
		if n := w.calls(fake.Update, p.ProviderName) - updates; n != 3 {
			t.Fatalf("%d corrections before stopping, want 3", n)
		}
		rp := w.report(p.ID)
		for _, c := range rp.Conditions {
			if c.Type == kpool.ConditionDrifted && (!strings.Contains(c.Message, "labels") || !strings.Contains(c.Message, "keeps changing")) {
				t.Fatalf("Drifted says %q: want the field and that the provider keeps changing it", c.Message)
			}
		}
		if got := w.counter("kpool_drift_fights_total"); got != 1 {
			t.Fatalf("kpool_drift_fights_total = %v, want 1", got)
		}
		if ok, why := w.ready(p.ID)(); !ok {
			t.Fatalf("a pool whose drift kpool gave up on is still Ready: %s", why)
		}
		// An hour of passes later: no more updates, the metric counted once.
		before := w.calls(fake.Update, p.ProviderName)
		w.advance(time.Hour)
		if n := w.calls(fake.Update, p.ProviderName) - before; n != 0 {
			t.Fatalf("%d updates after kpool stopped correcting", n)
		}
		if got := w.counter("kpool_drift_fights_total"); got != 1 {
			t.Fatalf("kpool_drift_fights_total = %v after an hour, want 1", got)
		}
		// A new spec is tried: here one that agrees with the provider.
		w.patch(p.ID, `{"labels":{"team":"agent"}}`)
		w.until(5*time.Minute, func() (bool, string) {
			got := condition(w.report(p.ID), kpool.ConditionDrifted)
			ok, why := w.ready(p.ID)()
			return ok && strings.HasPrefix(got, "False"), fmt.Sprintf("Drifted %s; %s", got, why)
		})
	})
}

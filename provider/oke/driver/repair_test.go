package driver_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/oke"
)

// TestFailedCreateRepair: a pool whose create failed is Failed with OKE's
// message, and its repair deletes it so that it can be created again.
func TestFailedCreateRepair(t *testing.T) {
	e := newEmulated(t)
	s := e.spec("web")
	e.CreateFailing(t, s)
	e.Clock.Advance(time.Hour)
	p := e.list(t, s.ProviderName)
	if p == nil || p.State != provider.StateFailed || p.ProviderState != "FAILED" || !strings.Contains(p.Message, "internal error") {
		t.Fatalf("failed pool: %+v", p)
	}
	fixed, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s)
	if err != nil || fixed.State != provider.StateDeleting {
		t.Fatalf("repairing the failed pool: %+v, %v", fixed, err)
	}
	e.Clock.Advance(time.Hour)
	if p := e.list(t, s.ProviderName); p != nil {
		t.Fatalf("after the repair's delete: %+v", p)
	}
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
}

// TestNeedsAttention: a pool whose update failed is Failed with OKE's
// lifecycleDetails, is not deleted, and the next update heals it.
func TestNeedsAttention(t *testing.T) {
	e := newEmulated(t)
	s := e.spec("web")
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	failed := false
	for i := 0; i < 100 && !failed; i++ {
		s.Count = 3 + i%2
		e.Sim.SetFaultRate(0.5)
		_, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s)
		e.Sim.SetFaultRate(0)
		calls := e.Sim.Calls()
		failed = err == nil && calls[len(calls)-1].Fault == sim.FaultFail
		if !failed {
			e.Clock.Advance(time.Hour)
		}
	}
	if !failed {
		t.Fatal("no update failed in 100 tries")
	}
	e.Clock.Advance(45 * time.Second)
	p := e.list(t, s.ProviderName)
	if p.State != provider.StateFailed || p.ProviderState != "NEEDS_ATTENTION" || p.Message == "" {
		t.Fatalf("after a failed update: %+v", p)
	}
	s.Count = 5
	got, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s)
	if err != nil || got.State != provider.StateUpdating {
		t.Fatalf("an update of a NEEDS_ATTENTION pool: %+v %v", got, err)
	}
	e.Clock.Advance(time.Hour)
	if p := e.list(t, s.ProviderName); p.State != provider.StateReady || p.Nodes != 5 || p.ReadyNodes != 5 {
		t.Fatalf("healed: %+v", p)
	}
}

// TestListSurvivesFailedGets: a pool whose GetNodePool keeps failing is
// reported Unknown (with no provider state) instead of failing the list.
func TestListSurvivesFailedGets(t *testing.T) {
	pools := setup.ListFailingReads(t, "/nodePools/")
	if len(pools) != 3 {
		t.Fatalf("%d pools, want 3: %+v", len(pools), pools)
	}
	for _, p := range pools {
		if p.State != provider.StateUnknown || p.ProviderState != "" || !p.ReadyUnknown || !strings.HasPrefix(p.Message, "GetNodePool failed") || p.Name == "" {
			t.Errorf("%s: %s %q %q", p.ProviderName, p.State, p.ProviderState, p.Message)
		}
	}
}

// TestTagsCleared: tags removed from the spec are removed from the pool,
// the last one too.
func TestTagsCleared(t *testing.T) {
	e := newEmulated(t)
	s := e.spec("web")
	s.Tags = map[string]string{"a": "1"}
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	s.Tags = nil
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	if p := e.list(t, s.ProviderName); len(p.Tags) != 0 {
		t.Fatalf("tags after clearing: %v", p.Tags)
	}
	if d := provider.Compare(oke.Profile{}, s, e.list(t, s.ProviderName)); len(d) != 0 {
		t.Fatalf("drift after the update: %v", d)
	}
}

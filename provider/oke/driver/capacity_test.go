package driver_test

import (
	"slices"
	"testing"
	"time"

	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
)

// TestShortage walks the logical pool's day in one zone through the
// driver and the emulator: AD-2 runs out of E4.Flex hosts; a member of 2
// raised to 3 is Failed with a Shortage (OCI's code and message, zone 2)
// and its 2 nodes; a fallback member of another shape in zone 2 comes up;
// capped at 2 the member is Ready without a Shortage; with capacity back
// it is raised to 3; the fallback is deleted.
func TestShortage(t *testing.T) {
	e := newEmulated(t)
	ad2 := sim.Offering{Zone: "Uocm:PHX-AD-2", MachineType: "VM.Standard.E4.Flex"}
	s := e.spec("web-2", "2")
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	e.Sim.Do(func(time.Time) { e.Sim.Capacity().Set(ad2, 0) })

	update := func(count int) *provider.Pool {
		t.Helper()
		s.Count = count
		p, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s)
		if err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(time.Hour)
		return p
	}
	update(3)
	p := e.list(t, s.ProviderName)
	if sh := p.Shortage; sh == nil || sh.Code != "InternalError" || sh.Message != "Out of host capacity." || !slices.Equal(sh.Zones, []string{"2"}) {
		t.Fatalf("short member: shortage %+v", p.Shortage)
	}
	if p.State != provider.StateFailed || p.Count != 3 || p.Nodes != 2 || p.ReadyNodes != 2 || p.NodesByZone["2"] != 2 {
		t.Fatalf("short member: %s count %d, %d nodes, %d ready, %v", p.State, p.Count, p.Nodes, p.ReadyNodes, p.NodesByZone)
	}
	// Asked again with nothing changed (the controller's repair): a new
	// work request, short again.
	if got := update(3); got.State != provider.StateUpdating || got.Extra["workRequest"] == "" {
		t.Fatalf("asked again: %s %v", got.State, got.Extra)
	}
	if p := e.list(t, s.ProviderName); p.Shortage == nil || p.Nodes != 2 {
		t.Fatalf("asked again, still short: %d nodes, shortage %+v", p.Nodes, p.Shortage)
	}

	fb := e.spec("web-2-e5", "2")
	fb.MachineType = "VM.Standard.E5.Flex"
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, fb); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	if p := e.list(t, fb.ProviderName); p.State != provider.StateReady || p.ReadyNodes != 2 || p.Shortage != nil {
		t.Fatalf("fallback member: %s %d ready, shortage %+v", p.State, p.ReadyNodes, p.Shortage)
	}

	if got := update(2); got.State != provider.StateUpdating || got.Shortage != nil {
		t.Fatalf("capped update: %s, shortage %+v", got.State, got.Shortage)
	}
	if p := e.list(t, s.ProviderName); p.State != provider.StateReady || p.Nodes != 2 || p.Shortage != nil {
		t.Fatalf("capped member: %s %d nodes, shortage %+v", p.State, p.Nodes, p.Shortage)
	}

	e.Sim.SetCapacity(ad2, -1)
	update(3)
	if p := e.list(t, s.ProviderName); p.State != provider.StateReady || p.ReadyNodes != 3 || p.Shortage != nil {
		t.Fatalf("member with capacity back: %s %d ready, shortage %+v", p.State, p.ReadyNodes, p.Shortage)
	}
	if err := e.Driver.NodePoolDelete(ctx, e.Cluster, fb.ProviderName); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	if p := e.list(t, fb.ProviderName); p != nil {
		t.Fatalf("fallback member after its delete: %+v", p)
	}
}

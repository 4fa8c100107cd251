package driver_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
)

// observed lists the cluster's pools and returns one.
func (e *emulated) observed(t *testing.T, pn string) *provider.Pool {
	t.Helper()
	pools, err := e.Driver.NodePoolList(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := provider.Find(pools, pn)
	if !ok {
		t.Fatalf("no pool %s in %+v", pn, pools)
	}
	return p
}

func (e *emulated) limit(o sim.Offering, n int) {
	e.Sim.Do(func(time.Time) { e.Sim.Capacity().Set(o, n) })
}

// TestShortage: a scale-up EC2 cannot fill is a Failed (DEGRADED) pool
// whose Shortage names EC2's code and the logical zone, with the nodes it
// really has (counted in EC2); an update to what it has makes it Ready
// with no shortage; capacity back, the next scale-up gets its node. A
// Spot create that gets nothing is Failed with a Shortage naming no zone
// (EC2's Spot words name none), and the update that follows deletes it to
// create it again, as for any CREATE_FAILED node group.
func TestShortage(t *testing.T) {
	e := newEmulated(t)
	m5b := sim.Offering{Zone: "us-west-2b", MachineType: "m5.large"}
	e.limit(m5b, 2)
	s := setup.Spec(e.fixture, "zb", "2")
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	if p := e.observed(t, s.ProviderName); p.State != provider.StateReady || p.Shortage != nil || p.Nodes != 2 {
		t.Fatalf("created: %s %+v, %d nodes", p.State, p.Shortage, p.Nodes)
	}
	resize := func(n int) *provider.Pool {
		t.Helper()
		s.Count = n
		if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(time.Hour)
		return e.observed(t, s.ProviderName)
	}
	p := resize(3)
	sh := p.Shortage
	if p.State != provider.StateFailed || p.ProviderState != "DEGRADED" || sh == nil || sh.Code != "InsufficientInstanceCapacity" ||
		strings.Join(sh.Zones, ",") != "2" || !strings.HasPrefix(sh.Message, "Could not launch On-Demand Instances.") {
		t.Fatalf("short: %s %s %+v", p.State, p.ProviderState, sh)
	}
	if p.Count != 3 || p.Nodes != 2 || p.ReadyNodes != 2 || p.ReadyUnknown || p.NodesByZone["2"] != 2 {
		t.Fatalf("short counts: count %d, nodes %d, ready %d (unknown %v), by zone %v", p.Count, p.Nodes, p.ReadyNodes, p.ReadyUnknown, p.NodesByZone)
	}
	// Asked again for the same (the controller's slow retry): nothing to
	// send, still short, with the instances it has.
	if again, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil || again.Shortage == nil || again.Nodes != 2 || again.State != provider.StateFailed {
		t.Fatalf("asked again: %+v, %v", again, err)
	}
	s.Count = 2
	if up, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil || up.State != provider.StateUpdating || up.Shortage != nil {
		t.Fatalf("capping: %+v, %v", up, err)
	}
	if p := e.observed(t, s.ProviderName); p.State != provider.StateUpdating || p.Shortage != nil {
		t.Fatalf("while capping: %s %+v", p.State, p.Shortage)
	}
	if p := resize(2); p.State != provider.StateReady || p.Shortage != nil || p.Nodes != 2 {
		t.Fatalf("capped: %s %+v, %d nodes", p.State, p.Shortage, p.Nodes)
	}
	e.limit(m5b, -1)
	if p := resize(3); p.State != provider.StateReady || p.Shortage != nil || p.Nodes != 3 {
		t.Fatalf("restored: %s %+v, %d nodes", p.State, p.Shortage, p.Nodes)
	}

	e.limit(sim.Offering{Zone: "us-west-2c", MachineType: "m5.large", Spot: true}, 0)
	spot := setup.Spec(e.fixture, "spot", "3")
	spot.Spot = true
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, spot); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	p = e.observed(t, spot.ProviderName)
	if p.State != provider.StateFailed || p.ProviderState != "CREATE_FAILED" || p.Shortage == nil || p.Shortage.Code != "InsufficientInstanceCapacity" ||
		p.Shortage.Zones != nil || p.Nodes != 0 {
		t.Fatalf("spot short: %s %s %+v, %d nodes", p.State, p.ProviderState, p.Shortage, p.Nodes)
	}
	spot.Count = 0
	if got, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, spot); err != nil || got.State != provider.StateDeleting {
		t.Fatalf("update of a CREATE_FAILED pool: %+v, %v", got, err)
	}
}

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
		for _, c := range e.Sim.Calls() {
			t.Log(c.Method, c.Path, c.Query, c.Status)
		}
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

// TestShortageFallback: the steps of a logical pool of three single-zone
// members through the driver: zone 2's instance type exhausted (by the
// admin route), every member raised from 2 to 3, zone 2's alone short;
// capped at 2, a member of the fallback type in zone 2 gets its node;
// capacity back, zone 2's member is raised to 3 and the fallback deleted,
// giving its capacity back.
func TestShortageFallback(t *testing.T) {
	e := newEmulated(t)
	members := map[string]provider.PoolSpec{}
	for _, z := range []string{"1", "2", "3"} {
		s := setup.Spec(e.fixture, "web-"+z, z)
		if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
			t.Fatal(err)
		}
		members[z] = s
	}
	e.Clock.Advance(time.Hour)
	admin := func(body string) {
		t.Helper()
		resp, err := e.Client.Post(e.URL+sim.AdminPrefix+"capacity", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("admin route: %s", resp.Status)
		}
	}
	admin(`{"zone":"us-west-2b","machineType":"m5.large","available":0}`)
	update := func(s provider.PoolSpec) {
		t.Helper()
		if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
			t.Fatal(err)
		}
	}
	for _, z := range []string{"1", "2", "3"} {
		s := members[z]
		s.Count = 3
		update(s)
		members[z] = s
	}
	e.Clock.Advance(time.Hour)
	for _, z := range []string{"1", "2", "3"} {
		p := e.observed(t, members[z].ProviderName)
		if short := z == "2"; (p.Shortage != nil) != short || (short && (p.Nodes != 2 || strings.Join(p.Shortage.Zones, ",") != "2")) || (!short && (p.Nodes != 3 || p.State != provider.StateReady)) {
			t.Fatalf("member %s: %s %+v, %d nodes", z, p.State, p.Shortage, p.Nodes)
		}
	}
	capped := members["2"]
	capped.Count = 2
	update(capped)
	fallback := setup.Spec(e.fixture, "web-2-xl", "2")
	fallback.MachineType, fallback.Count = "m5.xlarge", 1
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, fallback); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	if p := e.observed(t, capped.ProviderName); p.State != provider.StateReady || p.Shortage != nil || p.Nodes != 2 {
		t.Fatalf("capped: %s %+v, %d nodes", p.State, p.Shortage, p.Nodes)
	}
	if p := e.observed(t, fallback.ProviderName); p.State != provider.StateReady || p.Nodes != 1 {
		t.Fatalf("fallback: %s %+v, %d nodes", p.State, p.Shortage, p.Nodes)
	}
	admin(`{"zone":"us-west-2b","machineType":"m5.large","available":-1}`)
	admin(`{"zone":"us-west-2b","machineType":"m5.xlarge","available":0}`)
	update(members["2"])
	if err := e.Driver.NodePoolDelete(ctx, e.Cluster, fallback.ProviderName); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	if p := e.observed(t, capped.ProviderName); p.State != provider.StateReady || p.Shortage != nil || p.Nodes != 3 {
		t.Fatalf("raised again: %s %+v, %d nodes", p.State, p.Shortage, p.Nodes)
	}
	var left int
	e.Sim.Do(func(time.Time) {
		left, _ = e.Sim.Capacity().Available(sim.Offering{Zone: "us-west-2b", MachineType: "m5.xlarge"})
	})
	if left != 1 {
		t.Fatalf("the fallback's capacity: %d given back, want 1", left)
	}
}

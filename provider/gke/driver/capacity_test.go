package driver_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/providertest"
)

// TestShortage walks the logical pool of issue 35 through the driver: three
// single-zone members of 2 nodes; zone 2 out of n2-standard-4; each raised
// to 3: zone 2's member gets none and reports a shortage (its code, zone
// "2", 2 nodes of 3), the others none; capped at 2 it is Ready with no
// shortage; a fallback member of another machine type comes up in zone 2;
// capacity back, zone 2's member reaches 3 and the fallback is deleted.
func TestShortage(t *testing.T) {
	e := newEmulated(t)
	member := func(zone, machine string, count int) provider.PoolSpec {
		return e.specOf("m"+zone+strings.Split(machine, "-")[0], zone, machine, count)
	}
	for _, z := range []string{"1", "2", "3"} {
		if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, member(z, "n2-standard-4", 2)); err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(time.Hour) // GKE creates one pool of a cluster at a time
	}
	e.Sim.SetCapacity(sim.Offering{Zone: "us-central1-b", MachineType: "n2-standard-4"}, 0)
	for _, z := range []string{"1", "2", "3"} {
		e.update(t, member(z, "n2-standard-4", 3))
	}
	p := e.pool(t, member("2", "n2-standard-4", 0).ProviderName)
	if p.State != provider.StateFailed || p.Shortage == nil || p.Shortage.Code != "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS" ||
		!slices.Equal(p.Shortage.Zones, []string{"2"}) || p.Count != 3 || p.Nodes != 2 || p.ReadyNodes != 2 || strings.Contains(p.Shortage.Message, "\n") {
		t.Fatalf("zone 2's member: %s, shortage %+v, count %d, nodes %d, ready %d", p.State, p.Shortage, p.Count, p.Nodes, p.ReadyNodes)
	}
	for _, z := range []string{"1", "3"} {
		if p := e.pool(t, member(z, "n2-standard-4", 0).ProviderName); p.Shortage != nil || p.State != provider.StateReady || p.Nodes != 3 {
			t.Fatalf("zone %s's member: %s, shortage %+v, %d nodes", z, p.State, p.Shortage, p.Nodes)
		}
	}
	e.update(t, member("2", "n2-standard-4", 2))
	if p := e.pool(t, member("2", "n2-standard-4", 0).ProviderName); p.State != provider.StateReady || p.Shortage != nil || p.Nodes != 2 || p.ReadyNodes != 2 {
		t.Fatalf("capped: %s, shortage %+v, %d nodes", p.State, p.Shortage, p.Nodes)
	}
	fallback := member("2", "e2-standard-4", 1)
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, fallback); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	if p := e.pool(t, fallback.ProviderName); p.State != provider.StateReady || p.Nodes != 1 {
		t.Fatalf("fallback: %s, %d nodes", p.State, p.Nodes)
	}
	e.Sim.SetCapacity(sim.Offering{Zone: "us-central1-b", MachineType: "n2-standard-4"}, -1)
	e.update(t, member("2", "n2-standard-4", 3))
	if p := e.pool(t, member("2", "n2-standard-4", 0).ProviderName); p.State != provider.StateReady || p.Shortage != nil || p.Nodes != 3 {
		t.Fatalf("capacity back: %s, shortage %+v, %d nodes", p.State, p.Shortage, p.Nodes)
	}
	if err := e.Driver.NodePoolDelete(ctx, e.Cluster, fallback.ProviderName); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	pools, err := e.Driver.NodePoolList(ctx, e.Cluster)
	if _, found := provider.Find(pools, fallback.ProviderName); err != nil || found {
		t.Fatalf("fallback after its delete: %v, found %v", err, found)
	}
}

// specOf is a single-zone pool's spec of a machine type.
func (e *emulated) specOf(name, zone, machine string, count int) provider.PoolSpec {
	return providertest.Spec(e.Cluster, name, kpool.NodePoolSpec{NodeCount: ptr.To(count), Zones: []string{zone},
		Platform: kpool.NodePoolPlatform{GCP: &kpool.GCPNodePool{MachineType: machine, DiskSize: 100, DiskType: "pd-balanced"}}})
}

// pool lists the cluster's pools and returns one.
func (e *emulated) pool(t *testing.T, name string) provider.Pool {
	t.Helper()
	pools, err := e.Driver.NodePoolList(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := provider.Find(pools, name)
	if !ok {
		t.Fatalf("no pool %s", name)
	}
	return *p
}

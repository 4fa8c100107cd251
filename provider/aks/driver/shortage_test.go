package driver_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	aksim "github.com/kpool/kpool/cloudsim/aks"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/providertest"
)

// TestShortage walks what kpool's controller does when a zone runs out of
// a machine type, against the emulator: three single-zone members of 2
// nodes; zone 2 exhausted; every member raised to 3: zone 2's member ends
// Failed with a Shortage (AKS's code, its first line, zone "2") and the 2
// nodes it really has; a fallback member in zone 2 with another size is
// created; zone 2's member capped at 2 is Ready with no Shortage; with the
// capacity back it is raised to 3, and the fallback deleted.
func TestShortage(t *testing.T) {
	e := newEmulated(t)
	ctx := context.Background()
	spec := func(name, zone, size string, n int) provider.PoolSpec {
		return providertest.Spec(e.Cluster, name, kpool.NodePoolSpec{NodeCount: ptr.To(n), Zones: []string{zone},
			Platform: kpool.NodePoolPlatform{Azure: &kpool.AzureNodePool{VMSize: size}}})
	}
	members := map[string]provider.PoolSpec{}
	for _, z := range []string{"1", "2", "3"} {
		members[z] = spec("web"+z, z, "Standard_D4s_v5", 2)
		if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, members[z]); err != nil {
			t.Fatal(err)
		}
	}
	e.Clock.Advance(time.Hour)
	e.Sim.SetCapacity(sim.Offering{Zone: "2", MachineType: "Standard_D4s_v5"}, 0)
	update := func(z string, n int) {
		t.Helper()
		s := members[z]
		s.Count = n
		if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
			t.Fatalf("update zone %s to %d: %v", z, n, err)
		}
	}
	for _, z := range []string{"1", "2", "3"} {
		update(z, 3)
	}
	e.Clock.Advance(time.Hour)
	list := func() map[string]provider.Pool {
		t.Helper()
		pools, err := e.Driver.NodePoolList(ctx, e.Cluster)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]provider.Pool{}
		for _, p := range pools {
			out[p.ProviderName] = p
		}
		return out
	}
	pools := list()
	short := pools["web2"]
	if short.State != provider.StateFailed || short.Shortage == nil || short.Shortage.Code != "ZonalAllocationFailed" ||
		!slices.Equal(short.Shortage.Zones, []string{"2"}) || strings.Contains(short.Shortage.Message, "\n") ||
		!strings.Contains(short.Shortage.Message, "sufficient capacity") {
		t.Fatalf("zone 2's member: %s, shortage %+v", short.State, short.Shortage)
	}
	if short.Count != 3 || short.Nodes != 2 || short.ReadyNodes != 2 || short.ReadyUnknown || short.NodesByZone["2"] != 2 {
		t.Fatalf("zone 2's member counts: count %d nodes %d ready %d unknown %v by zone %v", short.Count, short.Nodes, short.ReadyNodes, short.ReadyUnknown, short.NodesByZone)
	}
	for _, n := range []string{"web1", "web3"} {
		if p := pools[n]; p.State != provider.StateReady || p.Shortage != nil || p.ReadyNodes != 3 {
			t.Fatalf("%s: %s, %d ready, shortage %+v", n, p.State, p.ReadyNodes, p.Shortage)
		}
	}
	// The fallback size has room in zone 2; the short member is capped.
	fallback := spec("web2b", "2", "Standard_D4as_v5", 1)
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, fallback); err != nil {
		t.Fatalf("fallback member: %v", err)
	}
	update("2", 2)
	e.Clock.Advance(time.Hour)
	pools = list()
	for n, want := range map[string]int{"web2": 2, "web2b": 1} {
		if p := pools[n]; p.State != provider.StateReady || p.Shortage != nil || p.ReadyNodes != want {
			t.Fatalf("%s after the cap: %s, %d ready, shortage %+v", n, p.State, p.ReadyNodes, p.Shortage)
		}
	}
	e.Sim.SetCapacity(sim.Offering{Zone: "2", MachineType: "Standard_D4s_v5"}, -1)
	update("2", 3)
	if err := e.Driver.NodePoolDelete(ctx, e.Cluster, fallback.ProviderName); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	pools = list()
	if p := pools["web2"]; p.State != provider.StateReady || p.Shortage != nil || p.ReadyNodes != 3 {
		t.Fatalf("zone 2's member restored: %s, %d ready, shortage %+v", p.State, p.ReadyNodes, p.Shortage)
	}
	if _, ok := pools["web2b"]; ok {
		t.Fatal("the fallback member is still there")
	}
}

// TestDemoOffersFallbacks: the demo cluster's facts offer, in each of its
// zones, at least two VM sizes with Spot, so that a logical pool has a
// fallback size (and a spot offering) where one runs out.
func TestDemoOffersFallbacks(t *testing.T) {
	s := setup
	s.Emulator = func(o sim.Options) *aksim.Server {
		emu, err := aksim.Demo(o)
		if err != nil {
			t.Fatal(err)
		}
		return emu
	}
	s.Cluster = func(endpoint string) *kpool.Cluster {
		c := clusterAt(endpoint)
		a := c.Spec.Platform.Azure
		a.SubscriptionID, a.ResourceGroup, a.ClusterName = aksim.DemoSubscription, aksim.DemoResourceGroup, aksim.DemoCluster
		return c
	}
	e := s.Start(t)
	f, err := e.Driver.ClusterFacts(context.Background(), e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Zones) != 3 {
		t.Fatalf("demo zones %v", f.Zones)
	}
	for _, z := range f.Zones {
		var spot []string
		for _, m := range f.MachineTypes {
			if !m.NoSpot && (m.Zones == nil || slices.Contains(m.Zones, z)) {
				spot = append(spot, m.Name)
			}
		}
		if len(spot) < 2 {
			t.Errorf("zone %s offers %v with Spot; want two sizes at least", z, spot)
		}
	}
}

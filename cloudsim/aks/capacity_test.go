package aks_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/aks"
	"github.com/kpool/kpool/cloudsim/sim"
)

const d4 = "Standard_D4s_v5"

// limit sets the capacity of an offering under the engine's lock.
func (e *env) limit(zone string, spot bool, n int) {
	e.sim.Do(func(time.Time) { e.sim.Capacity().Set(sim.Offering{Zone: zone, MachineType: d4, Spot: spot}, n) })
}

// available is what an offering has left (-1: unlimited).
func (e *env) available(zone string, spot bool) int {
	n, ok := -1, false
	e.sim.Do(func(time.Time) {
		n, ok = e.sim.Capacity().Available(sim.Offering{Zone: zone, MachineType: d4, Spot: spot})
	})
	if !ok {
		return -1
	}
	return n
}

// write writes a pool with the SDK and waits for its operation: the error
// of a failed one, as the poller reads it from the operation's status
// (200, with the error).
func (e *env) write(name string, pr *armcontainerservice.ManagedClusterAgentPoolProfileProperties) error {
	e.t.Helper()
	p := e.create(name, pr)
	e.settle()
	_, err := p.PollUntilDone(ctx, nil) // done at the first poll
	return err
}

// scale sets a pool's count, keeping the rest of what it has.
func (e *env) scale(name string, count int32) error {
	pr := e.get(name).Properties
	pr.Count = ptr.To(count)
	return e.write(name, pr)
}

// zonesOfNodes are the zone labels of a pool's Kubernetes Nodes, sorted.
func (e *env) zonesOfNodes(pool string) []string {
	e.t.Helper()
	list, err := e.kubeClient().CoreV1().Nodes().List(ctx, metav1.ListOptions{
		LabelSelector: labels.Set{"kubernetes.azure.com/agentpool": pool}.String()})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, n := range list.Items {
		out = append(out, n.Labels["topology.kubernetes.io/zone"])
	}
	slices.Sort(out)
	return out
}

func zonal(count int32, zones ...string) *armcontainerservice.ManagedClusterAgentPoolProfileProperties {
	pr := basic(count)
	for _, z := range zones {
		pr.AvailabilityZones = append(pr.AvailabilityZones, ptr.To(z))
	}
	return pr
}

// A zone out of capacity: the scale up gets what it can (none), the PUT's
// operation ends Failed with ZonalAllocationFailed, the pool keeps the
// nodes it has (machines and Kubernetes Nodes) with provisioningState
// Failed; a PUT of the count it has succeeds; a scale-down gives capacity
// back, and a scale-up takes it; spot is another offering; a delete gives
// back every node.
func TestCapacityZonalShortage(t *testing.T) {
	e := newEnv(t, aks.Options{})
	if err := e.write("zone2", zonal(2, "2")); err != nil {
		t.Fatal(err)
	}
	// A limit on the size in another case applies: ARM compares sizes
	// without case.
	e.sim.Do(func(time.Time) {
		e.sim.Capacity().Set(sim.Offering{Zone: "2", MachineType: strings.ToLower(d4)}, 0)
	})
	err := e.scale("zone2", 3)
	re := wantError(t, err, http.StatusOK, "ZonalAllocationFailed")
	if !strings.Contains(re.Error(), "We do not have sufficient capacity for the requested VM size Standard_D4s_v5 in zone '2'") {
		t.Fatalf("message: %v", re)
	}
	ap := e.get("zone2")
	if st := ptr.Deref(ap.Properties.ProvisioningState, ""); st != "Failed" || ptr.Deref(ap.Properties.Count, 0) != 3 {
		t.Fatalf("after the shortage: %s, count %d", st, ptr.Deref(ap.Properties.Count, 0))
	}
	if m, z := e.sim.Machines(sub, group, cluster, "zone2"), e.zonesOfNodes("zone2"); len(m) != 2 || !slices.Equal(z, []string{"westeurope-2", "westeurope-2"}) {
		t.Fatalf("machines %v, node zones %v", m, z)
	}
	if st := e.state("zone2"); !strings.HasPrefix(st.ProvisioningError, "ZonalAllocationFailed: ") {
		t.Fatalf("provisioning error %q", st.ProvisioningError)
	}
	e.sim.Do(func(time.Time) { e.sim.Capacity().Set(sim.Offering{Zone: "2", MachineType: strings.ToLower(d4)}, -1) })
	e.limit("2", false, 0) // the same limit, in the catalogue's spelling
	// Spot is its own offering.
	spot := zonal(1, "2")
	spot.ScaleSetPriority = ptr.To(armcontainerservice.ScaleSetPrioritySpot)
	if err := e.write("spot2", spot); err != nil {
		t.Fatalf("spot in the short zone: %v", err)
	}
	steps := []struct {
		count     int32
		available int
	}{{2, 0}, {1, 1}, {2, 0}} // capped at what it has; down gives back; up takes
	for _, s := range steps {
		if err := e.scale("zone2", s.count); err != nil {
			t.Fatalf("scale to %d: %v", s.count, err)
		}
		if st := e.state("zone2"); st.ReadyNodes != int(s.count) || st.ProvisioningError != "" || ptr.Deref(st.Properties.ProvisioningState, "") != "Succeeded" {
			t.Fatalf("at %d: %+v", s.count, st)
		}
		if n := e.available("2", false); n != s.available {
			t.Fatalf("at %d nodes, zone 2 has %d left; want %d", s.count, n, s.available)
		}
	}
	e.limit("2", false, -1) // restored
	if err := e.scale("zone2", 3); err != nil || len(e.zonesOfNodes("zone2")) != 3 {
		t.Fatalf("after restore: %v, %d nodes", err, len(e.zonesOfNodes("zone2")))
	}
	e.limit("2", false, 0)
	del, err := e.pools.BeginDelete(ctx, group, cluster, "zone2", nil)
	if err != nil {
		t.Fatal(err)
	}
	e.settle()
	if _, err := del.PollUntilDone(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if n := e.available("2", false); n != 3 {
		t.Fatalf("after the delete zone 2 has %d left; want 3", n)
	}
}

// The admin route limits an offering as Capacity().Set does. A pool
// without zones that gets part of its nodes fails with AllocationFailed;
// a pool in three zones two of which are short fails with
// OverconstrainedZonalAllocationRequest, its nodes all in the zone that
// had room.
func TestCapacityAdminRoutePartial(t *testing.T) {
	e := newEnv(t, aks.Options{})
	post := func(zone string, n int) {
		body, _ := json.Marshal(map[string]any{"zone": zone, "machineType": d4, "available": n})
		resp, err := e.http.Post(e.ep.URL+sim.AdminPrefix+"capacity", "application/json", strings.NewReader(string(body)))
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("admin route: %v %v", resp, err)
		}
		_ = resp.Body.Close()
	}
	post("", 2)
	cases := []struct {
		name, code, words string
		pr                *armcontainerservice.ManagedClusterAgentPoolProfileProperties
		zones             []string
	}{
		{"regional", "AllocationFailed", "requested VM size Standard_D4s_v5 in this region", basic(3), []string{"0", "0"}},
		{"spread", "OverconstrainedZonalAllocationRequest", "in zones '1', '3'", zonal(6, "1", "2", "3"), []string{"westeurope-2", "westeurope-2"}},
	}
	post("1", 0)
	post("3", 0)
	for _, c := range cases {
		re := wantError(t, e.write(c.name, c.pr), http.StatusOK, c.code)
		if !strings.Contains(re.Error(), c.words) {
			t.Fatalf("%s: %v", c.name, re)
		}
		if z := e.zonesOfNodes(c.name); !slices.Equal(z, c.zones) {
			t.Fatalf("%s: node zones %v; want %v", c.name, z, c.zones)
		}
		if ptr.Deref(e.get(c.name).Properties.ProvisioningState, "") != "Failed" {
			t.Fatalf("%s: not Failed", c.name)
		}
	}
	if n := e.available("", false); n != 0 {
		t.Fatalf("regional capacity left %d; want 0", n)
	}
	// Capped at the two it has, the spread pool is whole again.
	if err := e.scale("spread", 2); err != nil || ptr.Deref(e.get("spread").Properties.ProvisioningState, "") != "Succeeded" {
		t.Fatalf("capped: %v", err)
	}
}

// An upgrade's surge nodes take capacity too: with none in the pool's
// zone, a node image upgrade ends Failed with ZonalAllocationFailed and
// the nodes stay as they were.
func TestCapacitySurge(t *testing.T) {
	e := newEnv(t, aks.Options{})
	if err := e.write("zone2", zonal(2, "2")); err != nil {
		t.Fatal(err)
	}
	image := ptr.Deref(e.get("zone2").Properties.NodeImageVersion, "")
	e.limit("2", false, 0)
	p, err := e.pools.BeginUpgradeNodeImageVersion(ctx, group, cluster, "zone2", nil)
	if err != nil {
		t.Fatal(err)
	}
	e.settle()
	_, err = p.PollUntilDone(ctx, nil)
	wantError(t, err, http.StatusOK, "ZonalAllocationFailed")
	if st := e.state("zone2"); st.ReadyNodes != 2 || ptr.Deref(st.Properties.NodeImageVersion, "") != image {
		t.Fatalf("after the failed upgrade: %d nodes, image %s", st.ReadyNodes, ptr.Deref(st.Properties.NodeImageVersion, ""))
	}
	if n := e.available("2", false); n != 0 {
		t.Fatalf("zone 2 has %d left; want 0", n)
	}
}

// A stop deallocates the instances and gives their capacity back; a
// start takes it again, and starts only what it gets.
func TestCapacityStopStart(t *testing.T) {
	e := newEnv(t, aks.Options{})
	if err := e.write("zone2", zonal(2, "2")); err != nil {
		t.Fatal(err)
	}
	e.limit("2", false, 0)
	power := func(code armcontainerservice.Code) error {
		return e.write("zone2", &armcontainerservice.ManagedClusterAgentPoolProfileProperties{PowerState: &armcontainerservice.PowerState{Code: ptr.To(code)}})
	}
	if err := power(armcontainerservice.CodeStopped); err != nil {
		t.Fatal(err)
	}
	if n := e.available("2", false); n != 2 {
		t.Fatalf("stopped: zone 2 has %d left; want 2", n)
	}
	e.limit("2", false, 1)
	wantError(t, power(armcontainerservice.CodeRunning), http.StatusOK, "ZonalAllocationFailed")
	if z := e.zonesOfNodes("zone2"); len(z) != 1 || e.available("2", false) != 0 {
		t.Fatalf("started: nodes %v, %d left", z, e.available("2", false))
	}
	if err := e.scale("zone2", 1); err != nil || ptr.Deref(e.get("zone2").Properties.ProvisioningState, "") != "Succeeded" {
		t.Fatalf("capped after the start: %v", err)
	}
}

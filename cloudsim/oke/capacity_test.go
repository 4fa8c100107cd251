package oke_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"

	"github.com/kpool/kpool/cloudsim/sim"
)

const shape = "VM.Standard.E4.Flex"

// setCapacity limits an offering through the engine's admin route, as
// `kpool cloudsim capacity` does.
func (e *env) setCapacity(t *testing.T, o sim.Offering, n int) {
	t.Helper()
	body := fmt.Sprintf(`{"zone":%q,"machineType":%q,"spot":%v,"available":%d}`, o.Zone, o.MachineType, o.Spot, n)
	res, err := e.http.Post(e.url+sim.AdminPrefix+"capacity", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("admin capacity: %s", res.Status)
	}
}

func (e *env) available(t *testing.T, o sim.Offering) int {
	t.Helper()
	n, ok := e.emu.Available(o)
	if !ok {
		t.Fatalf("%s is unlimited", o)
	}
	return n
}

// resize updates the pool's size and lets its work request end.
func (e *env) resize(t *testing.T, id string, size int) ce.WorkRequest {
	t.Helper()
	resp, err := e.client.UpdateNodePool(ctx, ce.UpdateNodePoolRequest{NodePoolId: &id, UpdateNodePoolDetails: ce.UpdateNodePoolDetails{
		NodeConfigDetails: &ce.UpdateNodePoolNodeConfigDetails{Size: common.Int(size)}}})
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	return e.work(t, resp.OpcWorkRequestId)
}

// nodeCounts are a pool's launched (with an instance, ACTIVE) and failed
// (no instance, INACTIVE, Compute's nodeError) nodes.
func nodeCounts(t *testing.T, np ce.NodePool) (active, failed int) {
	t.Helper()
	for _, n := range np.Nodes {
		switch {
		case n.NodeError == nil && n.LifecycleState == ce.NodeLifecycleStateActive && *n.Id != "":
			active++
		case n.NodeError != nil && *n.NodeError.Code == "InternalError" && *n.NodeError.Message == "Out of host capacity." &&
			*n.Id == "" && n.LifecycleState == ce.NodeLifecycleStateInactive && n.PrivateIp == nil:
			failed++
		default:
			t.Fatalf("node %s: %s %+v", *n.Name, n.LifecycleState, n.NodeError)
		}
	}
	return active, failed
}

// TestCapacityScaleUp: AD-2 out of E4.Flex hosts (set in s.Do), a pool of
// 2 scaled to 3 gets none more: its work request FAILS with OKE's launch
// failure, the pool NEEDS_ATTENTION with 2 ACTIVE nodes (and 2 Kubernetes
// nodes) and one placeholder; it does not heal by itself; capped at 2 it
// is ACTIVE again; with a host back (admin route) 3 gets it; scale-down
// and delete give the capacity back.
func TestCapacityScaleUp(t *testing.T) {
	e := newEnv(t, 0)
	ad2 := sim.Offering{Zone: "Uocm:PHX-AD-2", MachineType: shape}
	id := e.create(t, details("web", 2, ad2.Zone))
	e.clock.Advance(time.Hour)
	e.emu.Do(func(time.Time) { e.emu.Capacity().Set(ad2, 0) })

	wr := e.resize(t, id, 3)
	errs, err := e.client.ListWorkRequestErrors(ctx, ce.ListWorkRequestErrorsRequest{CompartmentId: common.String(compartment), WorkRequestId: wr.Id})
	if wr.Status != ce.WorkRequestStatusFailed || err != nil || len(errs.Items) != 1 || *errs.Items[0].Code != "InternalError" ||
		!strings.HasPrefix(*errs.Items[0].Message, "1 node(s) launch failure.") || !strings.Contains(*errs.Items[0].Message, "Out of host capacity.") {
		t.Fatalf("short update: %s %+v %v", wr.Status, errs.Items, err)
	}
	e.clock.Advance(24 * time.Hour) // no healing while capacity is short
	np := e.get(t, id)
	if a, f := nodeCounts(t, np); np.LifecycleState != ce.NodePoolLifecycleStateNeedsAttention || a != 2 || f != 1 || *np.NodeConfigDetails.Size != 3 {
		t.Fatalf("short pool: %s, %d active, %d failed, size %d", np.LifecycleState, a, f, *np.NodeConfigDetails.Size)
	}
	if got := e.kubeNodeNames(t); len(got) != 2 {
		t.Fatalf("Kubernetes nodes: %v, want the 2 launched", got)
	}

	if wr := e.resize(t, id, 2); wr.Status != ce.WorkRequestStatusSucceeded {
		t.Fatalf("capped update: %s", wr.Status)
	}
	np = e.get(t, id)
	if a, f := nodeCounts(t, np); np.LifecycleState != ce.NodePoolLifecycleStateActive || a != 2 || f != 0 {
		t.Fatalf("capped pool: %s, %d active, %d failed", np.LifecycleState, a, f)
	}

	e.setCapacity(t, ad2, 1)
	if wr := e.resize(t, id, 3); wr.Status != ce.WorkRequestStatusSucceeded {
		t.Fatalf("update with capacity back: %s", wr.Status)
	}
	if a, f := nodeCounts(t, e.get(t, id)); a != 3 || f != 0 || e.available(t, ad2) != 0 || len(e.kubeNodeNames(t)) != 3 {
		t.Fatalf("after capacity came back: %d active, %d failed, %d left", a, f, e.available(t, ad2))
	}
	e.resize(t, id, 1)
	if got := e.available(t, ad2); got != 2 {
		t.Fatalf("after a scale-down to 1: %d available, want 2", got)
	}
	if _, err := e.client.DeleteNodePool(ctx, ce.DeleteNodePoolRequest{NodePoolId: &id}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	if got := e.available(t, ad2); got != 3 {
		t.Fatalf("after the delete: %d available, want 3", got)
	}
}

// TestCapacityCreateAndSpot: AD-1 has one on-demand E4.Flex host and no
// preemptible one (admin route): a preemptible pool of 2 launches none, an
// on-demand pool of 2 launches one; both NEEDS_ATTENTION (updates taken),
// preemptible capacity counted apart from on-demand.
func TestCapacityCreateAndSpot(t *testing.T) {
	e := newEnv(t, 0)
	onDemand := sim.Offering{Zone: "Uocm:PHX-AD-1", MachineType: shape}
	spot := onDemand
	spot.Spot = true
	e.setCapacity(t, onDemand, 1)
	e.setCapacity(t, spot, 0)
	d := details("spot", 2, spot.Zone)
	d.NodeConfigDetails.PlacementConfigs[0].PreemptibleNodeConfig = &ce.PreemptibleNodeConfigDetails{
		PreemptionAction: ce.TerminatePreemptionAction{IsPreserveBootVolume: common.Bool(false)}}
	spotID := e.create(t, d)
	odID := e.create(t, details("od", 2, onDemand.Zone))
	e.clock.Advance(time.Hour)
	for _, c := range []struct {
		id             string
		active, failed int
	}{{spotID, 0, 2}, {odID, 1, 1}} {
		np := e.get(t, c.id)
		a, f := nodeCounts(t, np)
		if np.LifecycleState != ce.NodePoolLifecycleStateNeedsAttention || a != c.active || f != c.failed ||
			!strings.HasPrefix(*np.LifecycleDetails, fmt.Sprintf("%d node(s) launch failure.", c.failed)) {
			t.Fatalf("%s: %s %q, %d active, %d failed", *np.Name, np.LifecycleState, *np.LifecycleDetails, a, f)
		}
	}
	if e.available(t, onDemand) != 0 || e.available(t, spot) != 0 {
		t.Fatal("capacity not taken")
	}
	if wr := e.resize(t, odID, 1); wr.Status != ce.WorkRequestStatusSucceeded {
		t.Fatalf("capped on-demand pool: %s", wr.Status)
	}
	for _, id := range []string{spotID, odID} {
		if _, err := e.client.DeleteNodePool(ctx, ce.DeleteNodePoolRequest{NodePoolId: &id}); err != nil {
			t.Fatal(err)
		}
	}
	e.clock.Advance(time.Hour)
	if e.available(t, onDemand) != 1 || e.available(t, spot) != 0 {
		t.Fatalf("after the deletes: %d on-demand, %d preemptible", e.available(t, onDemand), e.available(t, spot))
	}
}

// TestCapacityCycling: node cycling to E5.Flex with one E5.Flex host in
// AD-1 replaces one node of 2, then its next surge node cannot launch:
// the work request FAILS, the pool NEEDS_ATTENTION with the old node and
// the new one; with capacity back, cycling again finishes ACTIVE.
func TestCapacityCycling(t *testing.T) {
	e := newEnv(t, 0)
	e5 := sim.Offering{Zone: "Uocm:PHX-AD-1", MachineType: "VM.Standard.E5.Flex"}
	id := e.create(t, details("web", 2, e5.Zone))
	e.clock.Advance(time.Hour)
	e.setCapacity(t, e5, 1)
	wr := e.cycleUpdate(t, id, "1", "0", "PT0M", true)
	e.clock.Advance(time.Hour)
	np := e.get(t, id)
	if w := e.work(t, wr); w.Status != ce.WorkRequestStatusFailed || np.LifecycleState != ce.NodePoolLifecycleStateNeedsAttention {
		t.Fatalf("short cycle: %s, pool %s", w.Status, np.LifecycleState)
	}
	if a, f := nodeCounts(t, np); a != 2 || f != 1 || !strings.HasPrefix(*np.LifecycleDetails, "1 node(s) launch failure.") {
		t.Fatalf("short cycle: %d active, %d failed, %q", a, f, *np.LifecycleDetails)
	}
	e.setCapacity(t, e5, -1)
	wr = e.cycleUpdate(t, id, "1", "0", "PT0M", true)
	e.clock.Advance(time.Hour)
	shapes, all := e.shapes(t, "web")
	if w := e.work(t, wr); w.Status != ce.WorkRequestStatusSucceeded || shapes[e5.MachineType] != 2 || all != 2 {
		t.Fatalf("cycle with capacity back: %s, shapes %v of %d", w.Status, shapes, all)
	}
}

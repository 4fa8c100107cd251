package gke_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	container "google.golang.org/api/container/v1"

	"github.com/kpool/kpool/cloudsim/sim"
)

// setCapacity limits an offering as a test does, under the engine's lock.
func (e *env) setCapacity(o sim.Offering, n int) {
	e.sim.Do(func(time.Time) { e.sim.Capacity().Set(o, n) })
}

// available is what is left of a limited offering.
func (e *env) available(o sim.Offering) int {
	e.t.Helper()
	var n int
	var ok bool
	e.sim.Do(func(time.Time) { n, ok = e.sim.Capacity().Available(o) })
	if !ok {
		e.t.Fatalf("%s is not limited", o)
	}
	return n
}

// pool reads a node pool through the client.
func (e *env) pool(name string) *container.NodePool {
	e.t.Helper()
	np, err := e.svc.Projects.Locations.Clusters.NodePools.Get(strings.TrimPrefix(base, "/v1/") + "/nodePools/" + name).Do()
	if err != nil {
		e.t.Fatal(err)
	}
	return np
}

// TestCapacityResizeShort: a resize whose zone has no capacity left gets
// the nodes of the other zones; the operation ends with GKE's stockout
// error, the pool is RUNNING_WITH_ERROR with the zone in its statusMessage
// and stays so on the clock, the zone's group keeps creating; a resize to
// what the pool has makes it RUNNING; capacity set on the admin route lets
// the next resize through; deleteInstances, scale-down and delete release it.
func TestCapacityResizeShort(t *testing.T) {
	e := newMigEnv(t)
	pools := e.svc.Projects.Locations.Clusters.NodePools
	path := strings.TrimPrefix(base, "/v1/") + "/nodePools/web"
	b := sim.Offering{Zone: "us-central1-b", MachineType: "e2-medium"}
	e.setCapacity(b, 0)
	op, err := pools.SetSize(path, &container.SetNodePoolSizeRequest{NodeCount: 3}).Do()
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	op, err = e.svc.Projects.Locations.Operations.Get(strings.TrimPrefix(base[:strings.Index(base, "/clusters")], "/v1/") + "/operations/" + op.Name).Do()
	if err != nil || op.Status != "DONE" || op.Error == nil || !strings.Contains(op.Error.Message, "[GCE_STOCKOUT]") ||
		!strings.Contains(op.Error.Message, "zones/us-central1-b'") || !strings.Contains(op.Error.Message, "Expected 9, running 8, transitioning 1") {
		t.Fatalf("operation: %v %+v %+v", err, op, op.Error)
	}
	np := e.pool("web")
	if np.Status != "RUNNING_WITH_ERROR" || !strings.HasPrefix(np.StatusMessage, "us-central1-b: Deploy error: Not all instances running in IGM") ||
		!strings.Contains(np.StatusMessage, "[ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS]") || len(np.Conditions) != 1 || np.Conditions[0].Code != "GCE_STOCKOUT" {
		t.Fatalf("pool: %s %q %+v", np.Status, np.StatusMessage, np.Conditions)
	}
	target, none := e.sizes()
	if target["us-central1-b"] != 3 || none["us-central1-b"] != 2 || none["us-central1-a"] != 3 || none["us-central1-c"] != 3 {
		t.Fatalf("groups: target %v, none %v", target, none)
	}
	m, err := e.compute.InstanceGroupManagers.Get(project, "us-central1-b", e.groups["us-central1-b"]).Do()
	if err != nil || m.CurrentActions.Creating != 1 || m.Status.IsStable {
		t.Fatalf("group b: %v %+v", err, m)
	}
	if z := e.byZone(); len(z["us-central1-a"]) != 3 || len(z["us-central1-b"]) != 2 || len(z["us-central1-c"]) != 3 {
		t.Fatalf("nodes: %v", z)
	}
	e.clock.Advance(24 * time.Hour)
	if np := e.pool("web"); np.Status != "RUNNING_WITH_ERROR" {
		t.Fatalf("a shortage healed on the clock alone: %s", np.Status)
	}
	e.done(pools.SetSize(path, &container.SetNodePoolSizeRequest{NodeCount: 2}).Do())
	if np := e.pool("web"); np.Status != "RUNNING" || np.StatusMessage != "" || len(np.Conditions) != 0 {
		t.Fatalf("capped at what it has: %s %q", np.Status, np.StatusMessage)
	}
	resp, err := e.srv.Client().Post(e.srv.URL+sim.AdminPrefix+"capacity", "application/json",
		strings.NewReader(`{"zone":"us-central1-b","machineType":"e2-medium","available":1}`))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("admin route: %v %v", err, resp)
	}
	resp.Body.Close()
	e.done(pools.SetSize(path, &container.SetNodePoolSizeRequest{NodeCount: 3}).Do())
	if np, z := e.pool("web"), e.byZone(); np.Status != "RUNNING" || len(z["us-central1-b"]) != 3 || e.available(b) != 0 {
		t.Fatalf("capacity back: %s, nodes %v, left %d", np.Status, z, e.available(b))
	}
	if _, err := e.del("us-central1-b", false, "zones/us-central1-b/instances/"+e.byZone()["us-central1-b"][0]); err != nil || e.available(b) != 1 {
		t.Fatalf("deleteInstances: %v, %d left, want 1", err, e.available(b))
	}
	e.done(pools.SetSize(path, &container.SetNodePoolSizeRequest{NodeCount: 1}).Do())
	if n := e.available(b); n != 2 {
		t.Fatalf("after a scale-down to 1: %d left, want 2", n)
	}
	e.done(pools.Delete(path).Do())
	if n := e.available(b); n != 3 {
		t.Fatalf("after the delete: %d left, want 3", n)
	}
}

// TestCapacityCreate: a create in a zone with no capacity is ERROR with no
// node; Spot VMs of the same type and zone are another offering; the
// instance groups get the nodes once capacity comes back, the pool then
// RUNNING; an upgrade to a machine type the zone lacks fails and changes
// nothing, and the next one, with capacity, releases the old type's.
func TestCapacityCreate(t *testing.T) {
	e := newKubeEnv(t)
	pools := e.svc.Projects.Locations.Clusters.NodePools
	parent := strings.TrimPrefix(base, "/v1/")
	std4 := sim.Offering{Zone: "us-central1-a", MachineType: "e2-standard-4"}
	std8 := sim.Offering{Zone: "us-central1-a", MachineType: "e2-standard-8"}
	e.setCapacity(std4, 0)
	e.setCapacity(std8, 1)
	create := func(name string, spot bool) {
		e.done(pools.Create(parent, &container.CreateNodePoolRequest{NodePool: &container.NodePool{Name: name, InitialNodeCount: 2,
			Locations: []string{"us-central1-a"}, Config: &container.NodeConfig{MachineType: "e2-standard-4", Spot: spot}}}).Do())
	}
	create("web", false)
	create("spot", true)
	if np := e.pool("web"); np.Status != "ERROR" || !strings.Contains(np.StatusMessage, "zones/us-central1-a'") || len(e.nodes("web")) != 0 {
		t.Fatalf("create with no capacity: %s %q, %d nodes", np.Status, np.StatusMessage, len(e.nodes("web")))
	}
	if np := e.pool("spot"); np.Status != "RUNNING" || len(e.nodes("spot")) != 2 {
		t.Fatalf("spot pool: %s, %d nodes", np.Status, len(e.nodes("spot")))
	}
	e.setCapacity(std4, 5)
	if np := e.pool("web"); np.Status != "RUNNING" || np.StatusMessage != "" || len(e.nodes("web")) != 2 || e.available(std4) != 3 {
		t.Fatalf("capacity back: %s %q, %d nodes, %d left", np.Status, np.StatusMessage, len(e.nodes("web")), e.available(std4))
	}
	e.done(pools.Update(parent+"/nodePools/web", &container.UpdateNodePoolRequest{MachineType: "e2-standard-8"}).Do())
	np := e.pool("web")
	if np.Status != "RUNNING_WITH_ERROR" || np.Config.MachineType != "e2-standard-4" || len(e.nodes("web")) != 2 || e.available(std8) != 1 {
		t.Fatalf("upgrade with no capacity: %s %s, %d nodes, %d left", np.Status, np.Config.MachineType, len(e.nodes("web")), e.available(std8))
	}
	e.setCapacity(std8, 2)
	e.done(pools.Update(parent+"/nodePools/web", &container.UpdateNodePoolRequest{MachineType: "e2-standard-8"}).Do())
	np = e.pool("web")
	if np.Status != "RUNNING" || np.Config.MachineType != "e2-standard-8" || e.available(std8) != 0 || e.available(std4) != 5 {
		t.Fatalf("upgrade: %s %s, left %d and %d", np.Status, np.Config.MachineType, e.available(std8), e.available(std4))
	}
}

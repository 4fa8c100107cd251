package civo_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/cloudsim/internal/simtest"
	"github.com/kpool/kpool/cloudsim/sim"
)

const medium = "g4s.kube.medium"

// limit sets what the capacity table can still start of a size, as a
// test inside the engine's lock does (Do).
func (e *env) limit(o sim.Offering, n int) {
	e.emu.Do(func(time.Time) { e.emu.Capacity().Set(o, n) })
}

// available is what the table can still start of a size; -1: unlimited.
func (e *env) available(size string) int {
	n := -1
	e.emu.Do(func(time.Time) {
		if v, ok := e.emu.Capacity().Available(sim.Offering{MachineType: size}); ok {
			n = v
		}
	})
	return n
}

// workers is the cluster GET's WorkerNodesReady condition.
func (e *env) workers() (status, reason, message string) {
	e.t.Helper()
	a := e.do(http.MethodGet, clusterPath+"?region="+region, key, "")
	var c struct {
		Conditions []struct{ Type, Status, Reason, Message string } `json:"conditions"`
	}
	if err := json.Unmarshal(a.body, &c); err != nil || a.status != http.StatusOK {
		e.t.Fatalf("cluster GET: %d %s %v", a.status, a.body, err)
	}
	for _, c := range c.Conditions {
		if c.Type == "WorkerNodesReady" {
			return c.Status, c.Reason, c.Message
		}
	}
	e.t.Fatalf("no WorkerNodesReady condition: %s", a.body)
	return "", "", ""
}

// put sends a pool PUT of the count and wants status.
func (e *env) put(pool string, count string, status int, code string) {
	e.t.Helper()
	a := e.do(http.MethodPut, pools+"/"+pool+"?region="+region, key, `{"count":`+count+`}`)
	if a.status != status || a.code() != code {
		e.t.Fatalf("PUT %s count %s: %d %s, want %d %q", pool, count, a.status, a.body, status, code)
	}
}

// TestCapacityScaleUp: a scale up that the size's capacity cannot fill
// gets what there is (built, ACTIVE, Kubernetes nodes), the rest ERROR at
// once and the cluster's WorkerNodesReady False with out_of_capacity; it
// does not heal while capacity is short, a scale that can start none is
// refused, a PUT of the count the pool has makes it whole, and once the
// admin route gives capacity back a scale up gets it.
func TestCapacityScaleUp(t *testing.T) {
	k := newKubeEnv(t)
	k.must(http.MethodPost, pools+"?region="+region, `{"id":"web","count":2,"size":"`+medium+`"}`)
	k.clock.Advance(time.Hour)
	k.limit(sim.Offering{MachineType: medium}, 1)

	k.put("web", "4", http.StatusOK, "")
	if s := statuses(k.pool("web")); s != "ACTIVE,ACTIVE,BUILDING,ERROR" {
		t.Fatalf("partial scale up: %s", s)
	}
	k.clock.Advance(time.Hour)
	if p := k.pool("web"); statuses(p) != "ACTIVE,ACTIVE,ACTIVE,ERROR" || p.Count != 4 {
		t.Fatalf("partial scale up done: %s, count %d", statuses(p), p.Count)
	}
	if n := k.nodes("web"); len(n) != 3 || ready(n) != 3 {
		t.Fatalf("nodes: %d, %d ready; want the 3 that started", len(n), ready(n))
	}
	if st, reason, msg := k.workers(); st != "False" || reason != "out_of_capacity" || !strings.Contains(msg, "pool web: 1 of 4 nodes could not start") {
		t.Fatalf("WorkerNodesReady: %s %s %q", st, reason, msg)
	}
	if n := k.available(medium); n != 0 {
		t.Fatalf("available: %d", n)
	}
	k.clock.Advance(24 * time.Hour) // no heal while capacity is short
	if s := statuses(k.pool("web")); s != "ACTIVE,ACTIVE,ACTIVE,ERROR" {
		t.Fatalf("a day on: %s", s)
	}
	k.put("web", "4", http.StatusBadRequest, "out_of_capacity") // none can start
	k.put("web", "3", http.StatusOK, "")                        // capped at what it has
	if p := k.pool("web"); statuses(p) != "ACTIVE,ACTIVE,ACTIVE" || p.Count != 3 {
		t.Fatalf("capped: %s, count %d", statuses(p), p.Count)
	}
	if st, reason, _ := k.workers(); st != "True" || reason != "" {
		t.Fatalf("WorkerNodesReady after the cap: %s %s", st, reason)
	}

	resp, err := k.srv.Client().Post(k.srv.URL+sim.AdminPrefix+"capacity", "application/json",
		strings.NewReader(`{"zone":"","machineType":"`+medium+`","available":1}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || k.available(medium) != 1 {
		t.Fatalf("admin route: %d, available %d", resp.StatusCode, k.available(medium))
	}
	k.put("web", "4", http.StatusOK, "")
	k.clock.Advance(time.Hour)
	if p := k.pool("web"); statuses(p) != "ACTIVE,ACTIVE,ACTIVE,ACTIVE" {
		t.Fatalf("after capacity came back: %s", statuses(p))
	}
	if n := k.nodes("web"); ready(n) != 4 || k.available(medium) != 0 {
		t.Fatalf("nodes %d ready, available %d", ready(n), k.available(medium))
	}
}

// TestCapacityCreate: a create that can start none of its nodes is
// refused (no pool); one that can start some is made with them, the rest
// ERROR; a delete gives back what it held.
func TestCapacityCreate(t *testing.T) {
	e := newEnv(t)
	e.limit(sim.Offering{MachineType: medium}, 0)
	a := e.do(http.MethodPost, pools+"?region="+region, key, `{"id":"web","count":3,"size":"`+medium+`"}`)
	if a.status != http.StatusBadRequest || a.code() != "out_of_capacity" || !strings.Contains(string(a.body), medium) {
		t.Fatalf("create with no capacity: %d %s", a.status, a.body)
	}
	if a := e.do(http.MethodGet, pools+"/web?region="+region, key, ""); a.status != http.StatusNotFound {
		t.Fatalf("the refused pool: %d", a.status)
	}
	e.limit(sim.Offering{MachineType: medium}, 1)
	if a := e.do(http.MethodPost, pools+"?region="+region, key, `{"id":"web","count":3,"size":"`+medium+`"}`); a.status != http.StatusOK {
		t.Fatalf("create with capacity for 1: %d %s", a.status, a.body)
	}
	if s := statuses(e.pool("web")); s != "BUILDING,ERROR,ERROR" {
		t.Fatalf("partial create: %s", s)
	}
	e.clock.Advance(time.Hour)
	if s := statuses(e.pool("web")); s != "ACTIVE,ERROR,ERROR" {
		t.Fatalf("partial create done: %s", s)
	}
	e.do(http.MethodDelete, pools+"/web?region="+region, key, "")
	e.clock.Advance(time.Hour)
	if n := e.available(medium); n != 1 {
		t.Fatalf("available after the delete: %d", n)
	}
}

// TestCapacityReleased: nodes removed (a scale down, an instance delete,
// a pool delete) give their capacity back when they are gone; a limit on
// spot or on another size does not limit a size's on-demand nodes.
func TestCapacityReleased(t *testing.T) {
	e := newEnv(t)
	e.limit(sim.Offering{MachineType: medium, Spot: true}, 0)
	e.limit(sim.Offering{MachineType: "g4s.kube.small"}, 0)
	e.limit(sim.Offering{MachineType: medium}, 5)
	e.do(http.MethodPost, pools+"?region="+region, key, `{"id":"web","count":3,"size":"`+medium+`"}`)
	e.do(http.MethodPost, pools+"?region="+region, key, `{"id":"api","count":2,"size":"`+medium+`"}`)
	e.clock.Advance(time.Hour)
	if s := statuses(e.pool("web")) + "/" + statuses(e.pool("api")); s != "ACTIVE,ACTIVE,ACTIVE/ACTIVE,ACTIVE" || e.available(medium) != 0 {
		t.Fatalf("pools: %s, available %d", s, e.available(medium))
	}
	e.put("web", "1", http.StatusOK, "")
	if n := e.available(medium); n != 0 {
		t.Fatalf("available while the nodes go: %d", n)
	}
	e.clock.Advance(time.Hour)
	if n := e.available(medium); n != 2 {
		t.Fatalf("available after the scale down: %d", n)
	}
	inst := e.pool("api").Instances[0].ID
	if a := e.do(http.MethodDelete, pools+"/api/instances/"+inst+"?region="+region, key, ""); a.status != http.StatusOK {
		t.Fatalf("instance delete: %d %s", a.status, a.body)
	}
	e.clock.Advance(time.Hour)
	if n := e.available(medium); n != 3 {
		t.Fatalf("available after the instance delete: %d", n)
	}
	e.do(http.MethodDelete, pools+"/api?region="+region, key, "")
	e.do(http.MethodDelete, pools+"/web?region="+region, key, "")
	e.clock.Advance(time.Hour)
	if n := e.available(medium); n != 5 {
		t.Fatalf("available after the deletes: %d", n)
	}
}

// TestCapacityNotHealed: an operation that fails (a fault) and runs short
// of capacity at once: the nodes the fault left in ERROR heal with time,
// those short of capacity do not.
func TestCapacityNotHealed(t *testing.T) {
	e := newEnv(t)
	e.do(http.MethodPost, pools+"?region="+region, key, `{"id":"web","count":1,"size":"`+medium+`"}`)
	e.clock.Advance(time.Hour)
	e.limit(sim.Offering{MachineType: medium}, 2)
	if !simtest.FailOperation(e.emu, 0.5, 200, func(int) bool { return e.tryDo(http.MethodPut, pools+"/web?region="+region, `{"count":4}`) == 200 },
		func(_ int, accepted bool) {
			if accepted {
				e.clock.Advance(time.Hour)
				e.put("web", "1", http.StatusOK, "")
				e.clock.Advance(time.Hour)
			}
		}) {
		t.Fatal("no scale up failed")
	}
	e.clock.Advance(50 * time.Second) // 30 s + 2 × 10 s
	if s := statuses(e.pool("web")); s != "ACTIVE,ACTIVE,ERROR,ERROR" {
		t.Fatalf("failed and short: %s", s)
	}
	e.clock.Advance(time.Hour)
	if s := statuses(e.pool("web")); s != "ACTIVE,ACTIVE,ACTIVE,ERROR" {
		t.Fatalf("healed: %s, want the short node still in ERROR", s)
	}
	if st, ok := e.emu.PoolOf(region, cid, "web"); !ok || st.Count != 4 {
		t.Fatalf("pool: %+v", st)
	}
}

// TestCapacityAutoscaler: the emulated autoscaler's scale up takes
// capacity too: what the size cannot start is in ERROR, no node; its
// scale down gives back what the removed nodes held.
func TestCapacityAutoscaler(t *testing.T) {
	k := newKubeEnv(t)
	k.must(http.MethodPut, clusterPath, `{"applications":"civo-cluster-autoscaler","region":"LON1"}`)
	k.must(http.MethodPost, pools, `{"id":"web","count":3,"size":"`+medium+`","region":"LON1"}`)
	k.clock.Advance(time.Hour)
	k.limit(sim.Offering{MachineType: medium}, 1)
	if n, err := k.emu.SetDemand(region, cid, "web", 5); err != nil || n != 5 {
		t.Fatalf("SetDemand(5) = %d, %v", n, err)
	}
	if s := statuses(k.pool("web")); s != "ACTIVE,ACTIVE,ACTIVE,ACTIVE,ERROR" {
		t.Fatalf("autoscaled short: %s", s)
	}
	if n := k.nodes("web"); len(n) != 4 || k.available(medium) != 0 {
		t.Fatalf("%d nodes, available %d", len(n), k.available(medium))
	}
	if n, err := k.emu.SetDemand(region, cid, "web", 3); err != nil || n != 3 {
		t.Fatalf("SetDemand(3) = %d, %v", n, err)
	}
	if s := statuses(k.pool("web")); s != "ACTIVE,ACTIVE,ACTIVE" || k.available(medium) != 1 {
		t.Fatalf("scaled down: %s, available %d", s, k.available(medium))
	}
}

package sim_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/cloudsim/sim"
)

func TestCapacityTakeRelease(t *testing.T) {
	var c sim.Capacity
	o := sim.Offering{Zone: "2", MachineType: "m1"}
	if got := c.Take(o, 5); got != 5 {
		t.Fatalf("unlimited: got %d, want 5", got)
	}
	c.Set(o, 2)
	if got := c.Take(o, 5); got != 2 {
		t.Fatalf("limited to 2: got %d", got)
	}
	if got := c.Take(o, 1); got != 0 {
		t.Fatalf("exhausted: got %d", got)
	}
	c.Release(o, 1)
	if n, ok := c.Available(o); !ok || n != 1 {
		t.Fatalf("after release: %d %v, want 1 true", n, ok)
	}
	spot := o
	spot.Spot = true
	if got := c.Take(spot, 3); got != 3 {
		t.Fatalf("spot is an offering of its own: got %d", got)
	}
	c.Set(o, -1)
	if _, ok := c.Available(o); ok {
		t.Fatal("Set(-1) should lift the limit")
	}
}

func TestCapacityAdminRoute(t *testing.T) {
	e := sim.New(sim.Options{}, sim.Protocol{Routes: func(*sim.Request) *sim.Reply { return sim.NewReply(http.StatusTeapot) }})
	srv := httptest.NewServer(e)
	defer srv.Close()
	res, err := http.Post(srv.URL+sim.AdminPrefix+"capacity", "application/json",
		strings.NewReader(`{"zone":"us-west-2b","machineType":"m5.large","available":0}`))
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Capacity []sim.CapacityEntry }
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != 200 {
		t.Fatalf("POST: %d %v", res.StatusCode, err)
	}
	res.Body.Close()
	if len(out.Capacity) != 1 || out.Capacity[0].Zone != "us-west-2b" || out.Capacity[0].Available != 0 {
		t.Fatalf("capacity = %+v", out.Capacity)
	}
	var got int
	e.Do(func(_ time.Time) {
		got = e.Capacity().Take(sim.Offering{Zone: "us-west-2b", MachineType: "m5.large"}, 3)
	})
	if got != 0 {
		t.Fatalf("exhausted offering gave %d nodes", got)
	}
	if len(e.Calls()) != 0 {
		t.Fatalf("admin calls are not cloud calls: %d logged", len(e.Calls()))
	}
	for _, body := range []string{`{"zone":"1"}`, `{"machineType":"x","bogus":1}`, `nope`} {
		res, err := http.Post(srv.URL+sim.AdminPrefix+"capacity", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", body, res.StatusCode)
		}
	}
}

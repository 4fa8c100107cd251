package sim_test

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/kpool/kpool/cloudsim/sim"
)

func TestJSON(t *testing.T) {
	rep := sim.JSON(http.StatusCreated, "application/json; charset=utf-8", map[string]int{"a": 1})
	if rep.Status != http.StatusCreated || string(rep.Body) != `{"a":1}` || rep.Header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Fatalf("%d %q %v", rep.Status, rep.Body, rep.Header)
	}
	// A value JSON cannot hold is the emulator's bug: a plain 500 says so.
	if rep := sim.JSON(http.StatusOK, "application/json", math.NaN()); rep.Status != http.StatusInternalServerError {
		t.Fatalf("NaN: %d %q", rep.Status, rep.Body)
	}
}

func TestCloneJSON(t *testing.T) {
	type pool struct {
		Name   string
		Labels map[string]string
	}
	in := &pool{Name: "a", Labels: map[string]string{"k": "v"}}
	out := sim.CloneJSON(in)
	out.Labels["k"] = "changed"
	if in.Labels["k"] != "v" || out.Name != "a" {
		t.Fatalf("the copy shares its map: %+v %+v", in, out)
	}
	if z := sim.CloneJSON[pool](nil); z == nil || z.Name != "" {
		t.Fatalf("nil: %+v", z)
	}
}

// A failed operation's damage heals as long again as it took.
func TestHealAt(t *testing.T) {
	o := &sim.Operation{Start: start, End: start.Add(time.Minute)}
	if at := o.HealAt(); !at.Equal(start.Add(2 * time.Minute)) {
		t.Fatalf("HealAt %v", at)
	}
	if sim.Due(time.Time{}, start) || sim.Due(o.HealAt(), o.End) || !sim.Due(o.HealAt(), o.HealAt()) {
		t.Fatal("Due")
	}
}

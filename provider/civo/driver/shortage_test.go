package driver_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
)

// TestCapacityShortage: against the emulator with a size's capacity
// limited, a scale up that gets some of its nodes reports Shortage (Civo's
// code and words, no zones) with the real counts; one that can get none,
// and a create of that size, are KindCapacity errors with Civo's code
// (neither quota nor validation); a pool of another size can be made
// meanwhile (a fallback); an update to the count the pool has clears the
// shortage, and once capacity is back an update gets the rest.
func TestCapacityShortage(t *testing.T) {
	e := newEmulated(t)
	const medium = "g4s.kube.medium"
	s := e.spec("web", 2, medium)
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	e.Sim.SetCapacity(sim.Offering{MachineType: medium}, 1)

	s.Count = 4
	if up, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil || up.Shortage == nil || up.Shortage.Code != "out_of_capacity" {
		t.Fatalf("a scale up that gets 1 of 2: %+v, %v", up, err)
	}
	e.Clock.Advance(time.Hour)
	p := list(t, e, s.ProviderName)
	if p.Shortage == nil || p.Shortage.Code != "out_of_capacity" || !strings.Contains(p.Shortage.Message, "1 of 4 nodes could not start") ||
		p.Shortage.Zones != nil || p.Nodes != 3 || p.ReadyNodes != 3 || p.Count != 4 {
		t.Fatalf("short pool: %+v, shortage %+v", p, p.Shortage)
	}

	_, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s) // asks again: none left
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindCapacity || pe.Code != "out_of_capacity" || provider.IsQuota(err) || provider.IsValidation(err) {
		t.Fatalf("a scale up that gets none: %v", err)
	}
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, e.spec("more", 1, medium)); !provider.IsCapacity(err) {
		t.Fatalf("a create of the exhausted size: %v", err)
	}
	fallback := e.spec("web-large", 1, "g4s.kube.large")
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, fallback); err != nil {
		t.Fatalf("a pool of another size: %v", err)
	}

	s.Count = 3 // capped at what it has
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
		t.Fatalf("capping: %v", err)
	}
	if p = list(t, e, s.ProviderName); p.Shortage != nil || p.State != provider.StateReady || p.ReadyNodes != 3 {
		t.Fatalf("capped: %+v, shortage %+v", p, p.Shortage)
	}

	e.Sim.SetCapacity(sim.Offering{MachineType: medium}, -1)
	s.Count = 4
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
		t.Fatalf("once capacity is back: %v", err)
	}
	e.Clock.Advance(time.Hour)
	if p = list(t, e, s.ProviderName); p.Shortage != nil || p.State != provider.StateReady || p.ReadyNodes != 4 {
		t.Fatalf("raised again: %+v", p)
	}
	for _, pn := range []string{fallback.ProviderName, s.ProviderName} {
		if err := e.Driver.NodePoolDelete(ctx, e.Cluster, pn); err != nil {
			t.Fatalf("delete %s: %v", pn, err)
		}
	}
}

package driver_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// TestClusterFacts: the facts of the test's regional cluster, learnt from
// the emulator's GKE and Compute Engine catalogues in six calls.
func TestClusterFacts(t *testing.T) {
	e := newEmulated(t)
	before := len(e.Sim.Calls())
	f, err := e.Driver.ClusterFacts(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(e.Sim.Calls()) - before; n != 6 {
		t.Errorf("%d calls, want 6: clusters.get, getServerConfig and us-central1's four zones' machineTypes.list", n)
	}
	if f.Version != "1.30.5" || strings.Join(f.PoolVersions, ",") != "1.27.16,1.28.14,1.29.9,1.30.5" ||
		strings.Join(f.Zones, ",") != "1,2,3,4" || strings.Join(f.DefaultZones, ",") != "1,2,3" || len(f.Partial) != 0 || f.LearnedAt.IsZero() {
		t.Fatalf("facts: %+v", f)
	}
	for _, want := range []kpool.MachineType{
		{Name: "e2-medium", CPUs: 2, MemoryMiB: 4096},
		{Name: "n1-standard-4", CPUs: 4, MemoryMiB: 15360},
		{Name: "n2-standard-4", CPUs: 4, MemoryMiB: 16384},
		{Name: "g2-standard-8", CPUs: 8, MemoryMiB: 32768, GPUs: 1, Zones: []string{"1", "2", "3"}},
		{Name: "a2-highgpu-1g", CPUs: 12, MemoryMiB: 87040, GPUs: 1},
	} {
		got, ok := f.MachineType(want.Name)
		if !ok || got.CPUs != want.CPUs || got.MemoryMiB != want.MemoryMiB || got.GPUs != want.GPUs || !slices.Equal(got.Zones, want.Zones) || got.NoSpot {
			t.Errorf("%s: %+v, want %+v", want.Name, got, want)
		}
	}
	if g2, _ := f.MachineType("g2-standard-8"); g2.OfferedIn("4") {
		t.Error("g2-standard-8 offered in zone 4 (us-central1-f)")
	}
	again, err := e.Driver.ClusterFacts(ctx, e.Cluster)
	if err != nil || !slices.EqualFunc(again.MachineTypes, f.MachineTypes, func(a, b kpool.MachineType) bool {
		return a.Name == b.Name && slices.Equal(a.Zones, b.Zones)
	}) {
		t.Fatalf("a second learning differs: %v", err)
	}
}

// TestClusterFactsPartial: catalogues the credential may not read (403)
// are noted in Partial, not an error; a missing cluster is an error.
func TestClusterFactsPartial(t *testing.T) {
	e := newEmulated(t)
	e.Sim.DenyCatalogue(project)
	f, err := e.Driver.ClusterFacts(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Partial) != 2 || f.MachineTypes != nil || f.PoolVersions != nil || f.Version != "1.30.5" || len(f.Zones) != 4 {
		t.Fatalf("facts: %+v", f)
	}
	gone := *e.Cluster
	g := *gone.Spec.Platform.GCP
	g.ClusterName = "no-such-cluster"
	gone.Spec.Platform.GCP = &g
	if _, err := e.Driver.ClusterFacts(ctx, &gone); !provider.IsNotFound(err) {
		t.Fatalf("missing cluster: %v", err)
	}
}

// TestUnofferedMachineType: GKE's refusal of a machine type a zone does
// not offer names no field; the driver reports it on the pool's machine
// type, not on the whole spec.
func TestUnofferedMachineType(t *testing.T) {
	e := newEmulated(t)
	for _, tc := range []struct {
		name, machine string
		zones         []string
	}{
		{"bogus", "n9-bogus-4", []string{"1"}},
		{"gpu-in-f", "g2-standard-8", []string{"1", "4"}},
	} {
		s := e.spec(tc.name, tc.zones...)
		s.MachineType = tc.machine
		_, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s)
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != provider.KindValidation || pe.Field != "spec.platform.gcp.machineType" || !strings.Contains(pe.Reason, "GCE_NOT_FOUND") {
			t.Errorf("%s: %v (%+v), want a validation error on spec.platform.gcp.machineType", tc.name, err, pe)
		}
	}
	// A change to a type the pool's zone does not offer: the same.
	s := e.spec("web", "4")
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	s.MachineType = "g2-standard-8"
	_, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s)
	if pe := (*provider.Error)(nil); !errors.As(err, &pe) || pe.Kind != provider.KindValidation || pe.Field != "spec.platform.gcp.machineType" {
		t.Fatalf("update to G2 in zone 4: %v", err)
	}
}

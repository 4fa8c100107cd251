package driver_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/providertest"
)

// TestClusterFacts: the versions, logical zones and shapes (with their
// figures and zone restrictions) learnt from GetNodePoolOptions and
// Compute's ListShapes on the emulator.
func TestClusterFacts(t *testing.T) {
	e := newEmulated(t)
	f, err := e.Driver.ClusterFacts(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != "1.31.1" || !reflect.DeepEqual(f.PoolVersions, []string{"1.29.10", "1.30.10", "1.31.1"}) {
		t.Errorf("versions: %q %q", f.Version, f.PoolVersions)
	}
	all := []string{"1", "2", "3"}
	if !reflect.DeepEqual(f.Zones, all) || !reflect.DeepEqual(f.DefaultZones, all) || len(f.Partial) > 0 || f.LearnedAt.IsZero() {
		t.Errorf("zones %q default %q partial %q learnt %v", f.Zones, f.DefaultZones, f.Partial, f.LearnedAt)
	}
	for _, want := range []kpool.MachineType{
		{Name: "VM.Standard.E4.Flex"},
		{Name: "VM.Standard2.4", CPUs: 4, MemoryMiB: 60 * 1024},
		{Name: "VM.Standard.E2.1", CPUs: 1, MemoryMiB: 8 * 1024},
		{Name: "BM.GPU.A10.4", CPUs: 64, MemoryMiB: 1024 * 1024, GPUs: 4, Zones: []string{"1"}},
		{Name: "VM.GPU.A10.1", CPUs: 15, MemoryMiB: 240 * 1024, GPUs: 1, Zones: []string{"1", "2"}},
		{Name: "VM.Standard.A1.Flex", Zones: []string{"1", "2"}},
	} {
		t.Run(want.Name, func(t *testing.T) {
			got, ok := f.MachineType(want.Name)
			if !ok || !reflect.DeepEqual(*got, want) {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
	// The cost: GetNodePoolOptions, and ListShapes once per domain (the
	// emulator's page size is 2: ten shapes are five pages each).
	shapes, options := 0, 0
	for _, c := range e.Sim.Calls() {
		switch {
		case strings.HasSuffix(c.Path, "/shapes"):
			shapes++
		case strings.Contains(c.Path, "/nodePoolOptions/"):
			options++
		}
	}
	if options != 1 || shapes > 3*5 {
		t.Errorf("%d GetNodePoolOptions, %d ListShapes pages", options, shapes)
	}
}

// TestClusterFactsShapesDenied: a key that may not read Compute's shapes
// still learns the versions, zones and shape names, with Partial saying
// what is missing.
func TestClusterFactsShapesDenied(t *testing.T) {
	e := newEmulated(t)
	e.Sim.SetShapesDenied(true)
	f, err := e.Driver.ClusterFacts(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Partial) != 1 || !strings.Contains(f.Partial[0], "ListShapes") || f.Version != "1.31.1" || len(f.Zones) != 3 {
		t.Fatalf("facts: %+v", f)
	}
	if mt, ok := f.MachineType("BM.GPU.A10.4"); !ok || mt.CPUs != 0 || mt.Zones != nil {
		t.Errorf("BM.GPU.A10.4 without ListShapes: %+v", mt)
	}
}

// TestCreateShapeNotOffered: OKE's refusal of a shape the region does not
// offer, or that a chosen availability domain lacks, is a validation error
// on the pool's shape.
func TestCreateShapeNotOffered(t *testing.T) {
	e := newEmulated(t)
	for _, tc := range []struct {
		name, shape string
		zones       []string
	}{
		{"unknown shape", "VM.Standard.Bogus9", []string{"1"}},
		{"not in zone 2", "BM.GPU.A10.4", []string{"1", "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := providertest.Spec(e.Cluster, "bad", kpool.NodePoolSpec{NodeCount: ptr.To(1), Zones: tc.zones,
				Platform: kpool.NodePoolPlatform{OCI: &kpool.OCINodePool{Shape: tc.shape}}})
			_, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s)
			var pe *provider.Error
			if !errors.As(err, &pe) || pe.Kind != provider.KindValidation || pe.Field != "spec.platform.oci.shape" {
				t.Fatalf("got %v (%+v)", err, pe)
			}
		})
	}
}

package driver_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// TestClusterFacts: the cluster's version and the region's Kubernetes
// sizes, with their figures, from the emulator's cluster GET and
// /v2/sizes (no instance sizes, no zones, no spot), in two calls.
func TestClusterFacts(t *testing.T) {
	e := newEmulated(t)
	f, err := e.Driver.ClusterFacts(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != "1.30.5" || len(f.PoolVersions) != 1 || f.PoolVersions[0] != "1.30.5" || len(f.Zones) > 0 || len(f.Partial) > 0 || f.LearnedAt.IsZero() {
		t.Errorf("facts: %+v", f)
	}
	for _, tc := range []struct {
		name string
		want *kpool.MachineType
	}{
		{"g4s.kube.medium", &kpool.MachineType{Name: "g4s.kube.medium", CPUs: 2, MemoryMiB: 4096, NoSpot: true}},
		{"g4c.kube.xlarge", &kpool.MachineType{Name: "g4c.kube.xlarge", CPUs: 64, MemoryMiB: 131072, NoSpot: true}},
		{"g4s.medium", nil}, // an instance size
		{"m5.large", nil},
	} {
		got, ok := f.MachineType(tc.name)
		switch {
		case tc.want == nil && ok:
			t.Errorf("%s offered: %+v", tc.name, got)
		case tc.want != nil && (!ok || got.Name != tc.want.Name || got.CPUs != tc.want.CPUs || got.MemoryMiB != tc.want.MemoryMiB || got.GPUs != 0 || !got.NoSpot || got.Zones != nil):
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	calls := 0
	for _, c := range e.Sim.Calls() {
		if c.Method == http.MethodGet {
			calls++
		}
	}
	if calls != 2 {
		t.Errorf("%d calls, want 2", calls)
	}
}

// TestClusterFactsSizesDenied: a key that may not read the sizes still
// learns the version; Partial says the sizes are missing.
func TestClusterFactsSizesDenied(t *testing.T) {
	e := newEmulated(t)
	e.Sim.SetSizesDenied(true)
	f, err := e.Driver.ClusterFacts(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != "1.30.5" || len(f.MachineTypes) > 0 || len(f.Partial) != 1 || !strings.Contains(f.Partial[0], "403") {
		t.Errorf("facts: %+v", f)
	}
}

// TestCreateUnknownSize: Civo's database_size_not_found for a size its
// catalogue lacks (or an instance size) is a validation error on the
// pool's size.
func TestCreateUnknownSize(t *testing.T) {
	e := newEmulated(t)
	for _, size := range []string{"g4s.kube.huge", "g4s.medium"} {
		_, err := e.Driver.NodePoolCreate(ctx, e.Cluster, e.spec("bad", 1, size))
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != provider.KindValidation || pe.Field != "spec.platform.civo.size" {
			t.Errorf("%s: %v", size, err)
		}
	}
}

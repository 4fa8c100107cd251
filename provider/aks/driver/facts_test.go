package driver_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/providertest"
)

// TestClusterFacts: the driver learns the cluster's version, the
// versions its pools may run, the location's zones and its VM sizes with
// their figures from the emulator's catalogues (through the SDK), in
// three calls and the SKU list's pages: a size offered in two zones and
// one restricted in a zone carry their zones, a size without Spot says
// so, a size restricted in the location and other resource types' SKUs
// are left out.
func TestClusterFacts(t *testing.T) {
	e := newEmulated(t)
	before := len(e.Sim.Calls())
	f, err := e.Driver.ClusterFacts(context.Background(), e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	if f.LearnedAt.IsZero() || f.Version != "1.30.4" || len(f.Partial) != 0 || f.DefaultZones != nil {
		t.Fatalf("facts: %+v", f)
	}
	if want := []string{"1.28.0", "1.29.0", "1.30.4"}; !slices.Equal(f.PoolVersions, want) {
		t.Errorf("pool versions %v, want %v", f.PoolVersions, want)
	}
	if want := []string{"1", "2", "3"}; !slices.Equal(f.Zones, want) {
		t.Errorf("zones %v, want %v", f.Zones, want)
	}
	for _, want := range []kpool.MachineType{
		{Name: "Standard_D4s_v5", CPUs: 4, MemoryMiB: 16384},
		{Name: "Standard_B2ms", CPUs: 2, MemoryMiB: 8192, NoSpot: true},
		{Name: "Standard_NC6s_v3", CPUs: 6, MemoryMiB: 112 * 1024, GPUs: 1},
		{Name: "Standard_NC24ads_A100_v4", CPUs: 24, MemoryMiB: 220 * 1024, GPUs: 1, Zones: []string{"1", "2"}},
		{Name: "Standard_M128ms", CPUs: 128, MemoryMiB: 3892 * 1024, Zones: []string{"1", "2"}},
	} {
		got, ok := f.MachineType(want.Name)
		if !ok || !reflect.DeepEqual(*got, want) {
			t.Errorf("%s: got %+v, want %+v", want.Name, got, want)
		}
	}
	for _, gone := range []string{"Standard_NC6", "Premium_LRS"} {
		if _, ok := f.MachineType(gone); ok {
			t.Errorf("%s: listed, want left out", gone)
		}
	}
	if len(f.MachineTypes) != 10 || !slices.IsSortedFunc(f.MachineTypes, func(a, b kpool.MachineType) int { return strings.Compare(a.Name, b.Name) }) {
		t.Errorf("%d machine types (want 10), sorted by name: %v", len(f.MachineTypes), f.MachineTypes)
	}
	count := map[string]int{}
	for _, c := range e.Sim.Calls()[before:] {
		p := strings.ToLower(c.Path)
		switch {
		case strings.HasSuffix(p, "/microsoft.compute/skus"):
			count["skus"]++
			if !strings.Contains(c.Query, "location+eq+%27westeurope%27") && !strings.Contains(c.Query, "location%20eq%20%27westeurope%27") {
				t.Errorf("SKU list without the location's filter: %s", c.Query)
			}
		case strings.HasSuffix(p, "/availableagentpoolversions"):
			count["versions"]++
		case strings.HasSuffix(p, "/managedclusters/"+clusterName):
			count["cluster"]++
		default:
			count["other"]++
		}
	}
	// The tests' emulator pages by 2: the location's 12 SKUs are 6 pages.
	if want := map[string]int{"cluster": 1, "versions": 1, "skus": 6}; !reflect.DeepEqual(count, want) {
		t.Errorf("calls %v, want %v", count, want)
	}
}

// TestClusterFactsPartial: a credential that may not read Compute's
// Resource SKUs (403) leaves the machine types and zones out, saying why
// in Partial; the rest is learnt. A cluster that is not there is an
// error, classified as the driver's other calls' are.
func TestClusterFactsPartial(t *testing.T) {
	e := newEmulated(t)
	e.Sim.DenySKUs(subscription)
	f, err := e.Driver.ClusterFacts(context.Background(), e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != "1.30.4" || len(f.PoolVersions) != 3 || f.MachineTypes != nil || f.Zones != nil ||
		len(f.Partial) != 1 || !strings.Contains(f.Partial[0], "AuthorizationFailed") {
		t.Fatalf("facts: %+v", f)
	}
	gone := *e.Cluster
	gone.Spec.Platform.Azure = ptr.To(*e.Cluster.Spec.Platform.Azure)
	gone.Spec.Platform.Azure.ClusterName = "gone"
	if _, err := e.Driver.ClusterFacts(context.Background(), &gone); !provider.IsNotFound(err) {
		t.Fatalf("a missing cluster: %v, want not found", err)
	}
}

// TestVMSizeNotOffered: AKS's refusal of a VM size the location does not
// offer (400 BadRequest, naming no property) and of a zone the size is
// not offered in (400 AvailabilityZoneNotSupported) come back from
// NodePoolCreate as validation errors on the field they are about, not
// on the whole spec.
func TestVMSizeNotOffered(t *testing.T) {
	e := newEmulated(t)
	for _, tc := range []struct {
		size, field string
		zones       []string
	}{
		{size: "Standard_Bogus_v9", field: "spec.platform.azure.vmSize"},
		{size: "Standard_NC6", field: "spec.platform.azure.vmSize"},
		{size: "Standard_NC24ads_A100_v4", zones: []string{"3"}, field: "spec.zones"},
	} {
		s := providertest.Spec(e.Cluster, "refused", kpool.NodePoolSpec{NodeCount: ptr.To(1), Zones: tc.zones,
			Platform: kpool.NodePoolPlatform{Azure: &kpool.AzureNodePool{VMSize: tc.size}}})
		_, err := e.Driver.NodePoolCreate(context.Background(), e.Cluster, s)
		var pe *provider.Error
		if !provider.IsValidation(err) || !errors.As(err, &pe) || pe.Field != tc.field {
			t.Errorf("%s %v: got %v (field %q), want a validation error on %s", tc.size, tc.zones, err, fieldOf(pe), tc.field)
		}
	}
}

func fieldOf(e *provider.Error) string {
	if e == nil {
		return ""
	}
	return e.Field
}

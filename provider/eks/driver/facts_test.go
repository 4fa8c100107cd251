package driver_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// TestClusterFacts: the driver learns the test cluster's facts from EKS
// and EC2's catalogue on the emulator, paged by 2: its version (the only
// one a node group may run), its zones as logical zones, and the instance
// types its zones offer with their figures, p4d.24xlarge in zone 2 alone
// and u-6tb1.112xlarge without spot.
func TestClusterFacts(t *testing.T) {
	e := newEmulated(t)
	f, err := e.Driver.ClusterFacts(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != "1.31" || !slices.Equal(f.PoolVersions, []string{"1.31"}) || !slices.Equal(f.Zones, []string{"1", "2", "3"}) ||
		!slices.Equal(f.DefaultZones, []string{"1", "2", "3"}) || len(f.Partial) != 0 || f.LearnedAt.IsZero() {
		t.Fatalf("facts: %+v", f)
	}
	for _, want := range []kpool.MachineType{
		{Name: "m5.large", CPUs: 2, MemoryMiB: 8192},
		{Name: "g5.xlarge", CPUs: 4, MemoryMiB: 16384, GPUs: 1},
		{Name: "p4d.24xlarge", CPUs: 96, MemoryMiB: 1179648, GPUs: 8, Zones: []string{"2"}},
		{Name: "u-6tb1.112xlarge", CPUs: 448, MemoryMiB: 6291456, NoSpot: true},
		{Name: "t3.medium", CPUs: 2, MemoryMiB: 4096},
	} {
		got, ok := f.MachineType(want.Name)
		if !ok || got.CPUs != want.CPUs || got.MemoryMiB != want.MemoryMiB || got.GPUs != want.GPUs || got.NoSpot != want.NoSpot ||
			!slices.Equal(got.Zones, want.Zones) || (want.Zones == nil) != (got.Zones == nil) {
			t.Errorf("%s: %+v, want %+v", want.Name, got, want)
		}
	}
	if _, ok := f.MachineType("p3.2xlarge"); ok {
		t.Error("p3.2xlarge is not offered in us-west-2")
	}
	if !slices.IsSortedFunc(f.MachineTypes, func(a, b kpool.MachineType) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("machine types not sorted")
	}
	again, err := e.Driver.ClusterFacts(ctx, e.Cluster)
	if err != nil || len(again.MachineTypes) != len(f.MachineTypes) {
		t.Fatalf("learnt again: %v", err)
	}
}

// TestClusterFactsPartial: an EC2 catalogue the credential may not read is
// noted in Partial, and what could be learnt is kept; a missing cluster is
// an error, not found.
func TestClusterFactsPartial(t *testing.T) {
	e := newEmulated(t)
	e.Sim.Deny("DescribeInstanceTypes", true)
	f, err := e.Driver.ClusterFacts(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := f.MachineType("p4d.24xlarge")
	if len(f.Partial) != 1 || !strings.Contains(f.Partial[0], "DescribeInstanceTypes") || !ok || m.CPUs != 0 || !slices.Equal(m.Zones, []string{"2"}) {
		t.Fatalf("without figures: %+v", f)
	}
	e.Sim.Deny("DescribeInstanceTypeOfferings", true)
	if f, err = e.Driver.ClusterFacts(ctx, e.Cluster); err != nil || len(f.MachineTypes) != 0 || len(f.Partial) != 1 || f.Version != "1.31" {
		t.Fatalf("without offerings: %v %+v", err, f)
	}
	e.Sim.Deny("DescribeSubnets", true)
	if f, err = e.Driver.ClusterFacts(ctx, e.Cluster); err != nil || len(f.Zones) != 0 || len(f.Partial) != 2 {
		t.Fatalf("without subnets: %v %+v", err, f)
	}
	missing := clusterAt(e.Cluster.Spec.Endpoint)
	missing.Spec.Platform.AWS.ClusterName = "nope"
	if _, err := e.Driver.ClusterFacts(ctx, missing); !provider.IsNotFound(err) {
		t.Fatalf("a missing cluster: %v", err)
	}
}

// TestUnofferedMachineType: EKS's refusal of an instance type the region
// does not offer, or does not offer in a chosen zone, comes back from
// NodePoolCreate as a validation error on the pool's instance type.
func TestUnofferedMachineType(t *testing.T) {
	e := newEmulated(t)
	for _, tc := range []struct {
		name, machineType string
		zones             []string
		words             string
	}{
		{"unknown", "m5.banana", nil, "do not exist: [m5.banana]"},
		{"not in the region", "p3.2xlarge", []string{"1"}, "do not exist: [p3.2xlarge]"},
		{"not in the zone", "p4d.24xlarge", []string{"1"}, "not supported in your requested Availability Zone (us-west-2a)"},
		{"not in every zone", "p4d.24xlarge", nil, "not supported in your requested Availability Zone"},
	} {
		s := e.Harness(t).Spec("unoffered")
		s.MachineType, s.Zones = tc.machineType, tc.zones
		_, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s)
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != provider.KindValidation || pe.Field != "spec.platform.aws.instanceType" || !strings.Contains(pe.Reason, tc.words) {
			t.Errorf("%s: %v, want a validation error on spec.platform.aws.instanceType saying %q", tc.name, err, tc.words)
		}
	}
	s := e.Harness(t).Spec("offered")
	s.MachineType, s.Zones = "p4d.24xlarge", []string{"2"}
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatalf("p4d.24xlarge in zone 2: %v", err)
	}
}

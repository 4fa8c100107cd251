package eks

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kpool/kpool/cloudsim/sim"
)

// The EC2 catalogue the emulator ships: the instance types it knows, with
// their real figures (vCPUs, memory, GPUs, whether EC2 sells them as
// spot), and which of them each region's zones offer. A region not listed
// offers nothing. The figures are those of EC2's instance type pages
// (https://aws.amazon.com/ec2/instance-types/) as DescribeInstanceTypes
// returns them; which zone offers what differs by account (zone names
// map to zone ids differently in each), so the restrictions below are
// illustrations of real ones, not any account's.
type instanceSpec struct {
	name      string
	vcpus     int
	memoryMiB int
	arch      string // x86_64 or arm64
	gpus      int    // NVIDIA GPUs
	gpuName   string
	gpuMiB    int // each GPU's memory
	// noSpot: SupportedUsageClasses is on-demand only.
	noSpot bool
}

// instanceSpecs are the instance types the emulator knows, by name.
var instanceSpecs = []instanceSpec{
	{name: "c5.xlarge", vcpus: 4, memoryMiB: 8192, arch: "x86_64"},
	{name: "g4dn.xlarge", vcpus: 4, memoryMiB: 16384, arch: "x86_64", gpus: 1, gpuName: "T4", gpuMiB: 16384},
	{name: "g5.xlarge", vcpus: 4, memoryMiB: 16384, arch: "x86_64", gpus: 1, gpuName: "A10G", gpuMiB: 24576},
	{name: "m4.xlarge", vcpus: 4, memoryMiB: 16384, arch: "x86_64"},
	{name: "m5.2xlarge", vcpus: 8, memoryMiB: 32768, arch: "x86_64"},
	{name: "m5.large", vcpus: 2, memoryMiB: 8192, arch: "x86_64"},
	{name: "m5.xlarge", vcpus: 4, memoryMiB: 16384, arch: "x86_64"},
	{name: "m6g.large", vcpus: 2, memoryMiB: 8192, arch: "arm64"},
	{name: "m6i.large", vcpus: 2, memoryMiB: 8192, arch: "x86_64"},
	{name: "p3.2xlarge", vcpus: 8, memoryMiB: 62464, arch: "x86_64", gpus: 1, gpuName: "V100", gpuMiB: 16384},
	{name: "p4d.24xlarge", vcpus: 96, memoryMiB: 1179648, arch: "x86_64", gpus: 8, gpuName: "A100", gpuMiB: 40960},
	{name: "r5.large", vcpus: 2, memoryMiB: 16384, arch: "x86_64"},
	{name: "t3.large", vcpus: 2, memoryMiB: 8192, arch: "x86_64"},
	{name: "t3.medium", vcpus: 2, memoryMiB: 4096, arch: "x86_64"},
	// EC2's High Memory instances are sold On-Demand, reserved and under
	// Savings Plans, never as Spot (https://aws.amazon.com/ec2/instance-types/high-memory/).
	{name: "u-6tb1.112xlarge", vcpus: 448, memoryMiB: 6291456, arch: "x86_64", noSpot: true},
}

// specOf returns an instance type the emulator knows.
func specOf(name string) (instanceSpec, bool) {
	i := slices.IndexFunc(instanceSpecs, func(s instanceSpec) bool { return s.name == name })
	if i < 0 {
		return instanceSpec{}, false
	}
	return instanceSpecs[i], true
}

// regionCatalog is what a region offers: its zones (name suffix letters,
// each with its zone id) and, for each instance type it offers, the zones
// that offer it (nil: every zone).
type regionCatalog struct {
	zoneIDPrefix string // usw2-az
	zones        string // the zone letters, in order: "abcd"
	offers       map[string]string
}

// every is an offer in every zone of its region.
const every = ""

// regions are the regions the emulator has a catalogue of: the demo's and
// the tests' us-west-2, and two more.
var regions = map[string]regionCatalog{
	"us-west-2": {zoneIDPrefix: "usw2-az", zones: "abcd", offers: map[string]string{
		"c5.xlarge": every, "g5.xlarge": every, "m5.2xlarge": every, "m5.large": every, "m5.xlarge": every,
		"m6g.large": every, "m6i.large": every, "r5.large": every, "t3.large": every, "t3.medium": every,
		"u-6tb1.112xlarge": every,
		// "Your requested instance type (g4dn.xlarge) is not supported in
		// your requested Availability Zone (us-west-2d)", eksctl-io/eksctl#6461;
		// m4.xlarge the same, awslabs/ec2-spot-workshops#154.
		"g4dn.xlarge": "abc", "m4.xlarge": "abc",
		// p4d.24xlarge is in few zones of a region.
		"p4d.24xlarge": "bd",
	}},
	"us-east-1": {zoneIDPrefix: "use1-az", zones: "abcdef", offers: map[string]string{
		"c5.xlarge": every, "g5.xlarge": "abcdf", "m5.2xlarge": every, "m5.large": every, "m5.xlarge": every,
		"m6g.large": every, "m6i.large": every, "r5.large": every, "t3.large": every, "t3.medium": every,
		"m4.xlarge": every, "g4dn.xlarge": "abcdf", "p4d.24xlarge": "ac", "u-6tb1.112xlarge": "abcd",
	}},
	// "Your requested instance type (p3.2xlarge) is not supported in your
	// requested Availability Zone (eu-central-1c)",
	// dspace-group/dspace-reference-architecture-aws#100.
	"eu-central-1": {zoneIDPrefix: "euc1-az", zones: "abc", offers: map[string]string{
		"c5.xlarge": every, "g4dn.xlarge": every, "g5.xlarge": every, "m5.2xlarge": every, "m5.large": every,
		"m5.xlarge": every, "m6g.large": every, "m6i.large": every, "r5.large": every, "t3.large": every,
		"t3.medium": every, "p3.2xlarge": "ab",
	}},
}

// offering is one instance type offered in one zone.
type offering struct{ instanceType, zone, zoneID string }

// key sorts and pages offerings: by zone, then instance type.
func (o offering) key() string { return o.zone + "/" + o.instanceType }

// offerings returns a region's offerings by zone, then instance type.
func (r regionCatalog) offerings(region string) []offering {
	var out []offering
	for i, letter := range r.zones {
		for _, t := range slices.Sorted(maps.Keys(r.offers)) {
			if zs := r.offers[t]; zs == every || strings.ContainsRune(zs, letter) {
				out = append(out, offering{instanceType: t, zone: region + string(letter), zoneID: r.zoneID(i)})
			}
		}
	}
	return out
}

// zoneID is the id of the region's ith zone (usw2-az1 for the first).
func (r regionCatalog) zoneID(i int) string { return r.zoneIDPrefix + string(rune('1'+i)) }

// zonesOf returns the zone names of the region that offer an instance
// type; false if the region offers it nowhere.
func zonesOf(region, instanceType string) ([]string, bool) {
	r, ok := regions[region]
	if !ok {
		return nil, false
	}
	zs, ok := r.offers[instanceType]
	if !ok {
		return nil, false
	}
	if zs == every {
		zs = r.zones
	}
	var out []string
	for _, l := range zs {
		out = append(out, region+string(l))
	}
	return out, true
}

// zoneIDOf returns a zone name's id in its region ("" if unknown).
func zoneIDOf(region, zone string) string {
	r, ok := regions[region]
	if !ok || !strings.HasPrefix(zone, region) || len(zone) != len(region)+1 {
		return ""
	}
	i := strings.IndexByte(r.zones, zone[len(zone)-1])
	if i < 0 {
		return ""
	}
	return r.zoneID(i)
}

// checkOffered refuses a node group whose instance types the cluster's
// region does not offer, or does not offer in one of its subnets' zones,
// as EKS does: the first with 400 InvalidParameterException "The
// following supplied instance types do not exist: [m4.large]"
// (terraform-aws-modules/terraform-aws-eks#1279), the second with 400
// InvalidRequestException "Your requested instance type (m4.xlarge) is
// not supported in your requested Availability Zone (us-west-2d). Please
// retry your request by not specifying an Availability Zone or choosing
// us-west-2a, us-west-2b, us-west-2c." (awslabs/ec2-spot-workshops#154,
// eksctl-io/eksctl#6461).
func checkOffered(c *cluster, ng *Nodegroup) *sim.Reply {
	var missing []string
	for _, t := range ng.InstanceTypes {
		if _, ok := zonesOf(c.region, t); !ok {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		return invalid(c, ng.NodegroupName, "The following supplied instance types do not exist: [%s]", strings.Join(missing, ", "))
	}
	for _, t := range ng.InstanceTypes {
		zones, _ := zonesOf(c.region, t)
		for _, id := range ng.Subnets {
			if z := c.subnets[id]; !slices.Contains(zones, z) {
				return fail(errInvalidRequest, apiError{ClusterName: c.name, NodegroupName: ng.NodegroupName,
					Message: fmt.Sprintf("Your requested instance type (%s) is not supported in your requested Availability Zone (%s). Please retry your request by not specifying an Availability Zone or choosing %s.",
						t, z, strings.Join(zones, ", "))})
			}
		}
	}
	return nil
}

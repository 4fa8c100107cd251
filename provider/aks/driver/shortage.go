package driver

import (
	"context"
	"regexp"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// capacityCodes are AKS's codes for Azure having no capacity for what a
// pool asks, whatever the status they come with: the scale set's
// allocation failures AKS passes on as a create's or scale's operation
// error (ZonalAllocationFailed, AllocationFailed,
// OverconstrainedAllocationRequest and its zonal twin:
// learn.microsoft.com/troubleshoot/azure/azure-kubernetes/error-codes/
// zonalallocation-allocationfailed-error; blog.aks.azure.com 2025-12-06,
// "Navigating Capacity Challenges on AKS"), and SkuNotAvailable, Compute's
// refusal of a size "currently not available" in a location or zone
// ("Following SKUs have failed for Capacity Restrictions", 409: recorded in
// Azure-Samples/azuresandbox issue 70). SkuNotAvailable is KindCapacity, not
// a refusal of the spec: a size the subscription may never use there is
// another answer (BadRequest "is not allowed in your subscription",
// AvailabilityZoneNotSupported), which ClusterFacts' catalogue also shows
// and which stays a validation error. Only the error's own code counts: a
// wrapper whose details mention an allocation failure is not read as one.
var capacityCodes = map[string]bool{
	"ZonalAllocationFailed": true, "AllocationFailed": true, "OverconstrainedZonalAllocationRequest": true,
	"OverconstrainedAllocationRequest": true, "SkuNotAvailable": true,
}

// namedZones finds the zones an allocation error names: "in zone '2'",
// "in zones '1', '3'" (the emulator's wording; Compute's usual message
// says "in this zone" and names none).
var (
	namedZones = regexp.MustCompile(`(?i)\bzones? ((?:'[^']+'(?:,\s*)?)+)`)
	quoted     = regexp.MustCompile(`'([^']+)'`)
)

// zonesIn are the logical zones an error message names; nil for none.
func zonesIn(c *kpool.Cluster, msg string) []string {
	var out []string
	for _, m := range namedZones.FindAllStringSubmatch(msg, -1) {
		for _, q := range quoted.FindAllStringSubmatch(m[1], -1) {
			if l, err := profile.LogicalZone(c, q[1]); err == nil {
				out = append(out, l)
			}
		}
	}
	return out
}

// shortage sets a failed pool's Shortage when its error says Azure ran out
// of capacity (capacityCodes), and reads the machines it has: ARM's count
// is the one asked for, and the nodes the operation got are up (partial
// success). Reading them is best effort: without them the count stays
// unknown, as for any failed pool.
func (d *Driver) shortage(ctx context.Context, c *kpool.Cluster, cs *clients, a *kpool.AzureCluster, p *provider.Pool, failed *errorDetail) {
	if failed == nil || !capacityCodes[failed.Code] {
		return
	}
	p.Shortage = &provider.Shortage{Code: failed.Code, Message: provider.FirstLine(failed.Message), Zones: zonesIn(c, failed.Message)}
	ms, err := d.machines(ctx, cs, a, p.ProviderName)
	if err != nil {
		return
	}
	p.Nodes, p.ReadyNodes, p.ReadyUnknown = len(ms), len(ms), false
	if len(p.Zones) == 1 {
		p.NodesByZone = map[string]int{p.Zones[0]: len(ms)}
	}
}

package driver

import (
	"context"
	"regexp"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// ec2CapacityCodes are EC2's words, inside an AsgInstanceLaunchFailures
// issue, for a launch that failed for want of capacity rather than for
// the account's limits or the configuration: "Could not launch On-Demand
// Instances. InsufficientInstanceCapacity - We currently do not have
// sufficient m5.large capacity in the Availability Zone you requested
// (us-west-2b)…" (eksctl-io/eksctl#4732), Spot's "Could not launch Spot
// Instances. InsufficientInstanceCapacity - There is no Spot capacity
// available…" (cortexlabs/cortex#1258) or "… UnfulfillableCapacity -
// Unable to fulfill capacity…" (EC2 API Reference, error codes).
var ec2CapacityCodes = []string{"InsufficientInstanceCapacity", "UnfulfillableCapacity"}

// zoneInMessage is the Availability Zone EC2 names: "in the Availability
// Zone you requested (us-west-2b)".
var zoneInMessage = regexp.MustCompile(`Availability Zone you requested \(([a-z0-9-]+)\)`)

// shortageOf is a node group's capacity shortage, from its health: an
// AsgInstanceLaunchFailures issue whose message carries one of EC2's
// capacity codes (Code: that code; Zones: the zone EC2 names, as a logical
// zone), or InsufficientFreeAddresses, subnets out of addresses (Code: the
// issue's; Zones: those of the subnets it names). Nil when it has none:
// another launch failure (an instance quota, a bad key) is no shortage,
// and InstanceLimitExceeded is the account's quota.
func shortageOf(c *kpool.Cluster, ng *types.Nodegroup) *provider.Shortage {
	if ng.Health == nil {
		return nil
	}
	for _, is := range ng.Health.Issues {
		msg := aws.ToString(is.Message)
		switch is.Code {
		case types.NodegroupIssueCodeAsgInstanceLaunchFailures:
			i := slices.IndexFunc(ec2CapacityCodes, func(code string) bool { return strings.Contains(msg, code) })
			if i < 0 {
				continue
			}
			s := &provider.Shortage{Code: ec2CapacityCodes[i], Message: provider.FirstLine(msg)}
			if m := zoneInMessage.FindStringSubmatch(msg); m != nil {
				s.Zones = logicalZones(c, []string{m[1]})
			}
			return s
		case types.NodegroupIssueCodeInsufficientFreeAddresses:
			return &provider.Shortage{Code: string(is.Code), Message: provider.FirstLine(msg), Zones: logicalZones(c, clusterSubnetZones(c, is.ResourceIds))}
		}
	}
	return nil
}

// clusterSubnetZones are the zones of the cluster's subnets among ids.
func clusterSubnetZones(c *kpool.Cluster, ids []string) []string {
	var out []string
	if a := c.Spec.Platform.AWS; a != nil {
		for z, id := range a.Subnets {
			if slices.Contains(ids, id) {
				out = append(out, z)
			}
		}
	}
	return out
}

// logicalZones maps zone names to the cluster's logical zones, sorted;
// a zone the cluster does not know is left out (nil when none is known).
func logicalZones(c *kpool.Cluster, names []string) []string {
	var out []string
	for _, z := range names {
		if l, err := profile.LogicalZone(c, z); err == nil && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}

// countInstances sets a short node group's real node count: EKS reports
// only the desired size, so the instances its Auto Scaling group did
// launch are counted with EC2's DescribeInstances, by the tags EKS gives
// them (eks:cluster-name, eks:nodegroup-name), pending or running. When
// EC2 does not answer, the counts stay unknown (ReadyUnknown), and Extra
// says why.
func countInstances(ctx context.Context, cl *ec2.Client, c *kpool.Cluster, ng *types.Nodegroup, p *provider.Pool) {
	in := &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:eks:cluster-name"), Values: []string{aws.ToString(ng.ClusterName)}},
		{Name: aws.String("tag:eks:nodegroup-name"), Values: []string{aws.ToString(ng.NodegroupName)}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running"}},
	}}
	byZone := map[string]int{}
	n := 0
	pager := ec2.NewDescribeInstancesPaginator(cl, in)
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			p.Extra["instances"] = "DescribeInstances failed: " + provider.FirstLine(classify(err, "").Error())
			return
		}
		for _, r := range page.Reservations {
			for _, i := range r.Instances {
				n++
				if i.Placement != nil {
					if l := logicalZones(c, []string{aws.ToString(i.Placement.AvailabilityZone)}); len(l) == 1 {
						byZone[l[0]]++
					}
				}
			}
		}
	}
	p.Nodes, p.ReadyNodes, p.ReadyUnknown, p.NodesByZone = n, n, false, byZone
}

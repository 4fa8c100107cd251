package driver

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/smithy-go"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

var _ provider.FactsReader = (*Driver)(nil)

// ClusterFacts learns what EKS and EC2 offer a cluster's node groups:
// the cluster's Kubernetes version (DescribeCluster), which is the only
// one a node group may be created at or updated to (CreateNodegroup:
// "You can only create a node group for your cluster that is equal to the
// current Kubernetes version for the cluster"); its zones, those of its
// subnets (DescribeSubnets of DescribeCluster's resourcesVpcConfig); and
// the instance types those zones offer (DescribeInstanceTypeOfferings by
// availability zone, filtered to them) with their figures
// (DescribeInstanceTypes). A pool that names no zones is placed in every
// subnet of the cluster's spec: those zones are DefaultZones.
//
// Its cost, on EC2's default pages: one DescribeCluster, one
// DescribeSubnets, one DescribeInstanceTypeOfferings per 1,000 offerings
// (three for a region's ~700 types in four zones) and one
// DescribeInstanceTypes per 100 types (about nine): some 14 calls per
// cluster per slow resync. An EC2 catalogue the credential may not read
// (UnauthorizedOperation) is noted in Partial; any other error is the
// cluster's, classified as the driver's other calls are.
func (d *Driver) ClusterFacts(ctx context.Context, c *kpool.Cluster) (*kpool.ClusterFacts, error) {
	cl, a, err := d.client(ctx, c)
	if err != nil {
		return nil, err
	}
	out, err := cl.DescribeCluster(ctx, &awseks.DescribeClusterInput{Name: aws.String(a.ClusterName)})
	if err != nil {
		return nil, classify(err, "")
	}
	f := &kpool.ClusterFacts{LearnedAt: time.Now(), Version: aws.ToString(out.Cluster.Version)}
	if f.Version != "" {
		f.PoolVersions = []string{f.Version}
	}
	for _, z := range kpool.SortedKeys(a.Subnets) {
		if l, err := profile.LogicalZone(c, z); err == nil {
			f.DefaultZones = append(f.DefaultZones, l)
		}
	}
	ec2cl, err := d.ec2Client(ctx, c)
	if err != nil {
		return nil, err
	}
	var subnets []string
	if v := out.Cluster.ResourcesVpcConfig; v != nil {
		subnets = v.SubnetIds
	}
	zones, err := subnetZones(ctx, ec2cl, subnets)
	switch {
	case unauthorized(err):
		f.Partial = append(f.Partial, "zones: the credential may not call ec2:DescribeSubnets, so the cluster's zones are not known and instance types are those of the region")
	case err != nil:
		return nil, classify(err, "")
	}
	for _, z := range zones {
		if l, err := profile.LogicalZone(c, z); err == nil {
			f.Zones = append(f.Zones, l)
		}
	}
	if err := d.machineTypes(ctx, ec2cl, c, zones, f); err != nil {
		return nil, err
	}
	f.Sort()
	return f, nil
}

// subnetZones returns the zone names of subnets, each once, in order.
func subnetZones(ctx context.Context, cl *ec2.Client, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var zones []string
	pager := ec2.NewDescribeSubnetsPaginator(cl, &ec2.DescribeSubnetsInput{SubnetIds: ids})
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, s := range page.Subnets {
			if z := aws.ToString(s.AvailabilityZone); z != "" && !slices.Contains(zones, z) {
				zones = append(zones, z)
			}
		}
	}
	slices.Sort(zones)
	return zones, nil
}

// machineTypes fills f's machine types: the instance types offered in
// zones (the region's when zones are not known), each with the logical
// zones that offer it (nil: every zone), then their figures.
func (d *Driver) machineTypes(ctx context.Context, cl *ec2.Client, c *kpool.Cluster, zones []string, f *kpool.ClusterFacts) error {
	in := &ec2.DescribeInstanceTypeOfferingsInput{LocationType: ec2types.LocationTypeRegion}
	if len(zones) > 0 {
		in.LocationType = ec2types.LocationTypeAvailabilityZone
		in.Filters = []ec2types.Filter{{Name: aws.String("location"), Values: zones}}
	}
	offered := map[string][]string{} // type to zone names
	pager := ec2.NewDescribeInstanceTypeOfferingsPaginator(cl, in)
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if unauthorized(err) {
			f.Partial = append(f.Partial, "machine types: the credential may not call ec2:DescribeInstanceTypeOfferings")
			return nil
		}
		if err != nil {
			return classify(err, "")
		}
		for _, o := range page.InstanceTypeOfferings {
			t := string(o.InstanceType)
			offered[t] = append(offered[t], aws.ToString(o.Location))
		}
	}
	byName := map[string]int{}
	for _, t := range kpool.SortedKeys(offered) {
		m := kpool.MachineType{Name: t}
		if len(zones) > 0 && !containsAll(offered[t], zones) {
			m.Zones = []string{}
			for _, z := range offered[t] {
				if l, err := profile.LogicalZone(c, z); err == nil {
					m.Zones = append(m.Zones, l)
				}
			}
		}
		byName[t] = len(f.MachineTypes)
		f.MachineTypes = append(f.MachineTypes, m)
	}
	return figures(ctx, cl, f, byName)
}

// figures fills the machine types' CPUs, memory, GPUs and spot from
// DescribeInstanceTypes, the region's every type, paged.
func figures(ctx context.Context, cl *ec2.Client, f *kpool.ClusterFacts, byName map[string]int) error {
	if len(byName) == 0 {
		return nil
	}
	pager := ec2.NewDescribeInstanceTypesPaginator(cl, &ec2.DescribeInstanceTypesInput{})
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if unauthorized(err) {
			f.Partial = append(f.Partial, "machine type figures: the credential may not call ec2:DescribeInstanceTypes, so CPUs, memory, GPUs and spot are not known")
			return nil
		}
		if err != nil {
			return classify(err, "")
		}
		for _, it := range page.InstanceTypes {
			i, ok := byName[string(it.InstanceType)]
			if !ok {
				continue
			}
			m := &f.MachineTypes[i]
			if it.VCpuInfo != nil {
				m.CPUs = int(aws.ToInt32(it.VCpuInfo.DefaultVCpus))
			}
			if it.MemoryInfo != nil {
				m.MemoryMiB = int(aws.ToInt64(it.MemoryInfo.SizeInMiB))
			}
			if it.GpuInfo != nil {
				for _, g := range it.GpuInfo.Gpus {
					m.GPUs += int(aws.ToInt32(g.Count))
				}
			}
			m.NoSpot = !slices.Contains(it.SupportedUsageClasses, ec2types.UsageClassTypeSpot)
		}
	}
	return nil
}

// containsAll reports whether have holds every one of want.
func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// unauthorized reports whether EC2 refused a call for the caller's IAM
// policy (UnauthorizedOperation, 403), not for its signature or key.
func unauthorized(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && (ae.ErrorCode() == "UnauthorizedOperation" || ae.ErrorCode() == "AccessDenied")
}

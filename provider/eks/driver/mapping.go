package driver

import (
	"regexp"

	"github.com/aws/aws-sdk-go-v2/aws"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/eks"
)

var (
	minorRE   = regexp.MustCompile(`^v?(\d+\.\d+)(\.\d+)?$`)
	releaseRE = regexp.MustCompile(`^v?((\d+\.\d+)\.\d+-\d{8})$`)
)

// unsupported refuses what EKS cannot take. User data and the volume
// are the node group's launch template's (template.go).
func unsupported(s provider.PoolSpec) error {
	switch {
	case len(s.Accelerators) > 0:
		return provider.NotImplementedError(platform, "EKS takes GPUs from the instance type, not from an accelerators list")
	}
	return nil
}

// createInput maps a neutral spec to CreateNodegroup.
func createInput(c *kpool.Cluster, a *kpool.AWSCluster, s provider.PoolSpec) (*awseks.CreateNodegroupInput, error) {
	subnets, err := subnetsOf(c, s.Zones)
	if err != nil {
		return nil, err
	}
	in := &awseks.CreateNodegroupInput{
		ClusterName:   aws.String(a.ClusterName),
		NodegroupName: aws.String(s.ProviderName),
		NodeRole:      aws.String(a.NodeRoleARN),
		Subnets:       subnets,
		ScalingConfig: scaling(s, -1),
		CapacityType:  types.CapacityTypesOnDemand,
		Labels:        copyMap(s.Labels),
		Tags:          tags(s),
	}
	if s.MachineType != "" {
		in.InstanceTypes = []string{s.MachineType}
	}
	if s.Spot {
		in.CapacityType = types.CapacityTypesSpot
	}
	if s.DiskSizeGB > 0 {
		in.DiskSize = aws.Int32(int32(s.DiskSizeGB))
	}
	if t := s.Settings["amiType"]; t != "" {
		in.AmiType = types.AMITypes(t)
	}
	for _, t := range s.Taints {
		in.Taints = append(in.Taints, taintOf(t))
	}
	in.UpdateConfig = updateConfigOf(s.Upgrade)
	version, release := versions(s.Version)
	if version != "" {
		in.Version = aws.String(version)
	}
	if release != "" {
		in.ReleaseVersion = aws.String(release)
	}
	return in, nil
}

// subnetsOf maps logical zones to the cluster's subnets: a pool in no zone
// gets every subnet of the cluster, in zone order.
func subnetsOf(c *kpool.Cluster, zones []string) ([]string, error) {
	a := c.Spec.Platform.AWS
	if len(zones) == 0 {
		var out []string
		for _, z := range kpool.SortedKeys(a.Subnets) {
			out = append(out, a.Subnets[z])
		}
		if len(out) == 0 {
			return nil, provider.ValidationError(platform, "spec.platform.aws.subnets", "cluster %s has no subnets", c.Name)
		}
		return out, nil
	}
	var out []string
	for _, z := range zones {
		id, err := eks.Subnet(c, z)
		if err != nil {
			return nil, provider.ValidationError(platform, "spec.zones", "%v", err)
		}
		out = append(out, id)
	}
	return out, nil
}

// scaling maps the count and bounds to a scalingConfig. With autoscaling
// on, desiredSize is current (the autoscaler's) clamped to the bounds, or
// the spec's count when current is negative (a create); with it off,
// minSize = maxSize = desiredSize = the count, except that EKS wants
// maxSize >= 1: a pool of 0 nodes is min 0, max 1, desired 0.
func scaling(s provider.PoolSpec, current int) *types.NodegroupScalingConfig {
	if !s.Autoscaling {
		n := int32(s.Count)
		return &types.NodegroupScalingConfig{MinSize: aws.Int32(n), MaxSize: aws.Int32(max(n, 1)), DesiredSize: aws.Int32(n)}
	}
	want := s.Count
	if current >= 0 {
		want = current
	}
	want = min(max(want, s.MinCount), s.MaxCount)
	return &types.NodegroupScalingConfig{MinSize: aws.Int32(int32(s.MinCount)), MaxSize: aws.Int32(int32(s.MaxCount)), DesiredSize: aws.Int32(int32(want))}
}

// versions reads a kpool version as EKS's: 1.31 or 1.31.2 is the version
// 1.31 (EKS picks the patch); 1.31.2-20250101 is also the AMI release
// version.
func versions(v string) (version, release string) {
	if m := releaseRE.FindStringSubmatch(v); m != nil {
		return m[2], m[1]
	}
	if m := minorRE.FindStringSubmatch(v); m != nil {
		return m[1], ""
	}
	return v, "" // EKS refuses it, naming the field
}

// versionMatches reports whether a node group runs the spec's version.
func versionMatches(ng *types.Nodegroup, v string) bool {
	if v == "" {
		return true
	}
	version, release := versions(v)
	return aws.ToString(ng.Version) == version && (release == "" || aws.ToString(ng.ReleaseVersion) == release)
}

// tags are a node group's tags: the user's and the owner's mark. EKS
// node groups take at most 50 tags, keys of 1-128 characters and values
// of at most 256, of letters, digits, spaces and _ . : / = + - @, none
// starting aws: (CreateNodegroup and TagResource in the EKS API Reference;
// "Tag restrictions", https://docs.aws.amazon.com/eks/latest/userguide/eks-using-tags.html).
func tags(s provider.PoolSpec) map[string]string { return provider.TagKeys.Put(s.Tags, s.Owner) }

// taintOf maps a kpool taint to EKS's.
func taintOf(t kpool.Taint) types.Taint {
	et := types.Taint{Key: aws.String(t.Key), Effect: effects[t.Effect]}
	if et.Effect == "" {
		et.Effect = types.TaintEffect(t.Effect) // EKS refuses it, naming it
	}
	if t.Value != "" {
		et.Value = aws.String(t.Value)
	}
	return et
}

var effects = map[string]types.TaintEffect{
	kpool.EffectNoSchedule:       types.TaintEffectNoSchedule,
	kpool.EffectPreferNoSchedule: types.TaintEffectPreferNoSchedule,
	kpool.EffectNoExecute:        types.TaintEffectNoExecute,
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

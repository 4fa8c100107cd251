// Package eks is Amazon EKS as kpool knows it without AWS's SDK: a kpool
// node pool is an EKS managed node group, placed in zones through the
// cluster's subnets.
package eks

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// Type is the platform EKS clusters are on.
const Type = kpool.PlatformAWS

// Profile is EKS's provider.Profile.
type Profile struct{}

var _ provider.Profile = Profile{}

// MaxUserData bounds a node group's user data (the launch template's).
const MaxUserData = 16 << 10

func (Profile) Type() kpool.PlatformType { return Type }

func (Profile) Capabilities() provider.Capabilities {
	return provider.Capabilities{
		Provider: Type, Name: "EKS", NodePools: true, Autoscaling: true, ScaleToZero: true, SystemScaleToZero: true,
		Spot: true, Accelerators: false, Taints: true, LabelsInPlace: true, Upgrade: true, Tags: true,
		Zones: provider.ZonesSubnet, Names: provider.NameRules{MaxLength: 63, Pattern: `^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$`, Separator: "-"},
		Updates: map[provider.Field]provider.Rule{
			provider.FieldUpgrade:      provider.InPlace("EKS changes a node group's updateConfig in place (UpdateNodegroupConfig)"),
			provider.FieldCount:        provider.InPlace("UpdateNodegroupConfig scalingConfig"),
			provider.FieldAutoscaling:  provider.InPlace("UpdateNodegroupConfig scalingConfig"),
			provider.FieldMachineType:  provider.NeedsNewPool("a managed node group's instanceTypes are fixed at creation"),
			provider.FieldZones:        provider.NeedsNewPool("a managed node group's subnets are fixed at creation"),
			provider.FieldLabels:       provider.InPlace("UpdateNodegroupConfig labels"),
			provider.FieldTaints:       provider.InPlace("UpdateNodegroupConfig taints"),
			provider.FieldSpot:         provider.NeedsNewPool("a managed node group's capacityType is fixed at creation"),
			provider.FieldDisk:         provider.RollsNodes("a new version of the node group's launch template, rolled out by UpdateNodegroupVersion"),
			provider.FieldVersion:      provider.RollsNodes("UpdateNodegroupVersion replaces the nodes"),
			provider.FieldTags:         provider.InPlace("TagResource/UntagResource"),
			provider.FieldMode:         provider.InPlace("mode is a kpool label only on EKS"),
			provider.FieldAccelerators: provider.NotSupported("EKS takes GPUs from the instance type, not from an accelerators list"),
			provider.FieldImage:        provider.RollsNodes("user data: a new version of the node group's launch template, rolled out by UpdateNodegroupVersion"),

			// Stored and shown, not applied to the pool: the API warns when they are set.
			provider.FieldAutoscalerTuning: provider.Advisory("EKS node groups take no autoscaler settings: the Cluster Autoscaler (or Karpenter) in the cluster takes them cluster-wide"),
		},
	}
}

func (Profile) ControllerName() string { return "eks-nodepool-controller" }
func (Profile) LabelDomains() []string { return []string{"eks.amazonaws.com"} }

// PoolLabel is the label EKS puts on a pool's nodes, valued with its name.
func (Profile) PoolLabel() string { return "eks.amazonaws.com/nodegroup" }

var (
	regionRE      = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-\d{1,2}$`)
	clusterNameRE = regexp.MustCompile(`^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$`)
	roleRE        = regexp.MustCompile(`^arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]{1,512}$`)
	zoneIDRE      = regexp.MustCompile(`^[a-z]{3,5}\d{0,2}-az\d{1,2}$`)
	subnetRE      = regexp.MustCompile(`^subnet-[0-9a-f]{8,17}$`)
)

func (Profile) ValidateCluster(fe *kpool.FieldErrors, s *kpool.ClusterSpec) {
	a, f := s.Platform.AWS, "spec.platform.aws"
	kpool.ValidatePattern(fe, f+".region", a.Region, regionRE, true, "an AWS region such as us-west-2")
	kpool.ValidatePattern(fe, f+".clusterName", a.ClusterName, clusterNameRE, true, "1-100 letters, digits, '_' or '-', starting with a letter or digit")
	kpool.ValidatePattern(fe, f+".nodeRoleArn", a.NodeRoleARN, roleRE, true, "an IAM role ARN such as arn:aws:iam::123456789012:role/eks-nodes")
	if len(a.Subnets) == 0 {
		fe.Add(f+".subnets", "required: map each availability zone to the subnet node groups use there")
	}
	for _, zone := range kpool.SortedKeys(a.Subnets) {
		zf := f + ".subnets." + zone
		inRegion := a.Region != "" && strings.HasPrefix(zone, a.Region) && len(zone) == len(a.Region)+1 && zone[len(zone)-1] >= 'a' && zone[len(zone)-1] <= 'z'
		switch {
		case zoneIDRE.MatchString(zone):
			// AWS maps zone ids to zone names differently in every
			// account: the name the nodes carry cannot be told from an id.
			fe.Add(zf, "%q is a zone id; AWS maps zone ids to zone names differently in every account, so key the subnet by its zone name (such as %sa), the one its nodes carry in %s", zone, a.Region, provider.LabelTopologyZone)
		case !inRegion:
			fe.Add(zf, "%q is not an availability zone of region %q (such as %sa)", zone, a.Region, a.Region)
		}
		kpool.ValidatePattern(fe, zf, a.Subnets[zone], subnetRE, true, "a subnet id such as subnet-0123456789abcdef0")
	}
}

func (Profile) ClusterIdentity(s *kpool.ClusterSpec) []kpool.Setting {
	a := s.Platform.AWS
	if a == nil {
		return nil
	}
	return []kpool.Setting{{Path: "aws.clusterName", Value: a.ClusterName}, {Path: "aws.region", Value: a.Region}}
}

// CloudID is the cluster's ARN: its account (from the node role), region
// and name, which EKS compares with case.
func (Profile) CloudID(s *kpool.ClusterSpec) string {
	a := s.Platform.AWS
	if a == nil {
		return ""
	}
	return "arn:aws:eks:" + a.Region + ":" + Account(a.NodeRoleARN) + ":cluster/" + a.ClusterName
}

func (Profile) Region(s *kpool.ClusterSpec) string {
	if a := s.Platform.AWS; a != nil {
		return a.Region
	}
	return ""
}

func (Profile) Block(_ *kpool.Cluster, s *kpool.NodePoolSpec) provider.Block {
	a := s.Platform.AWS
	if a == nil {
		return provider.Block{}
	}
	const p = "spec.platform.aws."
	b := provider.Block{
		MachineType: a.InstanceType, Zones: a.AvailabilityZones, DiskSizeGB: a.VolumeSize, DiskType: a.VolumeType, Spot: a.SpotInstances,
		Fields: []provider.BlockField{
			{Field: provider.FieldMachineType, Path: p + "instanceType", Value: a.InstanceType},
			{Field: provider.FieldZones, Path: p + "availabilityZones", Value: a.AvailabilityZones},
			{Field: provider.FieldSpot, Path: p + "spotInstances", Value: a.SpotInstances},
			{Field: provider.FieldDisk, Path: p + "volumeSize", Value: a.VolumeSize},
			{Field: provider.FieldDisk, Path: p + "volumeType", Value: a.VolumeType},
			{Field: provider.FieldImage, Path: p + "userData", Value: a.UserData},
		},
	}
	if a.UserData != "" {
		b.Extra = map[string]string{"userData": a.UserData}
	}
	return b
}

func (p Profile) ValidateBlock(fe *kpool.FieldErrors, s *kpool.NodePoolSpec, c *kpool.Cluster) {
	a, f := s.Platform.AWS, "spec.platform.aws"
	kpool.ValidateRange(fe, f+".volumeSize", a.VolumeSize, 1, 16384, "GiB")
	validateVolumeType(fe, f+".volumeType", a.VolumeType)
	if len(a.UserData) > MaxUserData {
		fe.Add(f+".userData", "at most %d bytes, got %d", MaxUserData, len(a.UserData))
	}
	// EKS takes label keys and values of 1-63 characters (CreateNodegroup,
	// labels, EKS API Reference): Kubernetes' empty value is refused.
	for _, k := range kpool.SortedKeys(s.Labels) {
		if s.Labels[k] == "" {
			fe.Add("spec.labels."+k, "EKS refuses an empty label value: give 1-63 characters")
		}
	}
	validateUpgrade(fe, s.UpdateStrategy)
	// Every zone needs a subnet: a node group is placed by its subnets.
	zones, field, err := provider.PoolZones(p, c, s)
	if err != nil {
		return // the plan reports it
	}
	for _, z := range zones {
		if _, err := Subnet(c, z); err != nil {
			fe.Add(field, "%v", err)
		}
	}
}

// VolumeTypes are the EBS volume types a node's root volume may be
// (https://docs.aws.amazon.com/ebs/latest/userguide/ebs-volume-types.html).
var VolumeTypes = []string{"gp2", "gp3", "io1", "io2", "standard"}

// hddVolumeTypes are EBS types that exist but cannot be a boot volume.
var hddVolumeTypes = []string{"st1", "sc1"}

// validateVolumeType checks a node group's root volume type against the EBS
// types: one that does not exist, or an HDD type (which cannot boot), is
// refused here rather than by EC2 when the nodes launch.
func validateVolumeType(fe *kpool.FieldErrors, field, t string) {
	switch {
	case t == "", slices.Contains(VolumeTypes, t):
	case slices.Contains(hddVolumeTypes, t):
		fe.Add(field, "%q is an HDD volume type, which EBS does not take for a boot volume: use one of %s", t, strings.Join(VolumeTypes, ", "))
	default:
		fe.Add(field, "%q is not an EBS volume type: use one of %s", t, strings.Join(VolumeTypes, ", "))
	}
}

func (Profile) SetBlock(s *kpool.NodePoolSpec, b provider.Block) {
	s.Platform.AWS = &kpool.AWSNodePool{InstanceType: b.MachineType, VolumeSize: b.DiskSizeGB, VolumeType: b.DiskType, SpotInstances: b.Spot}
}

// ProviderZone is the region's Nth availability zone: us-west-2a for "1".
func (p Profile) ProviderZone(c *kpool.Cluster, logical string) (string, error) {
	n, err := provider.ZoneNumber(logical)
	if err != nil {
		return "", err
	}
	return p.Region(&c.Spec) + provider.ZoneLetter(n), nil
}

// LogicalZone reads a zone name (us-west-2b). A zone id (usw2-az2) is not
// read: which name it is differs by account.
func (p Profile) LogicalZone(c *kpool.Cluster, native string) (string, error) {
	region := p.Region(&c.Spec)
	if l, ok := provider.LetterZone(native, region, ""); ok {
		return l, nil
	}
	return "", fmt.Errorf("%q is not a zone name of %s region %q", native, Type, region)
}

// NodeZone: EKS nodes carry the zone name.
func (p Profile) NodeZone(c *kpool.Cluster, logical string) (string, error) {
	return p.ProviderZone(c, logical)
}

// Subnet returns an EKS cluster's subnet for a logical zone, from its subnet
// map keyed by zone name (us-west-2a).
func Subnet(c *kpool.Cluster, logical string) (string, error) {
	a := c.Spec.Platform.AWS
	if a == nil {
		return "", fmt.Errorf("cluster %s is not on aws", c.Name)
	}
	name, err := Profile{}.ProviderZone(c, logical)
	if err != nil {
		return "", err
	}
	if id, ok := a.Subnets[name]; ok {
		return id, nil
	}
	return "", fmt.Errorf("zone %s (%s) has no subnet in cluster %s's subnets", logical, name, c.Name)
}

func (Profile) DiskType(t string) string                     { return t }
func (Profile) NodeTaints(d provider.PoolSpec) []kpool.Taint { return d.Taints }

func (Profile) CLI() provider.CLI {
	return provider.CLI{
		PoolNoun: "node group",
		ClusterFlags: []provider.ClusterFlag{
			{Name: "region", Field: "region", Usage: "the cloud region"},
			{Name: "cluster-name", Field: "clusterName", Usage: "name of the cluster at its provider"},
			{Name: "node-role-arn", Field: "nodeRoleArn", Usage: "IAM role ARN of the EKS nodes"},
			{Name: "subnet", Field: "subnets", Usage: "ZONE=SUBNET, repeatable", Map: true},
		},
		PoolFields:     provider.PoolFields{MachineType: "instanceType", Zones: "availabilityZones", DiskSize: "volumeSize", Spot: "spotInstances"},
		MachineExample: "m5.xlarge",
	}
}

// Account is the account id of an IAM ARN; "" when it has none.
func Account(arn string) string {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" {
		return ""
	}
	return parts[4]
}

var _ provider.KubeHosts = Profile{}

// KubeHostSuffixes are where EKS clusters' API servers are: an IPv4
// cluster's endpoint is https://<id>.<cell>.<region>.eks.amazonaws.com,
// in the China regions …eks.amazonaws.com.cn (the EKS user guide,
// cluster-endpoint.html, "IPv4 cluster endpoint format";
// private-clusters.html's example
// https://EXAMPLE….sk1.region-code.eks.amazonaws.com.cn). The dual-stack
// endpoints of IPv6 clusters (….api.aws) are not listed: an operator names
// them with a credential's allowed origins.
func (Profile) KubeHostSuffixes() []string {
	return []string{".eks.amazonaws.com", ".eks.amazonaws.com.cn"}
}

// KubeIPAddresses is false: EKS endpoints are host names.
func (Profile) KubeIPAddresses() bool { return false }

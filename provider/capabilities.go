package provider

import (
	"regexp"

	"github.com/kpool/kpool"
)

// Field names a provider-neutral part of a pool spec whose change a provider
// handles in one way.
type Field string

const (
	FieldCount        Field = "count"
	FieldAutoscaling  Field = "autoscaling"
	FieldMachineType  Field = "machineType"
	FieldZones        Field = "zones"
	FieldLabels       Field = "labels"
	FieldTaints       Field = "taints"
	FieldSpot         Field = "spot"
	FieldDisk         Field = "disk"
	FieldVersion      Field = "kubernetesVersion"
	FieldTags         Field = "tags"
	FieldMode         Field = "mode"
	FieldAccelerators Field = "accelerators"
	FieldImage        Field = "image" // OCI imageId, shape config; AWS user data
)

// ZoneStyle says how a provider places a pool in zones.
type ZoneStyle string

const (
	ZonesNone    ZoneStyle = "none"                // the provider has no zones (Civo)
	ZonesLogical ZoneStyle = "logical"             // "1","2","3" as they are (AKS)
	ZonesSubnet  ZoneStyle = "subnet"              // a subnet per availability zone (EKS)
	ZonesName    ZoneStyle = "zone-name"           // <region>-a, -b, -c (GKE)
	ZonesADs     ZoneStyle = "availability-domain" // the Nth availability domain (OKE)
)

// Capabilities is what a provider can do with node pools. The API consults
// it before any write; drivers return it from Capabilities().
type Capabilities struct {
	Provider kpool.PlatformType `json:"provider"`
	// NodePools is false for platforms without pools (k3s, microvm): every
	// operation is NOT_IMPLEMENTED there.
	NodePools     bool      `json:"nodePools"`
	Autoscaling   bool      `json:"autoscaling"`
	ScaleToZero   bool      `json:"scaleToZero"`
	Spot          bool      `json:"spot"`
	Accelerators  bool      `json:"accelerators"`
	Taints        bool      `json:"taints"`
	LabelsInPlace bool      `json:"labelsInPlace"`
	Upgrade       bool      `json:"versionUpgrade"`
	Tags          bool      `json:"tags"`
	Zones         ZoneStyle `json:"zones"`
	// CountPerZone: the provider counts nodes per zone (GKE); kpool's
	// counts are per pool and the driver divides them.
	CountPerZone bool `json:"countPerZone"`
	// MaxNameLength and NamePattern are the provider's rules for pool names.
	MaxNameLength int    `json:"maxNameLength"`
	NamePattern   string `json:"namePattern"`
	// Updates is the class of a change of each field, with the reason.
	Updates map[Field]Update `json:"updates"`
}

// Update is how a provider handles a change of one field, and why.
type Update struct {
	Class  kpool.UpdateClass `json:"class"`
	Reason string            `json:"reason,omitempty"`
}

func in(reason string) Update    { return Update{kpool.InPlace, reason} }
func rolls(reason string) Update { return Update{kpool.RollsNodes, reason} }
func fresh(reason string) Update { return Update{kpool.NewNodesOnly, reason} }
func repl(reason string) Update  { return Update{kpool.Replace, reason} }
func ni(reason string) Update    { return Update{kpool.NotImplemented, reason} }

// table holds every provider's capabilities, from the providers' API
// references and how the Terraform providers, Cluster API and Gardener treat
// each field (see shared/research/anchors.md, section 2).
var table = map[kpool.PlatformType]Capabilities{
	kpool.PlatformAzure: {
		Provider: kpool.PlatformAzure, NodePools: true, Autoscaling: true, ScaleToZero: true, Spot: true,
		Accelerators: false, Taints: true, LabelsInPlace: true, Upgrade: true, Tags: true,
		Zones: ZonesLogical, MaxNameLength: 12, NamePattern: `^[a-z][a-z0-9]{0,11}$`,
		Updates: map[Field]Update{
			FieldCount:        in("the agent pool scales in place"),
			FieldAutoscaling:  in("autoscaler bounds change in place"),
			FieldMachineType:  repl("AKS does not change an agent pool's vmSize"),
			FieldZones:        repl("AKS does not change an agent pool's availabilityZones"),
			FieldLabels:       in("AKS reapplies nodeLabels to every node"),
			FieldTaints:       in("AKS reapplies nodeTaints to every node"),
			FieldSpot:         repl("scaleSetPriority is fixed when the agent pool is created"),
			FieldDisk:         repl("osDiskSizeGB and osDiskType are fixed when the agent pool is created"),
			FieldVersion:      rolls("AKS upgrades the nodes with surge and drain"),
			FieldTags:         in("tags change in place"),
			FieldMode:         in("mode (System/User) changes in place"),
			FieldAccelerators: ni("AKS takes GPUs from the vmSize, not from an accelerators list"),
			FieldImage:        ni("AKS agent pools take no custom image or user data here"),
		},
	},
	kpool.PlatformAWS: {
		Provider: kpool.PlatformAWS, NodePools: true, Autoscaling: true, ScaleToZero: true, Spot: true,
		Accelerators: false, Taints: true, LabelsInPlace: true, Upgrade: true, Tags: true,
		Zones: ZonesSubnet, MaxNameLength: 63, NamePattern: `^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$`,
		Updates: map[Field]Update{
			FieldCount:        in("UpdateNodegroupConfig scalingConfig"),
			FieldAutoscaling:  in("UpdateNodegroupConfig scalingConfig"),
			FieldMachineType:  repl("a managed node group's instanceTypes are fixed at creation"),
			FieldZones:        repl("a managed node group's subnets are fixed at creation"),
			FieldLabels:       in("UpdateNodegroupConfig labels"),
			FieldTaints:       in("UpdateNodegroupConfig taints"),
			FieldSpot:         repl("a managed node group's capacityType is fixed at creation"),
			FieldDisk:         repl("a managed node group's diskSize is fixed at creation"),
			FieldVersion:      rolls("UpdateNodegroupVersion replaces the nodes"),
			FieldTags:         in("TagResource/UntagResource"),
			FieldMode:         in("mode is a kpool label only on EKS"),
			FieldAccelerators: ni("EKS takes GPUs from the instance type, not from an accelerators list"),
			FieldImage:        repl("user data lives in the launch template the node group was created with"),
		},
	},
	kpool.PlatformGCP: {
		Provider: kpool.PlatformGCP, NodePools: true, Autoscaling: true, ScaleToZero: true, Spot: true,
		Accelerators: true, Taints: true, LabelsInPlace: true, Upgrade: true, Tags: true,
		Zones: ZonesName, CountPerZone: true, MaxNameLength: 40, NamePattern: `^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$`,
		Updates: map[Field]Update{
			FieldCount:        in("nodePools.setSize (GKE counts nodes per zone; kpool divides the pool's count)"),
			FieldAutoscaling:  in("nodePools.setAutoscaling"),
			FieldMachineType:  rolls("nodePools.update migrates the nodes to the new machine type"),
			FieldZones:        rolls("nodePools.update adds and removes zonal node groups"),
			FieldLabels:       in("nodePools.update labels"),
			FieldTaints:       in("nodePools.update taints"),
			FieldSpot:         repl("spot/preemptible is fixed when the node pool is created"),
			FieldDisk:         rolls("nodePools.update migrates the nodes to the new disk"),
			FieldVersion:      rolls("nodePools.update upgrades the nodes (surge or blue-green)"),
			FieldTags:         in("resource labels change in place"),
			FieldMode:         in("mode is a kpool label only on GKE"),
			FieldAccelerators: repl("guest accelerators are fixed when the node pool is created"),
			FieldImage:        ni("GKE node pools take no custom image or user data here"),
		},
	},
	kpool.PlatformOCI: {
		Provider: kpool.PlatformOCI, NodePools: true, Autoscaling: true, ScaleToZero: true, Spot: true,
		Accelerators: false, Taints: false, LabelsInPlace: false, Upgrade: true, Tags: true,
		Zones: ZonesADs, MaxNameLength: 255, NamePattern: `^[A-Za-z0-9][A-Za-z0-9_.-]{0,254}$`,
		Updates: map[Field]Update{
			FieldCount:        in("UpdateNodePool size"),
			FieldAutoscaling:  in("autoscaler bounds change in place"),
			FieldMachineType:  fresh("OKE applies a new shape to nodes created afterwards; cycle the pool to replace existing ones"),
			FieldZones:        fresh("OKE places nodes created afterwards in the new availability domains"),
			FieldLabels:       fresh("OKE's initial node labels apply to nodes created afterwards"),
			FieldTaints:       ni("OKE node pools have no taints"),
			FieldSpot:         fresh("the preemptible setting applies to nodes created afterwards"),
			FieldDisk:         fresh("the boot volume applies to nodes created afterwards"),
			FieldVersion:      fresh("OKE upgrades nodes created afterwards; cycle the pool to upgrade existing ones"),
			FieldTags:         in("freeform tags change in place"),
			FieldMode:         in("mode is a kpool label only on OKE"),
			FieldAccelerators: ni("OKE takes GPUs from the shape, not from an accelerators list"),
			FieldImage:        fresh("the image and shape config apply to nodes created afterwards"),
		},
	},
	kpool.PlatformCivo: {
		Provider: kpool.PlatformCivo, NodePools: true, Autoscaling: true, ScaleToZero: false, Spot: false,
		Accelerators: false, Taints: true, LabelsInPlace: true, Upgrade: false, Tags: false,
		Zones: ZonesNone, MaxNameLength: 63, NamePattern: `^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$`,
		Updates: map[Field]Update{
			FieldCount:        in("PUT pool count (at least 1)"),
			FieldAutoscaling:  in("autoscaler bounds change in place"),
			FieldMachineType:  repl("Civo does not change an existing pool's size"),
			FieldZones:        ni("Civo has no zones within a region"),
			FieldLabels:       in("PUT pool labels"),
			FieldTaints:       in("PUT pool taints"),
			FieldSpot:         ni("Civo has no spot instances"),
			FieldDisk:         ni("Civo's disk follows the size"),
			FieldVersion:      ni("Civo pools follow the cluster's version"),
			FieldTags:         ni("Civo pools have no tags"),
			FieldMode:         in("mode is a kpool label only on Civo"),
			FieldAccelerators: ni("Civo takes GPUs from the size"),
			FieldImage:        ni("Civo pools take no custom image"),
		},
	},
}

// CapabilitiesOf returns a platform's capabilities. Platforms without node
// pools (k3s, microvm, or an unknown one) get NodePools false.
func CapabilitiesOf(t kpool.PlatformType) Capabilities {
	if c, ok := table[t]; ok {
		return c
	}
	return Capabilities{Provider: t, Zones: ZonesNone}
}

var namePatterns = map[kpool.PlatformType]*regexp.Regexp{}

func init() {
	for t, c := range table {
		namePatterns[t] = regexp.MustCompile(c.NamePattern)
	}
}

package provider

import (
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
	FieldImage        Field = "image" // provider-only inputs: an image, user data, a shape's size
	// FieldAutoscalerTuning is the autoscaler's targets and delays
	// (targetCPUUtilization, targetMemoryUtilization, scaleDownDelay,
	// scaleUpDelay): Advisory where the provider takes them cluster-wide.
	FieldAutoscalerTuning Field = "autoscalerTuning"
	// FieldPlacementPool is the logical pool a pool belongs to: its nodes'
	// kompox.dev/node-pool, set at creation on every provider.
	FieldPlacementPool Field = "placementPool"
	// FieldUpgrade is the pool's update strategy as the cloud's upgrade
	// settings take it (Upgrade).
	FieldUpgrade Field = "upgradeSettings"
)

// placementRule is how every provider changes a pool's logical pool: the
// placement labels are set when kpool creates a pool and never changed on a
// running one, so a new pool is needed.
var placementRule = NeedsNewPool("a pool's placement labels (kompox.dev/node-pool) are set when kpool creates it and never changed on its nodes; " +
	"create a pool in the other logical pool, then delete this one")

// Fields lists every Field, in the order a capability table gives them.
var Fields = []Field{FieldCount, FieldAutoscaling, FieldMachineType, FieldZones, FieldLabels, FieldTaints,
	FieldSpot, FieldDisk, FieldVersion, FieldTags, FieldMode, FieldAccelerators, FieldImage, FieldAutoscalerTuning, FieldUpgrade}

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
// it before any write; drivers return their profile's.
type Capabilities struct {
	Provider kpool.PlatformType `json:"provider"`
	// Name is the provider as people write it (AKS, Civo), for messages.
	Name string `json:"name"`
	// NodePools is false for platforms without pools (k3s, microvm): every
	// operation is NOT_IMPLEMENTED there.
	NodePools bool `json:"nodePools"`
	// Instead, for a platform without pools, says how its clusters gain
	// and lose nodes (kpool's answer to a pool operation quotes it).
	Instead     string `json:"instead,omitempty"`
	Autoscaling bool   `json:"autoscaling"`
	// ScaleToZero: an autoscaled pool may have no nodes (minNodes 0);
	// SystemScaleToZero: a system pool may too.
	ScaleToZero       bool      `json:"scaleToZero"`
	SystemScaleToZero bool      `json:"systemScaleToZero"`
	Spot              bool      `json:"spot"`
	Accelerators      bool      `json:"accelerators"`
	Taints            bool      `json:"taints"`
	LabelsInPlace     bool      `json:"labelsInPlace"`
	Upgrade           bool      `json:"versionUpgrade"`
	Tags              bool      `json:"tags"`
	Zones             ZoneStyle `json:"zones"`
	// CountPerZone: the provider counts nodes per zone (GKE); kpool's
	// counts are per pool and the driver divides them.
	CountPerZone bool `json:"countPerZone"`
	// Names are the provider's rules for pool names.
	Names NameRules `json:"names"`
	// Updates is the class of a change of each field, with the reason.
	Updates map[Field]Rule `json:"updates"`
}

// Rule is how a provider handles a change of one field, and why.
type Rule struct {
	Class  kpool.UpdateClass `json:"class"`
	Reason string            `json:"reason,omitempty"`
}

// The rules of a capability table, by class.
func InPlace(reason string) Rule      { return Rule{kpool.UpdateInPlace, reason} }
func RollsNodes(reason string) Rule   { return Rule{kpool.UpdateRollsNodes, reason} }
func NewNodesOnly(reason string) Rule { return Rule{kpool.UpdateNewNodesOnly, reason} }
func NeedsNewPool(reason string) Rule { return Rule{kpool.UpdateReplace, reason} }
func NotSupported(reason string) Rule { return Rule{kpool.UpdateNotImplemented, reason} }

// Advisory is the rule of a field kpool stores and the provider does not
// apply to the pool: accepted, and answered with a warning saying why.
func Advisory(reason string) Rule { return Rule{kpool.UpdateAdvisory, reason} }

// MinNodes is how far an autoscaled pool of a mode may scale down, and why
// not to zero.
func (c Capabilities) MinNodes(mode string) (int, string) {
	switch {
	case !c.ScaleToZero:
		return 1, c.Name + " pools cannot scale to zero"
	case mode == kpool.ModeSystem && !c.SystemScaleToZero:
		return 1, "system pools cannot scale to zero"
	}
	return 0, ""
}

// Correctable reports whether a difference can be put right by an update
// (its field changes in place, rolling nodes or for new nodes) rather than
// needing a new pool.
func (c Capabilities) Correctable(f Field) bool {
	switch c.Updates[f].Class {
	case kpool.UpdateInPlace, kpool.UpdateRollsNodes, kpool.UpdateNewNodesOnly:
		return true
	}
	return false
}

// CheckSupported refuses a spec that asks for what the provider does not
// have (NOT_IMPLEMENTED naming the field), as the API's planner does
// before it: drivers call it first, so a capability boundary never
// reaches the cloud and is never retried.
func CheckSupported(caps Capabilities, s PoolSpec) error {
	set := map[Field]bool{
		FieldZones:        len(s.Zones) > 0,
		FieldSpot:         s.Spot,
		FieldDisk:         s.DiskSizeGB != 0 || s.DiskType != "",
		FieldVersion:      s.Version != "",
		FieldTags:         len(s.Tags) > 0,
		FieldAccelerators: len(s.Accelerators) > 0,
		FieldImage:        len(s.Settings) > 0,
		FieldTaints:       len(s.Taints) > 0,
	}
	for _, f := range Fields {
		if u := caps.Updates[f]; set[f] && u.Class == kpool.UpdateNotImplemented {
			return NotImplementedError(caps.Provider, "spec.%s: %s", f, u.Reason)
		}
	}
	if s.Autoscaling && !caps.Autoscaling {
		reason := string(caps.Provider) + " has no autoscaling"
		if u := caps.Updates[FieldAutoscaling]; u.Class == kpool.UpdateNotImplemented {
			reason = u.Reason
		}
		return NotImplementedError(caps.Provider, "spec.autoscaling: %s", reason)
	}
	return nil
}

// NewNodesOnly reports whether the provider applies some change to new
// nodes only, so that a pool may run nodes of an earlier configuration.
func (c Capabilities) NewNodesOnly() bool {
	for _, r := range c.Updates {
		if r.Class == kpool.UpdateNewNodesOnly {
			return true
		}
	}
	return false
}

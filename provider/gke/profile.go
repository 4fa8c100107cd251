// Package gke is Google Kubernetes Engine as kpool knows it without Google's
// SDK: a kpool node pool is a GKE node pool, whose node count GKE keeps per
// zone.
package gke

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// Type is the platform GKE clusters are on.
const Type = kpool.PlatformGCP

// Profile is GKE's provider.Profile.
type Profile struct{}

var _ provider.Profile = Profile{}

// GPUTaint is the taint GKE puts on nodes with GPUs in clusters that also
// have nodes without.
var GPUTaint = kpool.Taint{Key: "nvidia.com/gpu", Value: "present", Effect: kpool.EffectNoSchedule}

// MaxAcceleratorTypes bounds a pool's list of accelerators.
const MaxAcceleratorTypes = 8

func (Profile) Type() kpool.PlatformType { return Type }

func (Profile) Capabilities() provider.Capabilities {
	return provider.Capabilities{
		Provider: Type, Name: "GKE", NodePools: true, Autoscaling: true, ScaleToZero: true, SystemScaleToZero: true,
		Spot: true, Accelerators: true, Taints: true, LabelsInPlace: true, Upgrade: true, Tags: true,
		Zones: provider.ZonesName, CountPerZone: true,
		Names: provider.NameRules{MaxLength: 40, Pattern: `^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$`, Separator: "-"},
		Updates: map[provider.Field]provider.Rule{
			provider.FieldUpgrade:      provider.InPlace("nodePools.update upgradeSettings: SURGE with maxSurge and maxUnavailable as node counts; kpool carries out the soak and drain timeout itself"),
			provider.FieldCount:        provider.InPlace("nodePools.setSize (GKE counts nodes per zone; kpool divides the pool's count)"),
			provider.FieldAutoscaling:  provider.InPlace("nodePools.setAutoscaling"),
			provider.FieldMachineType:  provider.RollsNodes("nodePools.update migrates the nodes to the new machine type"),
			provider.FieldZones:        provider.RollsNodes("nodePools.update adds and removes zonal node groups"),
			provider.FieldLabels:       provider.InPlace("nodePools.update labels"),
			provider.FieldTaints:       provider.InPlace("nodePools.update taints"),
			provider.FieldSpot:         provider.NeedsNewPool("spot/preemptible is fixed when the node pool is created"),
			provider.FieldDisk:         provider.RollsNodes("nodePools.update migrates the nodes to the new disk"),
			provider.FieldVersion:      provider.RollsNodes("nodePools.update upgrades the nodes (surge or blue-green)"),
			provider.FieldTags:         provider.InPlace("resource labels change in place"),
			provider.FieldMode:         provider.InPlace("mode is a kpool label only on GKE"),
			provider.FieldAccelerators: provider.NeedsNewPool("guest accelerators are fixed when the node pool is created"),
			provider.FieldImage:        provider.NotSupported("GKE node pools take no custom image or user data here"),

			// Stored and shown, not applied to the pool: the API warns when they are set.
			provider.FieldAutoscalerTuning: provider.Advisory("GKE takes an autoscaling profile cluster-wide, not per node pool targets or delays"),
		},
	}
}

func (Profile) ControllerName() string { return "gke-nodepool-controller" }
func (Profile) LabelDomains() []string { return []string{"cloud.google.com"} }

// PoolLabel is the label GKE puts on a pool's nodes, valued with its name.
func (Profile) PoolLabel() string { return "cloud.google.com/gke-nodepool" }

var (
	projectRE     = regexp.MustCompile(`^[a-z][a-z0-9-]{4,28}[a-z0-9]$`)
	locationRE    = regexp.MustCompile(`^[a-z]+-[a-z]+\d+(-[a-z])?$`)
	clusterNameRE = regexp.MustCompile(`^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$`)
	// versionRE is a GKE node version: 1.30, 1.30.5 or 1.30.5-gke.1014001.
	versionRE = regexp.MustCompile(`^\d+\.\d+(\.\d+(-gke\.\d+)?)?$`)
)

// DiskTypes are the boot disk types GKE nodes take
// (https://cloud.google.com/kubernetes-engine/docs/concepts/node-images
// and the NodeConfig.diskType of container/v1).
var DiskTypes = []string{"pd-standard", "pd-balanced", "pd-ssd", "pd-extreme",
	"hyperdisk-balanced", "hyperdisk-extreme", "hyperdisk-throughput", "hyperdisk-ml"}

// AcceleratorTypes are the GPU types GKE node pools take
// (https://cloud.google.com/compute/docs/gpus).
var AcceleratorTypes = []string{"nvidia-tesla-k80", "nvidia-tesla-p4", "nvidia-tesla-p100", "nvidia-tesla-v100",
	"nvidia-tesla-t4", "nvidia-tesla-a100", "nvidia-a100-80gb", "nvidia-l4", "nvidia-h100-80gb", "nvidia-h100-mega-80gb",
	"nvidia-h200-141gb", "nvidia-b200", "nvidia-gb200", "nvidia-rtx-pro-6000"}

// zoneLetters are the zones of Google Cloud's regions, by their letters
// (https://cloud.google.com/compute/docs/regions-zones): not always a, b,
// c (us-central1 has a, b, c and f; europe-west1 b, c and d). A region not
// listed is taken to have a, b and c.
var zoneLetters = map[string]string{
	"us-central1": "abcf", "us-east1": "bcd", "us-east4": "abc", "us-east5": "abc", "us-south1": "abc",
	"us-west1": "abc", "us-west2": "abc", "us-west3": "abc", "us-west4": "abc",
	"northamerica-northeast1": "abc", "northamerica-northeast2": "abc", "southamerica-east1": "abc",
	"europe-west1": "bcd", "europe-west2": "abc", "europe-west3": "abc", "europe-west4": "abc",
	"europe-west6": "abc", "europe-west8": "abc", "europe-west9": "abc", "europe-north1": "abc",
	"europe-central2": "abc", "europe-southwest1": "abc",
	"asia-east1": "abc", "asia-east2": "abc", "asia-northeast1": "abc", "asia-northeast2": "abc",
	"asia-northeast3": "abc", "asia-south1": "abc", "asia-southeast1": "abc", "asia-southeast2": "abc",
	"australia-southeast1": "abc", "me-west1": "abc",
}

// Zones are a region's zones, in order: logical zone N is the Nth.
func Zones(region string) []string {
	letters, ok := zoneLetters[region]
	if !ok {
		letters = "abc"
	}
	var out []string
	for _, l := range letters {
		out = append(out, region+"-"+string(l))
	}
	return out
}

func (Profile) ValidateCluster(fe *kpool.FieldErrors, s *kpool.ClusterSpec) {
	g, f := s.Platform.GCP, "spec.platform.gcp"
	kpool.ValidatePattern(fe, f+".projectId", g.ProjectID, projectRE, true, "6-30 lowercase letters, digits or '-', starting with a letter")
	kpool.ValidatePattern(fe, f+".location", g.Location, locationRE, true, "a region such as us-central1 or a zone such as us-central1-a")
	kpool.ValidatePattern(fe, f+".clusterName", g.ClusterName, clusterNameRE, true, "1-40 lowercase letters, digits or '-', starting with a letter")
}

func (Profile) ClusterIdentity(s *kpool.ClusterSpec) []kpool.Setting {
	g := s.Platform.GCP
	if g == nil {
		return nil
	}
	return []kpool.Setting{{Path: "gcp.clusterName", Value: g.ClusterName}, {Path: "gcp.location", Value: g.Location},
		{Path: "gcp.projectId", Value: g.ProjectID}}
}

// CloudID is the cluster's resource name (projects, locations and names
// are lowercase in GCP).
func (Profile) CloudID(s *kpool.ClusterSpec) string {
	g := s.Platform.GCP
	if g == nil {
		return ""
	}
	return strings.ToLower("projects/" + g.ProjectID + "/locations/" + g.Location + "/clusters/" + g.ClusterName)
}

// Region is the cluster's location, or the region of a zonal cluster's
// zone.
func (Profile) Region(s *kpool.ClusterSpec) string {
	g := s.Platform.GCP
	if g == nil {
		return ""
	}
	if parts := strings.Split(g.Location, "-"); len(parts) == 3 {
		return parts[0] + "-" + parts[1]
	}
	return g.Location
}

func (Profile) Block(_ *kpool.Cluster, s *kpool.NodePoolSpec) provider.Block {
	g := s.Platform.GCP
	if g == nil {
		return provider.Block{}
	}
	const p = "spec.platform.gcp."
	return provider.Block{
		MachineType: g.MachineType, Zones: g.Zones, Labels: g.Labels, Taints: g.Taints,
		DiskSizeGB: g.DiskSize, DiskType: g.DiskType, Spot: g.Preemptible, Accelerators: g.Accelerators,
		Fields: []provider.BlockField{
			{Field: provider.FieldMachineType, Path: p + "machineType", Value: g.MachineType},
			{Field: provider.FieldZones, Path: p + "zones", Value: g.Zones},
			{Field: provider.FieldLabels, Path: p + "labels", Value: g.Labels},
			{Field: provider.FieldTaints, Path: p + "taints", Value: g.Taints},
			{Field: provider.FieldSpot, Path: p + "preemptible", Value: g.Preemptible},
			{Field: provider.FieldDisk, Path: p + "diskSize", Value: g.DiskSize},
			{Field: provider.FieldDisk, Path: p + "diskType", Value: g.DiskType},
			{Field: provider.FieldAccelerators, Path: p + "accelerators", Value: g.Accelerators},
		},
	}
}

func (Profile) ValidateBlock(fe *kpool.FieldErrors, s *kpool.NodePoolSpec, c *kpool.Cluster) {
	g, f := s.Platform.GCP, "spec.platform.gcp"
	kpool.ValidateRange(fe, f+".diskSize", g.DiskSize, 10, 65536, "GB")
	if g.DiskType != "" && !slices.Contains(DiskTypes, g.DiskType) {
		fe.Add(f+".diskType", "%q is not a GKE disk type: %s", g.DiskType, strings.Join(DiskTypes, ", "))
	}
	if v := s.KubernetesVersion; v != "" && v != "latest" && !versionRE.MatchString(v) {
		fe.Add("spec.kubernetesVersion", "%q is not a GKE version: give 1.30, 1.30.5 or 1.30.5-gke.1014001", v)
	}
	// Zones the cluster's region has; GKE keeps the same node count in
	// every zone of a pool (an autoscaled pool's bounds are GKE's total
	// ones, and its first count is rounded up per zone).
	if c != nil && c.Spec.Platform.GCP != nil {
		for i, z := range g.Zones {
			if _, err := (Profile{}).LogicalZone(c, z); err != nil && z != "" {
				fe.Add(fmt.Sprintf("%s.zones[%d]", f, i), "%v", err)
			}
		}
		for i, z := range s.Zones {
			if _, err := (Profile{}).ProviderZone(c, z); err != nil && kpool.IsLogicalZone(z) {
				fe.Add(fmt.Sprintf("spec.zones[%d]", i), "%v", err)
			}
		}
		if zones, _, err := provider.PoolZones(Profile{}, c, s); err == nil && len(zones) > 1 && !s.Autoscaling.On() && s.Count()%len(zones) != 0 {
			fe.Add("spec.nodeCount", "GKE keeps the same number of nodes in each zone of a node pool: %d nodes do not divide evenly over %d zones; give a multiple of %d",
				s.Count(), len(zones), len(zones))
		}
	}
	if len(g.Accelerators) > MaxAcceleratorTypes {
		fe.Add(f+".accelerators", "at most %d accelerator types, got %d", MaxAcceleratorTypes, len(g.Accelerators))
	}
	for i, a := range g.Accelerators {
		af := fmt.Sprintf("%s.accelerators[%d]", f, i)
		if !slices.Contains(AcceleratorTypes, a.Type) {
			fe.Add(af+".type", "%q is not a GKE accelerator type: %s", a.Type, strings.Join(AcceleratorTypes, ", "))
		}
		if a.Count < 1 || a.Count > kpool.MaxAccelerators {
			fe.Add(af+".count", "must be between 1 and %d, got %d", kpool.MaxAccelerators, a.Count)
		}
	}
	validateUpgrade(fe, s.UpdateStrategy)
}

func (Profile) SetBlock(s *kpool.NodePoolSpec, b provider.Block) {
	s.Platform.GCP = &kpool.GCPNodePool{MachineType: b.MachineType, DiskSize: b.DiskSizeGB, DiskType: b.DiskType, Preemptible: b.Spot}
}

// ProviderZone is the region's Nth zone: us-central1-a for "1",
// us-central1-f for "4" (us-central1 has no zone d); a number beyond the
// region's zones is refused.
func (p Profile) ProviderZone(c *kpool.Cluster, logical string) (string, error) {
	n, err := provider.ZoneNumber(logical)
	if err != nil {
		return "", err
	}
	region := p.Region(&c.Spec)
	zones := Zones(region)
	if n > len(zones) {
		return "", fmt.Errorf("zone %s: %s region %q has %d zones (%s)", logical, Type, region, len(zones), strings.Join(zones, ", "))
	}
	return zones[n-1], nil
}

// LogicalZone is the number of a zone among its region's.
func (p Profile) LogicalZone(c *kpool.Cluster, native string) (string, error) {
	region := p.Region(&c.Spec)
	zones := Zones(region)
	if i := slices.Index(zones, native); i >= 0 {
		return strconv.Itoa(i + 1), nil
	}
	return "", fmt.Errorf("%q is not a zone of %s region %q (its zones: %s)", native, Type, region, strings.Join(zones, ", "))
}

// NodeZone: GKE nodes carry the zone name.
func (p Profile) NodeZone(c *kpool.Cluster, logical string) (string, error) {
	return p.ProviderZone(c, logical)
}

func (Profile) DiskType(t string) string { return t }

// NodeTaints: GKE taints nodes with GPUs.
func (Profile) NodeTaints(d provider.PoolSpec) []kpool.Taint {
	if len(d.Accelerators) > 0 {
		return provider.WithTaint(d.Taints, GPUTaint)
	}
	return d.Taints
}

func (Profile) CLI() provider.CLI {
	return provider.CLI{
		PoolNoun: "node pool",
		ClusterFlags: []provider.ClusterFlag{
			{Name: "project-id", Field: "projectId", Usage: "GCP project ID"},
			{Name: "location", Field: "location", Usage: "GCP region or zone"},
			{Name: "cluster-name", Field: "clusterName", Usage: "name of the cluster at its provider"},
		},
		PoolFields:     provider.PoolFields{MachineType: "machineType", Zones: "zones", DiskSize: "diskSize", Spot: "preemptible"},
		MachineExample: "n2-standard-4",
	}
}

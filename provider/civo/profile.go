// Package civo is Civo Kubernetes as kpool knows it: a kpool node pool is a
// Civo pool (the seeds' 80/20 pool: a size, a count, labels and taints; no
// zones, spot, disks or versions of its own).
package civo

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// Type is the platform Civo clusters are on.
const Type = kpool.PlatformCivo

// Profile is Civo's provider.Profile.
type Profile struct{}

var _ provider.Profile = Profile{}

func (Profile) Type() kpool.PlatformType { return Type }

func (Profile) Capabilities() provider.Capabilities {
	return provider.Capabilities{
		Provider: Type, Name: "Civo", NodePools: true, Autoscaling: true, ScaleToZero: false, SystemScaleToZero: false,
		Spot: false, Accelerators: false, Taints: true, LabelsInPlace: true, Upgrade: false, Tags: false,
		Zones: provider.ZonesNone, Names: provider.NameRules{MaxLength: 63, Pattern: `^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$`, Separator: "-"},
		Updates: map[provider.Field]provider.Rule{
			// Civo's pools take a size, a count, labels and taints only
			// (civogo's KubernetesClusterPoolUpdateConfig, pool.go): no
			// surge, drain or soak setting. The driver sends nothing for
			// spec.updateStrategy (provider.Upgrade), and kpool's
			// controllers carry a replacement out themselves (a new pool,
			// cordon and drain, soak, delete), so a strategy change is in
			// place: nothing at Civo changes.
			provider.FieldUpgrade:      provider.InPlace("Civo has no upgrade settings: kpool carries the strategy out itself"),
			provider.FieldCount:        provider.InPlace("PUT pool count (at least 1)"),
			provider.FieldAutoscaling:  provider.InPlace(autoscalingHow),
			provider.FieldMachineType:  provider.NeedsNewPool("Civo does not change an existing pool's size"),
			provider.FieldZones:        provider.NotSupported("Civo has no zones within a region"),
			provider.FieldLabels:       provider.InPlace("PUT pool labels"),
			provider.FieldTaints:       provider.InPlace("PUT pool taints"),
			provider.FieldSpot:         provider.NotSupported("Civo has no spot instances"),
			provider.FieldDisk:         provider.NotSupported("Civo's disk follows the size"),
			provider.FieldVersion:      provider.NotSupported("Civo pools follow the cluster's version"),
			provider.FieldTags:         provider.NotSupported("Civo pools have no tags"),
			provider.FieldMode:         provider.InPlace("mode is a kpool label only on Civo"),
			provider.FieldAccelerators: provider.NotSupported("Civo takes GPUs from the size"),
			provider.FieldImage:        provider.NeedsNewPool("Civo sets a pool's public IPs when it creates the pool"),

			// Stored and shown, not applied to the pool: the API warns when they are set.
			provider.FieldAutoscalerTuning: provider.Advisory("Civo's cluster autoscaler takes no per-pool targets or delays"),
		},
	}
}

// autoscalingHow says where Civo's autoscaling bounds live: Civo's pool
// API has none; its cluster autoscaler (the marketplace application
// civo-cluster-autoscaler, which kpool installs through Civo's API) takes
// them as --nodes=MIN:MAX:POOL flags of its Deployment, which kpool writes
// through the cluster's Kubernetes API.
const autoscalingHow = "written to Civo's cluster autoscaler (the civo-cluster-autoscaler application, installed if missing): " +
	"its Deployment's --nodes=MIN:MAX:<pool id> entry for the pool"

var _ provider.KubeHosts = Profile{}

// KubeIPAddresses: a Civo cluster's API server is its own IP address on
// port 6443 (api_endpoint "https://212.2.247.178:6443" in the Terraform
// state civo/terraform-provider-civo#60 records), which its kubeconfig
// names.
func (Profile) KubeIPAddresses() bool { return true }

// KubeHostSuffixes: a cluster's dns_entry, <cluster id>.k8s.civo.com
// (the same record), names the same server.
func (Profile) KubeHostSuffixes() []string { return []string{".k8s.civo.com"} }

func (Profile) ControllerName() string { return "civo-nodepool-controller" }

func (Profile) LabelDomains() []string { return []string{"kubernetes.civo.com"} }

// PoolLabel is the label Civo puts on a pool's nodes, valued with its name.
func (Profile) PoolLabel() string { return "kubernetes.civo.com/civo-node-pool" }

var regionRE = regexp.MustCompile(`^[A-Za-z]{3}\d{1,2}$`)

func (Profile) ValidateCluster(fe *kpool.FieldErrors, s *kpool.ClusterSpec) {
	c, f := s.Platform.Civo, "spec.platform.civo"
	kpool.ValidatePattern(fe, f+".region", c.Region, regionRE, true, "a Civo region such as LON1")
	if c.ClusterID == "" {
		fe.Add(f+".clusterId", "required")
	} else if !kpool.IsUUID(c.ClusterID) {
		fe.Add(f+".clusterId", "%q is not a Civo cluster id (a UUID)", c.ClusterID)
	}
}

func (Profile) ClusterIdentity(s *kpool.ClusterSpec) []kpool.Setting {
	c := s.Platform.Civo
	if c == nil {
		return nil
	}
	return []kpool.Setting{{Path: "civo.clusterId", Value: c.ClusterID}, {Path: "civo.region", Value: c.Region}}
}

// CloudID is the cluster's region and id (Civo's ids are UUIDs; regions
// compare without case).
func (Profile) CloudID(s *kpool.ClusterSpec) string {
	if c := s.Platform.Civo; c != nil {
		return strings.ToLower(c.Region + "/" + c.ClusterID)
	}
	return ""
}

func (Profile) Region(s *kpool.ClusterSpec) string {
	if c := s.Platform.Civo; c != nil {
		return c.Region
	}
	return ""
}

func (Profile) Block(_ *kpool.Cluster, s *kpool.NodePoolSpec) provider.Block {
	c := s.Platform.Civo
	if c == nil {
		return provider.Block{}
	}
	const p = "spec.platform.civo."
	b := provider.Block{
		MachineType: c.Size, Labels: c.Labels, Taints: c.Taints,
		Fields: []provider.BlockField{
			{Field: provider.FieldMachineType, Path: p + "size", Value: c.Size},
			{Field: provider.FieldLabels, Path: p + "labels", Value: c.Labels},
			{Field: provider.FieldTaints, Path: p + "taints", Value: c.Taints},
			{Field: provider.FieldImage, Path: p + "publicIpNodePool", Value: c.PublicIPNodePool},
		},
	}
	// Given either way, as the driver reports it, so that a pool with the
	// other is seen to differ (provider.Compare).
	b.Extra = map[string]string{SettingPublicIP: strconv.FormatBool(c.PublicIPNodePool)}
	return b
}

// SettingPublicIP is the PoolSpec setting of a pool whose nodes get public
// IPs.
const SettingPublicIP = "publicIpNodePool"

func (Profile) ValidateBlock(*kpool.FieldErrors, *kpool.NodePoolSpec, *kpool.Cluster) {}

func (Profile) SetBlock(s *kpool.NodePoolSpec, b provider.Block) {
	s.Platform.Civo = &kpool.CivoNodePool{Size: b.MachineType, PublicIPNodePool: b.Extra[SettingPublicIP] == "true"}
}

func (Profile) ProviderZone(*kpool.Cluster, string) (string, error) { return "", noZones }
func (Profile) LogicalZone(*kpool.Cluster, string) (string, error)  { return "", noZones }
func (Profile) NodeZone(*kpool.Cluster, string) (string, error)     { return "", noZones }

var noZones = fmt.Errorf("platform %s has no zones", Type)

func (Profile) DiskType(t string) string                     { return t }
func (Profile) NodeTaints(d provider.PoolSpec) []kpool.Taint { return d.Taints }

func (Profile) CLI() provider.CLI {
	return provider.CLI{
		PoolNoun: "node pool",
		ClusterFlags: []provider.ClusterFlag{
			{Name: "region", Field: "region", Usage: "the cloud region"},
			{Name: "cluster-id", Field: "clusterId", Usage: "Civo cluster ID"},
		},
		PoolFields:     provider.PoolFields{MachineType: "size"},
		MachineExample: "g4s.kube.medium",
		PoolFlags: []provider.PoolFlag{
			{Name: "public-ip", Field: "publicIpNodePool", Kind: "bool", Usage: "give every node a public IP (set at create)"},
		},
	}
}

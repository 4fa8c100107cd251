// Package aks is Azure Kubernetes Service as kpool knows it without Azure's
// SDK: a kpool node pool is an AKS agent pool. Its driver, on
// armcontainerservice, is in aks/driver.
package aks

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// Type is the platform AKS clusters are on.
const Type = kpool.PlatformAzure

// Profile is AKS's provider.Profile.
type Profile struct{}

var _ provider.Profile = Profile{}

// SpotTaint is the taint (and, as a label, the pair) AKS puts on spot nodes.
var SpotTaint = kpool.Taint{Key: "kubernetes.azure.com/scalesetpriority", Value: "spot", Effect: kpool.EffectNoSchedule}

// Names are AKS's rules for agent pool names (Linux pools): 1-12 lowercase
// letters and digits, starting with a letter.
var Names = provider.NameRules{MaxLength: 12, Pattern: `^[a-z][a-z0-9]{0,11}$`, Drop: "-"}

func (Profile) Type() kpool.PlatformType { return Type }

func (Profile) Capabilities() provider.Capabilities {
	return provider.Capabilities{
		Provider: Type, Name: "AKS", NodePools: true, Autoscaling: true, ScaleToZero: true, SystemScaleToZero: false,
		Spot: true, Accelerators: false, Taints: true, LabelsInPlace: true, Upgrade: true, Tags: true,
		Zones: provider.ZonesLogical, Names: Names,
		Updates: map[provider.Field]provider.Rule{
			provider.FieldUpgrade:      provider.InPlace("AKS changes an agent pool's upgradeSettings (maxSurge, drainTimeoutInMinutes, nodeSoakDurationInMinutes) in place"),
			provider.FieldCount:        provider.InPlace("the agent pool scales in place"),
			provider.FieldAutoscaling:  provider.InPlace("autoscaler bounds change in place"),
			provider.FieldMachineType:  provider.NeedsNewPool("AKS does not change an agent pool's vmSize"),
			provider.FieldZones:        provider.NeedsNewPool("AKS does not change an agent pool's availabilityZones"),
			provider.FieldLabels:       provider.InPlace("AKS reapplies nodeLabels to every node"),
			provider.FieldTaints:       provider.InPlace("AKS reapplies nodeTaints to every node"),
			provider.FieldSpot:         provider.NeedsNewPool("scaleSetPriority is fixed when the agent pool is created"),
			provider.FieldDisk:         provider.NeedsNewPool("osDiskSizeGB and osDiskType are fixed when the agent pool is created"),
			provider.FieldVersion:      provider.RollsNodes("AKS upgrades the nodes with surge and drain"),
			provider.FieldTags:         provider.InPlace("tags change in place"),
			provider.FieldMode:         provider.InPlace("mode (System/User) changes in place"),
			provider.FieldAccelerators: provider.NotSupported("AKS takes GPUs from the vmSize, not from an accelerators list"),
			provider.FieldImage:        provider.NotSupported("AKS agent pools take no custom image or user data here"),

			// Stored and shown, not applied to the pool: the API warns when they are set.
			provider.FieldAutoscalerTuning: provider.Advisory("AKS takes autoscaler targets and delays cluster-wide (the cluster's autoScalerProfile), not per agent pool"),
		},
	}
}

func (Profile) ControllerName() string { return "aks-nodepool-controller" }
func (Profile) LabelDomains() []string { return []string{"kubernetes.azure.com"} }

var _ provider.KubeHosts = Profile{}

// KubeHostSuffixes: an AKS cluster's API server is
// <dnsPrefix>-<hash>.hcp.<location>.azmk8s.io, or a private cluster's
// <name>.privatelink.<location>.azmk8s.io (or a subzone of it)
// (learn.microsoft.com/azure/aks/private-clusters: the private DNS zone
// privatelink.<region>.azmk8s.io). Both are under azmk8s.io.
func (Profile) KubeHostSuffixes() []string { return []string{".azmk8s.io"} }

// KubeIPAddresses: AKS hands out host names, never bare addresses.
func (Profile) KubeIPAddresses() bool { return false }

// PoolLabel is the label AKS puts on a pool's nodes, valued with its name.
func (Profile) PoolLabel() string { return "kubernetes.azure.com/agentpool" }

var (
	resourceGroupRE = regexp.MustCompile(`^[-\w._()]{1,90}$`)
	clusterNameRE   = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9_-]{0,61}[A-Za-z0-9])?$`)
	locationRE      = regexp.MustCompile(`^[a-z0-9]{2,64}$`)
)

func (Profile) ValidateCluster(fe *kpool.FieldErrors, s *kpool.ClusterSpec) {
	a, f := s.Platform.Azure, "spec.platform.azure"
	if a.SubscriptionID == "" {
		fe.Add(f+".subscriptionId", "required")
	} else if !kpool.IsUUID(a.SubscriptionID) {
		fe.Add(f+".subscriptionId", "%q is not a subscription id (a UUID)", a.SubscriptionID)
	}
	kpool.ValidatePattern(fe, f+".resourceGroup", a.ResourceGroup, resourceGroupRE, true, "1-90 letters, digits, '_', '-', '.', '(' or ')'")
	if strings.HasSuffix(a.ResourceGroup, ".") {
		fe.Add(f+".resourceGroup", "must not end with '.'")
	}
	kpool.ValidatePattern(fe, f+".clusterName", a.ClusterName, clusterNameRE, true, "1-63 letters, digits, '_' or '-', starting and ending with a letter or digit")
	kpool.ValidatePattern(fe, f+".location", a.Location, locationRE, false, "an Azure region name such as westeurope")
	if strings.HasPrefix(strings.ToLower(s.Endpoint), "http://") {
		// The SDK sends a bearer token over TLS only: every call would be
		// refused, and no retry could change that.
		fe.Add("spec.endpoint", "an Azure Resource Manager endpoint must be https://, got %q", s.Endpoint)
	}
}

func (Profile) ClusterIdentity(s *kpool.ClusterSpec) []kpool.Setting {
	a := s.Platform.Azure
	if a == nil {
		return nil
	}
	return []kpool.Setting{{Path: "azure.clusterName", Value: a.ClusterName}, {Path: "azure.resourceGroup", Value: a.ResourceGroup},
		{Path: "azure.subscriptionId", Value: a.SubscriptionID}}
}

// CloudID is the managed cluster's resource id, lower-cased: Azure
// resource names ignore case.
func (Profile) CloudID(s *kpool.ClusterSpec) string {
	a := s.Platform.Azure
	if a == nil {
		return ""
	}
	return strings.ToLower("/subscriptions/" + a.SubscriptionID + "/resourceGroups/" + a.ResourceGroup +
		"/providers/Microsoft.ContainerService/managedClusters/" + a.ClusterName)
}

func (Profile) Region(s *kpool.ClusterSpec) string {
	if a := s.Platform.Azure; a != nil {
		return a.Location
	}
	return ""
}

func (Profile) Block(_ *kpool.Cluster, s *kpool.NodePoolSpec) provider.Block {
	a := s.Platform.Azure
	if a == nil {
		return provider.Block{}
	}
	const p = "spec.platform.azure."
	return provider.Block{
		MachineType: a.VMSize, Zones: a.AvailabilityZones, DiskSizeGB: a.OSDiskSizeGB, DiskType: a.OSDiskType, Spot: a.SpotInstances,
		Fields: []provider.BlockField{
			{Field: provider.FieldMachineType, Path: p + "vmSize", Value: a.VMSize},
			{Field: provider.FieldZones, Path: p + "availabilityZones", Value: a.AvailabilityZones},
			{Field: provider.FieldSpot, Path: p + "spotInstances", Value: a.SpotInstances},
			{Field: provider.FieldDisk, Path: p + "osDiskSizeGB", Value: a.OSDiskSizeGB},
			{Field: provider.FieldDisk, Path: p + "osDiskType", Value: a.OSDiskType},
		},
	}
}

// Zones is how many availability zones an Azure region has at most: AKS
// takes "1", "2" and "3" and refuses any other.
const Zones = 3

func (p Profile) ValidateBlock(fe *kpool.FieldErrors, s *kpool.NodePoolSpec, c *kpool.Cluster) {
	a, f := s.Platform.Azure, "spec.platform.azure"
	if strings.Contains(s.KubernetesVersion, "-") {
		// AKS's orchestratorVersion is MAJOR.MINOR[.PATCH], no build.
		fe.Add("spec.kubernetesVersion", "%q is not an AKS version: give MAJOR.MINOR or MAJOR.MINOR.PATCH, such as 1.30 or 1.30.4", s.KubernetesVersion)
	}
	kpool.ValidateRange(fe, f+".osDiskSizeGB", a.OSDiskSizeGB, 30, 2048, "GB")
	validateDiskType(fe, f+".osDiskType", a.OSDiskType, a.VMSize)
	// Zones beyond Azure's three: AKS refuses the agent pool.
	for i, z := range s.Zones {
		if _, err := p.ProviderZone(c, z); err != nil && kpool.IsLogicalZone(z) {
			fe.Add(fmt.Sprintf("spec.zones[%d]", i), "%v", err)
		}
	}
	if c != nil {
		for i, z := range a.AvailabilityZones {
			if _, err := p.LogicalZone(c, z); err != nil && z != "" {
				fe.Add(fmt.Sprintf("%s.availabilityZones[%d]", f, i), "%v", err)
			}
		}
	}
	// AKS refuses a spot agent pool in System mode: system pods must not
	// be evicted with the spot VMs.
	if a.SpotInstances && s.Mode == kpool.ModeSystem {
		fe.Add(f+".spotInstances", "AKS does not take a spot agent pool in System mode (system pods must not go with evicted spot VMs): use mode %q, or regular VMs", kpool.ModeUser)
	}
	validateUpgrade(fe, s.UpdateStrategy)
}

// validateDiskType checks osDiskType against what an AKS agent pool takes:
// Managed or Ephemeral. AKS gives a managed OS disk the SKU its VM size
// allows (premium SSD on sizes with premium storage), so Premium_LRS, as
// the NodePools guide writes it, is a Managed disk and is accepted only
// where AKS would make it premium; any other storage SKU cannot be asked
// of AKS and is refused rather than silently becoming something else.
func validateDiskType(fe *kpool.FieldErrors, field, t, vmSize string) {
	switch {
	case t == "", strings.EqualFold(t, "Managed"), strings.EqualFold(t, "Ephemeral"):
	case strings.EqualFold(t, "Premium_LRS"):
		if premium, known := PremiumStorage(vmSize); known && !premium {
			fe.Add(field, "Premium_LRS needs a VM size with premium storage (an 's' in its features, such as Standard_D4s_v5): "+
				"AKS gives %s's managed OS disk a standard SKU; use Managed, or a premium-storage size", vmSize)
		}
	default:
		fe.Add(field, "%q is not an AKS OS disk type: use Managed or Ephemeral (AKS picks a managed disk's SKU from the VM size; "+
			"Premium_LRS is accepted for sizes with premium storage)", t)
	}
}

// vmSizeRE reads an Azure VM size's first part: family (upper case),
// vCPUs, constrained vCPUs, additive features (lower case), as in
// Standard_E64-16ds_v4 or Standard_NC24ads_A100_v4.
var vmSizeRE = regexp.MustCompile(`^(?i:standard|basic)_([A-Z]+)([0-9]+)(-[0-9]+)?([a-z]*)(_|$)`)

// PremiumStorage reports whether a VM size supports premium storage, by
// Azure's naming convention: an 's' among its additive features
// (Standard_D4s_v5, Standard_B2ms), or one of the older families that
// always do (DS, GS). known is false when the name does not follow the
// convention.
func PremiumStorage(vmSize string) (premium, known bool) {
	m := vmSizeRE.FindStringSubmatch(vmSize)
	if m == nil {
		return false, false
	}
	switch m[1] {
	case "DS", "GS":
		return true, true
	}
	return strings.Contains(m[4], "s"), true
}

func (Profile) SetBlock(s *kpool.NodePoolSpec, b provider.Block) {
	s.Platform.Azure = &kpool.AzureNodePool{VMSize: b.MachineType, OSDiskSizeGB: b.DiskSizeGB, OSDiskType: b.DiskType, SpotInstances: b.Spot}
}

// ProviderZone: AKS zones are the logical zones as they are, 1 to Zones.
func (Profile) ProviderZone(_ *kpool.Cluster, logical string) (string, error) {
	n, err := provider.ZoneNumber(logical)
	if err != nil {
		return "", err
	}
	if n > Zones {
		return "", fmt.Errorf("zone %s: Azure regions have zones 1, 2 and 3 only", logical)
	}
	return logical, nil
}

// LogicalZone reads the API's "2", or the node label's "<location>-2".
func (p Profile) LogicalZone(c *kpool.Cluster, native string) (string, error) {
	region := p.Region(&c.Spec)
	if n := strings.TrimPrefix(strings.ToLower(native), strings.ToLower(region)+"-"); kpool.IsLogicalZone(n) {
		if _, err := p.ProviderZone(c, n); err != nil {
			return "", fmt.Errorf("%q is not a zone of %s region %q: %v", native, Type, region, err)
		}
		return n, nil
	}
	return "", fmt.Errorf("%q is not a zone of %s region %q", native, Type, region)
}

// NodeZone: AKS labels nodes "<location>-<zone>".
func (p Profile) NodeZone(c *kpool.Cluster, logical string) (string, error) {
	z, err := p.ProviderZone(c, logical)
	if err != nil {
		return "", err
	}
	region := strings.ToLower(p.Region(&c.Spec))
	if region == "" {
		// AKS's zone label is <location>-<zone>: without the location it
		// cannot be written.
		return "", fmt.Errorf("cluster %s has no spec.platform.azure.location, and AKS nodes' %s is <location>-%s: register the cluster's location",
			c.Name, provider.LabelTopologyZone, z)
	}
	return region + "-" + z, nil
}

// DiskType is the OS disk type AKS reports: Managed or Ephemeral.
// Premium_LRS (as the NodePools guide writes it, accepted only for sizes
// with premium storage) is a managed disk, so it is not drift.
func (Profile) DiskType(t string) string {
	if strings.EqualFold(t, "Ephemeral") {
		return "Ephemeral"
	}
	return "Managed"
}

// NodeTaints: AKS taints spot nodes.
func (Profile) NodeTaints(d provider.PoolSpec) []kpool.Taint {
	if d.Spot {
		return provider.WithTaint(d.Taints, SpotTaint)
	}
	return d.Taints
}

func (Profile) CLI() provider.CLI {
	return provider.CLI{
		PoolNoun: "agent pool",
		ClusterFlags: []provider.ClusterFlag{
			{Name: "subscription-id", Field: "subscriptionId", Usage: "Azure subscription ID"},
			{Name: "resource-group", Field: "resourceGroup", Usage: "Azure resource group of the AKS cluster"},
			{Name: "cluster-name", Field: "clusterName", Usage: "name of the cluster at its provider"},
			{Name: "location", Field: "location", Usage: "Azure location", Optional: true},
		},
		PoolFields:     provider.PoolFields{MachineType: "vmSize", Zones: "availabilityZones", DiskSize: "osDiskSizeGB", Spot: "spotInstances"},
		MachineExample: "Standard_D4s_v5",
	}
}

// Package oke is Oracle's Container Engine for Kubernetes as kpool knows it
// without OCI's SDK: a kpool node pool is an OKE node pool, placed in zones
// through availability domains.
package oke

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// Type is the platform OKE clusters are on.
const Type = kpool.PlatformOCI

// Profile is OKE's provider.Profile.
type Profile struct{}

var _ provider.Profile = Profile{}

func (Profile) Type() kpool.PlatformType { return Type }

func (Profile) Capabilities() provider.Capabilities {
	return provider.Capabilities{
		Provider: Type, Name: "OKE", NodePools: true, Autoscaling: true, ScaleToZero: true, SystemScaleToZero: true,
		Spot: true, Accelerators: false, Taints: false, LabelsInPlace: false, Upgrade: true, Tags: true,
		Zones: provider.ZonesADs, Names: provider.NameRules{MaxLength: 255, Pattern: `^[A-Za-z0-9][A-Za-z0-9_.-]{0,254}$`, Separator: "-"},
		Updates: map[provider.Field]provider.Rule{
			provider.FieldUpgrade:      provider.InPlace("OKE changes nodePoolCyclingDetails and nodeEvictionNodePoolSettings in place"),
			provider.FieldCount:        provider.InPlace("UpdateNodePool size"),
			provider.FieldAutoscaling:  provider.InPlace("kpool writes the pool's MIN:MAX:<node pool OCID> entry of OKE's Cluster Autoscaler add-on (installed when missing)"),
			provider.FieldMachineType:  provider.NewNodesOnly("OKE applies a new shape to nodes created afterwards; cycle the pool to replace existing ones"),
			provider.FieldZones:        provider.NewNodesOnly("OKE places nodes created afterwards in the new availability domains"),
			provider.FieldLabels:       provider.NewNodesOnly("OKE's initial node labels apply to nodes created afterwards"),
			provider.FieldTaints:       provider.NotSupported("OKE node pools have no taints"),
			provider.FieldSpot:         provider.NewNodesOnly("the preemptible setting applies to nodes created afterwards"),
			provider.FieldDisk:         provider.NewNodesOnly("the boot volume applies to nodes created afterwards"),
			provider.FieldVersion:      provider.NewNodesOnly("OKE upgrades nodes created afterwards; cycle the pool to upgrade existing ones"),
			provider.FieldTags:         provider.InPlace("freeform tags change in place"),
			provider.FieldMode:         provider.InPlace("mode is a kpool label only on OKE"),
			provider.FieldAccelerators: provider.NotSupported("OKE takes GPUs from the shape, not from an accelerators list"),
			provider.FieldImage:        provider.NewNodesOnly("the image and shape config apply to nodes created afterwards"),

			// Stored and shown, not applied to the pool: the API warns when they are set.
			provider.FieldAutoscalerTuning: provider.Advisory("OKE's cluster autoscaler add-on takes these cluster-wide, not per node pool"),
		},
	}
}

func (Profile) ControllerName() string { return "oke-nodepool-controller" }

func (Profile) LabelDomains() []string { return []string{"oke.oraclecloud.com", "oci.oraclecloud.com"} }

// KubeHostSuffixes are where OKE's clusters' API servers are by name: the
// legacy (non-VCN-native) endpoint <id>.<region>.clusters.oci.oraclecloud.com:6443
// (the SDK's ClusterEndpoints.Kubernetes; Oracle's Ansible modules' sample of
// it) and the private endpoint's VCN host name, under the VCN's DNS domain
// oraclevcn.com (ClusterEndpoints.VcnHostnameEndpoint; OCI's "DNS in Your
// Virtual Cloud Network").
func (Profile) KubeHostSuffixes() []string {
	return []string{".clusters.oci.oraclecloud.com", ".oraclevcn.com"}
}

// KubeIPAddresses: a VCN-native cluster's public and private endpoints,
// which CreateKubeconfig names, are IP addresses ("x.x.x.x:6443", the SDK's
// ClusterEndpoints.PublicEndpoint and PrivateEndpoint; OKE's "Setting Up
// Local Access to Clusters": --kube-endpoint PUBLIC_ENDPOINT|PRIVATE_ENDPOINT
// "the public IP address or the private IP address of the cluster's
// Kubernetes API endpoint").
func (Profile) KubeIPAddresses() bool { return true }

var _ provider.KubeHosts = Profile{}

// PoolLabel is the label a pool's nodes carry, valued with its name. OKE
// puts none of its own: kpool's driver puts this one in the initial node
// labels of the pools it creates or updates (README.md).
func (Profile) PoolLabel() string { return "oke.oraclecloud.com/node-pool" }

var (
	regionRE = regexp.MustCompile(`^[a-z]{2}-[a-z]+-\d{1,2}$`)
	adNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9:._\-]{0,127}$`)
	adNumRE  = regexp.MustCompile(`(?i)AD-([1-9][0-9]?)$`)
)

// ocid checks an Oracle Cloud ID of one of kinds.
func ocid(fe *kpool.FieldErrors, field, v string, required bool, kinds ...string) {
	if v == "" {
		if required {
			fe.Add(field, "required")
		}
		return
	}
	for _, k := range kinds {
		if strings.HasPrefix(v, "ocid1."+k+".") && !strings.ContainsAny(v, " \t\n/") {
			return
		}
	}
	fe.Add(field, "%q is not an OCID of kind %s (ocid1.%s.…)", v, strings.Join(kinds, " or "), kinds[0])
}

func (Profile) ValidateCluster(fe *kpool.FieldErrors, s *kpool.ClusterSpec) {
	o, f := s.Platform.OCI, "spec.platform.oci"
	kpool.ValidatePattern(fe, f+".region", o.Region, regionRE, true, "an OCI region such as us-ashburn-1")
	ocid(fe, f+".compartmentId", o.CompartmentID, true, "compartment", "tenancy")
	ocid(fe, f+".clusterId", o.ClusterID, true, "cluster")
	ocid(fe, f+".imageId", o.ImageID, false, "image")
	if len(o.Subnets) == 0 {
		fe.Add(f+".subnets", "required: map each availability domain to the worker subnet used there")
	}
	for _, ad := range kpool.SortedKeys(o.Subnets) {
		if !adNameRE.MatchString(ad) {
			fe.Add(f+".subnets."+ad, "%q is not an availability domain name", ad)
		}
		ocid(fe, f+".subnets."+ad, o.Subnets[ad], true, "subnet")
	}
}

func (Profile) ClusterIdentity(s *kpool.ClusterSpec) []kpool.Setting {
	o := s.Platform.OCI
	if o == nil {
		return nil
	}
	return []kpool.Setting{{Path: "oci.clusterId", Value: o.ClusterID}, {Path: "oci.compartmentId", Value: o.CompartmentID},
		{Path: "oci.region", Value: o.Region}}
}

// CloudID is the cluster's OCID, which names it alone (OCIDs compare
// without case).
func (Profile) CloudID(s *kpool.ClusterSpec) string {
	if o := s.Platform.OCI; o != nil {
		return strings.ToLower(o.ClusterID)
	}
	return ""
}

func (Profile) Region(s *kpool.ClusterSpec) string {
	if o := s.Platform.OCI; o != nil {
		return o.Region
	}
	return ""
}

// Block reads the pool's block; a pool without its own image takes the
// cluster's default.
func (Profile) Block(c *kpool.Cluster, s *kpool.NodePoolSpec) provider.Block {
	o := s.Platform.OCI
	if o == nil {
		return provider.Block{}
	}
	const p = "spec.platform.oci."
	b := provider.Block{
		MachineType: o.Shape, Zones: o.AvailabilityDomains, Labels: o.Labels, DiskSizeGB: o.BootVolumeSizeInGBs, Spot: o.Preemptible,
		Extra: map[string]string{},
		Fields: []provider.BlockField{
			{Field: provider.FieldMachineType, Path: p + "shape", Value: o.Shape},
			{Field: provider.FieldZones, Path: p + "availabilityDomains", Value: o.AvailabilityDomains},
			{Field: provider.FieldLabels, Path: p + "labels", Value: o.Labels},
			{Field: provider.FieldSpot, Path: p + "preemptible", Value: o.Preemptible},
			{Field: provider.FieldDisk, Path: p + "bootVolumeSizeInGBs", Value: o.BootVolumeSizeInGBs},
			{Field: provider.FieldImage, Path: p + "imageId", Value: o.ImageID},
			{Field: provider.FieldImage, Path: p + "ocpus", Value: o.OCPUs},
			{Field: provider.FieldImage, Path: p + "memoryInGBs", Value: o.MemoryInGBs},
		},
	}
	image := o.ImageID
	if image == "" && c != nil && c.Spec.Platform.OCI != nil {
		image = c.Spec.Platform.OCI.ImageID
	}
	for k, v := range map[string]string{"imageId": image, "ocpus": number(o.OCPUs), "memoryInGBs": number(o.MemoryInGBs)} {
		if v != "" {
			b.Extra[k] = v
		}
	}
	return b
}

func number(f float64) string {
	if f == 0 {
		return ""
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

func (Profile) ValidateBlock(fe *kpool.FieldErrors, s *kpool.NodePoolSpec, c *kpool.Cluster) {
	o, f := s.Platform.OCI, "spec.platform.oci"
	if o.OCPUs < 0 || o.OCPUs > 512 {
		fe.Add(f+".ocpus", "must be more than 0 and at most 512, got %v", o.OCPUs)
	}
	if o.MemoryInGBs < 0 || o.MemoryInGBs > 8192 {
		fe.Add(f+".memoryInGBs", "must be more than 0 and at most 8192, got %v", o.MemoryInGBs)
	}
	// OCI's rules for a shape's size: a flexible shape needs its OCPUs
	// (1-114; memory 1-64 GB per OCPU, at most 1776); a fixed one takes none.
	flex := strings.HasSuffix(o.Shape, ".Flex")
	switch {
	case flex && o.OCPUs == 0:
		fe.Add(f+".ocpus", "required for the flexible shape %s (1 to 114; --ocpus)", o.Shape)
	case flex && o.OCPUs > 114:
		fe.Add(f+".ocpus", "must be at most 114 for %s, got %v", o.Shape, o.OCPUs)
	case flex && o.OCPUs > 0 && o.OCPUs < 1:
		fe.Add(f+".ocpus", "must be at least 1 for %s, got %v", o.Shape, o.OCPUs)
	case !flex && o.Shape != "" && (o.OCPUs != 0 || o.MemoryInGBs != 0):
		fe.Add(f+".ocpus", "only a flexible shape (*.Flex) takes ocpus and memoryInGBs, not %s", o.Shape)
	}
	if flex && o.MemoryInGBs != 0 && o.OCPUs >= 1 && (o.MemoryInGBs < 1 || o.MemoryInGBs > 64*o.OCPUs || o.MemoryInGBs > 1776) {
		fe.Add(f+".memoryInGBs", "must be 1 to 64 GB per OCPU (at most 1776) for %s with %v OCPUs, got %v", o.Shape, o.OCPUs, o.MemoryInGBs)
	}
	kpool.ValidateRange(fe, f+".bootVolumeSizeInGBs", o.BootVolumeSizeInGBs, 50, 32768, "GB")
	ocid(fe, f+".imageId", o.ImageID, false, "image")
	if o.ImageID == "" && (c.Spec.Platform.OCI == nil || c.Spec.Platform.OCI.ImageID == "") {
		fe.Add(f+".imageId", "required: cluster %s has no default imageId", c.Name)
	}
	validateStrategy(fe, s)
}

// SetBlock writes the block's shape, boot volume and preemptible setting
// into the spec. A spec with a block keeps the rest of it (labels,
// availability domains, image, OCPUs and memory: a logical pool's member
// made from its template with another offering, SetOffering), but for
// OCPUs and memory when the new shape is not flexible; an imported pool's
// block (none yet) takes its image, OCPUs and memory from the observed
// settings (Extra).
func (Profile) SetBlock(s *kpool.NodePoolSpec, b provider.Block) {
	o := kpool.OCINodePool{ImageID: b.Extra["imageId"], OCPUs: settingNumber(b.Extra["ocpus"]), MemoryInGBs: settingNumber(b.Extra["memoryInGBs"])}
	if s.Platform.OCI != nil {
		o = *s.Platform.OCI
		o.Labels, o.AvailabilityDomains = maps.Clone(o.Labels), slices.Clone(o.AvailabilityDomains)
	}
	o.Shape, o.BootVolumeSizeInGBs, o.Preemptible = b.MachineType, b.DiskSizeGB, b.Spot
	if !strings.HasSuffix(o.Shape, ".Flex") {
		o.OCPUs, o.MemoryInGBs = 0, 0
	}
	s.Platform.OCI = &o
}

// settingNumber reads an observed setting's number ("" or not a number: 0).
func settingNumber(v string) float64 {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0
	}
	return f
}

// ads lists the availability domains an OKE cluster has subnets in.
func ads(c *kpool.Cluster) []string {
	if c.Spec.Platform.OCI == nil {
		return nil
	}
	var out []string
	for ad := range c.Spec.Platform.OCI.Subnets {
		out = append(out, ad)
	}
	sort.Strings(out)
	return out
}

// ProviderZone is the availability domain, among those the cluster has
// subnets in, whose name ends in AD-N.
func (Profile) ProviderZone(c *kpool.Cluster, logical string) (string, error) {
	if _, err := provider.ZoneNumber(logical); err != nil {
		return "", err
	}
	for _, ad := range ads(c) {
		if m := adNumRE.FindStringSubmatch(ad); m != nil && m[1] == logical {
			return ad, nil
		}
	}
	return "", fmt.Errorf("cluster %s has no availability domain ending in AD-%s among its subnets (%s)", c.Name, logical, strings.Join(ads(c), ", "))
}

func (p Profile) LogicalZone(c *kpool.Cluster, native string) (string, error) {
	if m := adNumRE.FindStringSubmatch(native); m != nil {
		return m[1], nil
	}
	return "", fmt.Errorf("%q is not a zone of %s region %q", native, Type, p.Region(&c.Spec))
}

// NodeZone is the shortened availability domain name OKE puts on nodes: the
// full name without its tenancy prefix ("Uocm:PHX-AD-1" is "PHX-AD-1"), or,
// for a bare "AD-N", the region's identifier upper-cased before it, with the
// two exceptions Oracle documents (Ashburn and Phoenix).
func (p Profile) NodeZone(c *kpool.Cluster, logical string) (string, error) {
	ad, err := p.ProviderZone(c, logical)
	if err != nil {
		return "", err
	}
	if _, after, ok := strings.Cut(ad, ":"); ok {
		return after, nil
	}
	if !strings.HasPrefix(strings.ToUpper(ad), "AD-") {
		return ad, nil
	}
	region := p.Region(&c.Spec)
	prefix := strings.ToUpper(region)
	switch region {
	case "us-ashburn-1":
		prefix = "US-ASHBURN"
	case "us-phoenix-1":
		prefix = "PHX"
	}
	return prefix + "-" + strings.ToUpper(ad), nil
}

func (Profile) DiskType(t string) string                     { return t }
func (Profile) NodeTaints(d provider.PoolSpec) []kpool.Taint { return d.Taints }

func (Profile) CLI() provider.CLI {
	return provider.CLI{
		PoolNoun: "node pool",
		ClusterFlags: []provider.ClusterFlag{
			{Name: "region", Field: "region", Usage: "the cloud region"},
			{Name: "compartment-id", Field: "compartmentId", Usage: "OCI compartment OCID"},
			{Name: "cluster-id", Field: "clusterId", Usage: "OKE cluster OCID"},
			{Name: "image-id", Field: "imageId", Usage: "default node image OCID", Optional: true},
			{Name: "subnet", Field: "subnets", Usage: "AD=SUBNET, repeatable", Map: true},
		},
		PoolFields:     provider.PoolFields{MachineType: "shape", Zones: "availabilityDomains", DiskSize: "bootVolumeSizeInGBs", Spot: "preemptible"},
		MachineExample: "VM.Standard.E4.Flex",
		ExampleFlags:   "--ocpus 2 --memory-gb 16",
		PoolFlags: []provider.PoolFlag{
			{Name: "image-id", Field: "imageId", Kind: "string", Usage: "node image OCID (default: the cluster's imageId)"},
			{Name: "ocpus", Field: "ocpus", Kind: "number", Usage: "OCPUs of a flexible shape"},
			{Name: "memory-gb", Field: "memoryInGBs", Kind: "number", Usage: "memory of a flexible shape, in GB"},
		},
	}
}

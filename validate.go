package kpool

import (
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Limits that validation enforces.
const (
	MaxNodes        = 1000
	MaxTaints       = 50
	MaxTags         = 50
	MaxAccelerators = 16
	MaxUserData     = 16 << 10
	maxDelay        = 24 * time.Hour
)

var (
	machineTypeRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._\-]{0,127}$`)
	diskTypeRE    = machineTypeRE
	versionRE     = regexp.MustCompile(`^v?\d+\.\d+(\.\d+)?$`)
	zoneRE        = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9:._\-]{0,127}$`)

	azureRGRE      = regexp.MustCompile(`^[-\w._()]{1,90}$`)
	azureNameRE    = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9_-]{0,61}[A-Za-z0-9])?$`)
	azureLocRE     = regexp.MustCompile(`^[a-z0-9]{2,64}$`)
	awsRegionRE    = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-\d{1,2}$`)
	awsNameRE      = regexp.MustCompile(`^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$`)
	awsRoleRE      = regexp.MustCompile(`^arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]{1,512}$`)
	awsAZIDRE      = regexp.MustCompile(`^[a-z]{3,5}\d{0,2}-az\d{1,2}$`)
	awsSubnetRE    = regexp.MustCompile(`^subnet-[0-9a-f]{8,17}$`)
	gcpProjectRE   = regexp.MustCompile(`^[a-z][a-z0-9-]{4,28}[a-z0-9]$`)
	gcpLocationRE  = regexp.MustCompile(`^[a-z]+-[a-z]+\d+(-[a-z])?$`)
	gcpClusterRE   = regexp.MustCompile(`^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$`)
	ociRegionRE    = regexp.MustCompile(`^[a-z]{2}-[a-z]+-\d{1,2}$`)
	civoRegionRE   = regexp.MustCompile(`^[A-Za-z]{3}\d{1,2}$`)
	controllerName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)
	conditionType  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,62}$`)
	conditionWhy   = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)
)

// Label domains that providers or kpool own; users may not set labels there.
var reservedLabelDomains = []string{
	"kompox.dev", "kubernetes.io", "k8s.io",
	"kubernetes.azure.com", "eks.amazonaws.com", "cloud.google.com", "kubernetes.civo.com",
}

// labelDomainAllowed lists exceptions inside the reserved domains.
var labelDomainAllowed = []string{"node-restriction.kubernetes.io"}

// ValidateName checks a cluster or pool name: a DNS-1035 label, 1-63
// lowercase letters, digits and '-', starting with a letter.
func ValidateName(fe *FieldErrors, field, name string) {
	if name == "" {
		fe.Add(field, "required")
		return
	}
	if errs := validation.IsDNS1035Label(name); len(errs) > 0 {
		fe.Add(field, "%q is not a valid name: use 1-63 lowercase letters, digits and '-', starting with a letter and ending with a letter or digit", name)
	}
}

// IsUUID reports whether s is a UUID in its canonical form: 36 characters,
// lower-case hex and dashes. Other spellings uuid.Parse accepts ({…},
// urn:uuid:…, no dashes, upper case) are refused so that one id has one form.
func IsUUID(s string) bool {
	return len(s) == 36 && uuid.Validate(s) == nil && strings.ToLower(s) == s
}

// ValidateID checks a client-chosen object id.
func ValidateID(fe *FieldErrors, field, id string) {
	if id != "" && !IsUUID(id) {
		fe.Add(field, "%q is not a UUID in canonical form (such as 550e8400-e29b-41d4-a716-446655440000)", id)
	}
}

// ValidateCluster checks a whole cluster: its name and spec.
func ValidateCluster(c *Cluster) error {
	var fe FieldErrors
	ValidateName(&fe, "name", c.Name)
	ValidateID(&fe, "id", c.ID)
	validateClusterSpec(&fe, &c.Spec)
	return fe.Err()
}

func validateClusterSpec(fe *FieldErrors, s *ClusterSpec) {
	p := &s.Platform
	const base = "spec.platform"
	if p.Type == "" {
		fe.Add(base+".type", "required: one of %s", platformList())
	} else if !p.Type.Known() {
		fe.Add(base+".type", "unknown platform %q: use one of %s", p.Type, platformList())
	}
	blocks := map[PlatformType]bool{
		PlatformAzure: p.Azure != nil, PlatformAWS: p.AWS != nil, PlatformGCP: p.GCP != nil,
		PlatformOCI: p.OCI != nil, PlatformCivo: p.Civo != nil, PlatformK3s: p.K3s != nil, PlatformMicroVM: p.MicroVM != nil,
	}
	for _, t := range PlatformTypes {
		if blocks[t] && t != p.Type && p.Type.Known() {
			fe.Add(base+"."+string(t), "not allowed: the platform type is %q", p.Type)
		}
	}
	if p.Type.Known() && p.Type.HasNodePools() && !blocks[p.Type] {
		fe.Add(base+"."+string(p.Type), "required for platform type %q", p.Type)
	}
	switch {
	case p.Type == PlatformAzure && p.Azure != nil:
		a, f := p.Azure, base+".azure"
		if a.SubscriptionID == "" {
			fe.Add(f+".subscriptionId", "required")
		} else if !IsUUID(a.SubscriptionID) {
			fe.Add(f+".subscriptionId", "%q is not a subscription id (a UUID)", a.SubscriptionID)
		}
		pattern(fe, f+".resourceGroup", a.ResourceGroup, azureRGRE, true, "1-90 letters, digits, '_', '-', '.', '(' or ')'")
		if strings.HasSuffix(a.ResourceGroup, ".") {
			fe.Add(f+".resourceGroup", "must not end with '.'")
		}
		pattern(fe, f+".clusterName", a.ClusterName, azureNameRE, true, "1-63 letters, digits, '_' or '-', starting and ending with a letter or digit")
		pattern(fe, f+".location", a.Location, azureLocRE, false, "an Azure region name such as westeurope")
	case p.Type == PlatformAWS && p.AWS != nil:
		a, f := p.AWS, base+".aws"
		pattern(fe, f+".region", a.Region, awsRegionRE, true, "an AWS region such as us-west-2")
		pattern(fe, f+".clusterName", a.ClusterName, awsNameRE, true, "1-100 letters, digits, '_' or '-', starting with a letter or digit")
		pattern(fe, f+".nodeRoleArn", a.NodeRoleARN, awsRoleRE, true, "an IAM role ARN such as arn:aws:iam::123456789012:role/eks-nodes")
		if len(a.Subnets) == 0 {
			fe.Add(f+".subnets", "required: map each availability zone to the subnet node groups use there")
		}
		for _, zone := range sortedKeys(a.Subnets) {
			zf := f + ".subnets." + zone
			inRegion := a.Region != "" && strings.HasPrefix(zone, a.Region) && len(zone) == len(a.Region)+1 && zone[len(zone)-1] >= 'a' && zone[len(zone)-1] <= 'z'
			if !inRegion && !awsAZIDRE.MatchString(zone) {
				fe.Add(zf, "%q is not an availability zone of region %q (such as %sa) or a zone id (such as use1-az1)", zone, a.Region, a.Region)
			}
			pattern(fe, zf, a.Subnets[zone], awsSubnetRE, true, "a subnet id such as subnet-0123456789abcdef0")
		}
	case p.Type == PlatformGCP && p.GCP != nil:
		g, f := p.GCP, base+".gcp"
		pattern(fe, f+".projectId", g.ProjectID, gcpProjectRE, true, "6-30 lowercase letters, digits or '-', starting with a letter")
		pattern(fe, f+".location", g.Location, gcpLocationRE, true, "a region such as us-central1 or a zone such as us-central1-a")
		pattern(fe, f+".clusterName", g.ClusterName, gcpClusterRE, true, "1-40 lowercase letters, digits or '-', starting with a letter")
	case p.Type == PlatformOCI && p.OCI != nil:
		o, f := p.OCI, base+".oci"
		pattern(fe, f+".region", o.Region, ociRegionRE, true, "an OCI region such as us-ashburn-1")
		ocid(fe, f+".compartmentId", o.CompartmentID, true, "compartment", "tenancy")
		ocid(fe, f+".clusterId", o.ClusterID, true, "cluster")
		ocid(fe, f+".imageId", o.ImageID, false, "image")
		if len(o.Subnets) == 0 {
			fe.Add(f+".subnets", "required: map each availability domain to the worker subnet used there")
		}
		for _, ad := range sortedKeys(o.Subnets) {
			if !zoneRE.MatchString(ad) {
				fe.Add(f+".subnets."+ad, "%q is not an availability domain name", ad)
			}
			ocid(fe, f+".subnets."+ad, o.Subnets[ad], true, "subnet")
		}
	case p.Type == PlatformCivo && p.Civo != nil:
		c, f := p.Civo, base+".civo"
		pattern(fe, f+".region", c.Region, civoRegionRE, true, "a Civo region such as LON1")
		if c.ClusterID == "" {
			fe.Add(f+".clusterId", "required")
		} else if !IsUUID(c.ClusterID) {
			fe.Add(f+".clusterId", "%q is not a Civo cluster id (a UUID)", c.ClusterID)
		}
	}
	if s.Endpoint != "" {
		u, err := url.Parse(s.Endpoint)
		switch {
		case err != nil || !u.IsAbs() || u.Host == "":
			fe.Add("spec.endpoint", "%q is not an absolute URL", s.Endpoint)
		case u.Scheme != "http" && u.Scheme != "https":
			fe.Add("spec.endpoint", "scheme must be http or https, got %q", u.Scheme)
		case u.User != nil:
			fe.Add("spec.endpoint", "must not carry credentials")
		case u.RawQuery != "" || u.Fragment != "":
			fe.Add("spec.endpoint", "must not have a query or fragment")
		}
	}
}

func platformList() string {
	names := make([]string, len(PlatformTypes))
	for i, t := range PlatformTypes {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

func pattern(fe *FieldErrors, field, v string, re *regexp.Regexp, required bool, want string) {
	if v == "" {
		if required {
			fe.Add(field, "required")
		}
		return
	}
	if !re.MatchString(v) {
		fe.Add(field, "%q is not valid: want %s", v, want)
	}
}

func ocid(fe *FieldErrors, field, v string, required bool, kinds ...string) {
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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// DefaultNodePoolSpec fills in what a pool spec may omit: the platform type
// (the cluster's), the mode (user) and the node count (the autoscaler's
// minimum, or 1).
func DefaultNodePoolSpec(s *NodePoolSpec, c *Cluster) {
	if s.Platform.Type == "" {
		s.Platform.Type = c.Spec.Platform.Type
	}
	if s.Mode == "" {
		s.Mode = ModeUser
	}
	if s.Management == "" {
		s.Management = ManagementManage
	}
	if s.DeletionPolicy == "" {
		s.DeletionPolicy = DeletionDelete
	}
	for i, z := range s.Zones {
		s.Zones[i] = NormalizeZone(z, c.Spec.Region())
	}
	if s.NodeCount == nil {
		n := 1
		if a := s.Autoscaling; a.On() && a.MinNodes != nil && *a.MinNodes > 1 {
			n = *a.MinNodes
		}
		s.NodeCount = &n
	}
}

// ValidateNodePool checks a pool (name and spec) against its cluster.
func ValidateNodePool(p *NodePool, c *Cluster) error {
	var fe FieldErrors
	ValidateName(&fe, "name", p.Name)
	ValidateID(&fe, "id", p.ID)
	validateNodePoolSpec(&fe, &p.Spec, c)
	return fe.Err()
}

// scaleToZero reports whether a pool of this platform and mode may have no
// nodes (autoscaling minNodes 0).
func scaleToZero(t PlatformType, mode string) bool {
	switch {
	case t == PlatformCivo:
		return false // Civo pools need at least one node
	case t == PlatformAzure && mode == ModeSystem:
		return false // AKS system pools keep at least one node
	}
	return true
}

func validateNodePoolSpec(fe *FieldErrors, s *NodePoolSpec, c *Cluster) {
	pt := c.Spec.Platform.Type
	if s.Platform.Type != "" && s.Platform.Type != pt {
		fe.Add("spec.platform.type", "must be %q, the platform of cluster %s (or omitted)", pt, c.Name)
	}
	blocks := map[PlatformType]bool{
		PlatformGCP: s.Platform.GCP != nil, PlatformAWS: s.Platform.AWS != nil, PlatformAzure: s.Platform.Azure != nil,
		PlatformOCI: s.Platform.OCI != nil, PlatformCivo: s.Platform.Civo != nil,
	}
	for _, t := range PlatformTypes {
		if blocks[t] && t != pt {
			fe.Add("spec.platform."+string(t), "not allowed: the cluster's platform is %q", pt)
		}
	}
	if !blocks[pt] {
		fe.Add("spec.platform."+string(pt), "required: the pool's %s settings, with at least its %s", pt, machineField(pt))
	} else {
		mt, field := s.MachineType()
		pattern(fe, field, mt, machineTypeRE, true, "a machine type name such as "+machineExample(pt))
	}

	if s.Mode != ModeSystem && s.Mode != ModeUser {
		fe.Add("spec.mode", "must be %q or %q, got %q", ModeSystem, ModeUser, s.Mode)
	}
	if s.Management != ManagementManage && s.Management != ManagementObserve {
		fe.Add("spec.management", "must be %q or %q, got %q", ManagementManage, ManagementObserve, s.Management)
	}
	if s.DeletionPolicy != DeletionDelete && s.DeletionPolicy != DeletionAbandon {
		fe.Add("spec.deletionPolicy", "must be %q or %q, got %q", DeletionDelete, DeletionAbandon, s.DeletionPolicy)
	}
	pattern(fe, "spec.kubernetesVersion", s.KubernetesVersion, versionRE, false, "a Kubernetes version such as 1.30 or 1.30.4")
	validateCounts(fe, s, pt)
	logicalZones(fe, s.Zones, c.Spec.Region())
	validateMetadata(fe, s)
	validateTags(fe, s.Tags)

	p := s.Platform
	switch {
	case pt == PlatformGCP && p.GCP != nil:
		g, f := p.GCP, "spec.platform.gcp"
		intRange(fe, f+".diskSize", g.DiskSize, 10, 65536, "GB")
		pattern(fe, f+".diskType", g.DiskType, diskTypeRE, false, "a disk type such as pd-ssd")
		zones(fe, f+".zones", g.Zones)
		if len(g.Accelerators) > 8 {
			fe.Add(f+".accelerators", "at most 8 accelerator types, got %d", len(g.Accelerators))
		}
		for i, a := range g.Accelerators {
			af := fmt.Sprintf("%s.accelerators[%d]", f, i)
			pattern(fe, af+".type", a.Type, machineTypeRE, true, "an accelerator type such as nvidia-tesla-t4")
			if a.Count < 1 || a.Count > MaxAccelerators {
				fe.Add(af+".count", "must be between 1 and %d, got %d", MaxAccelerators, a.Count)
			}
		}
	case pt == PlatformAWS && p.AWS != nil:
		a, f := p.AWS, "spec.platform.aws"
		intRange(fe, f+".volumeSize", a.VolumeSize, 1, 16384, "GiB")
		pattern(fe, f+".volumeType", a.VolumeType, diskTypeRE, false, "a volume type such as gp3")
		zones(fe, f+".availabilityZones", a.AvailabilityZones)
		if len(a.UserData) > MaxUserData {
			fe.Add(f+".userData", "at most %d bytes, got %d", MaxUserData, len(a.UserData))
		}
	case pt == PlatformAzure && p.Azure != nil:
		a, f := p.Azure, "spec.platform.azure"
		intRange(fe, f+".osDiskSizeGB", a.OSDiskSizeGB, 30, 2048, "GB")
		pattern(fe, f+".osDiskType", a.OSDiskType, diskTypeRE, false, "a disk type such as Managed, Ephemeral or Premium_LRS")
		zones(fe, f+".availabilityZones", a.AvailabilityZones)
	case pt == PlatformOCI && p.OCI != nil:
		o, f := p.OCI, "spec.platform.oci"
		if o.OCPUs < 0 || o.OCPUs > 512 {
			fe.Add(f+".ocpus", "must be more than 0 and at most 512, got %v", o.OCPUs)
		}
		if o.MemoryInGBs < 0 || o.MemoryInGBs > 8192 {
			fe.Add(f+".memoryInGBs", "must be more than 0 and at most 8192, got %v", o.MemoryInGBs)
		}
		intRange(fe, f+".bootVolumeSizeInGBs", o.BootVolumeSizeInGBs, 50, 32768, "GB")
		zones(fe, f+".availabilityDomains", o.AvailabilityDomains)
		ocid(fe, f+".imageId", o.ImageID, false, "image")
		if o.ImageID == "" && (c.Spec.Platform.OCI == nil || c.Spec.Platform.OCI.ImageID == "") {
			fe.Add(f+".imageId", "required: cluster %s has no default imageId", c.Name)
		}
	}
}

func machineField(t PlatformType) string {
	switch t {
	case PlatformGCP:
		return "machineType"
	case PlatformAWS:
		return "instanceType"
	case PlatformAzure:
		return "vmSize"
	case PlatformOCI:
		return "shape"
	}
	return "size"
}

func machineExample(t PlatformType) string {
	switch t {
	case PlatformGCP:
		return "n2-standard-4"
	case PlatformAWS:
		return "m5.xlarge"
	case PlatformAzure:
		return "Standard_D4s_v5"
	case PlatformOCI:
		return "VM.Standard.E4.Flex"
	}
	return "g4s.kube.medium"
}

func intRange(fe *FieldErrors, field string, v, lo, hi int, unit string) {
	if v != 0 && (v < lo || v > hi) {
		fe.Add(field, "must be between %d and %d %s, got %d", lo, hi, unit, v)
	}
}

func zones(fe *FieldErrors, field string, zs []string) {
	seen := map[string]bool{}
	for i, z := range zs {
		f := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case z == "":
			fe.Add(f, "must not be empty")
		case !zoneRE.MatchString(z):
			fe.Add(f, "%q is not a zone name", z)
		case seen[z]:
			fe.Add(f, "duplicate zone %q", z)
		}
		seen[z] = true
	}
}

var logicalZoneRE = regexp.MustCompile(`^[1-9][0-9]?$`)

// NormalizeZone turns "<region>-N" into the logical zone "N" when region is
// the cluster's; anything else is returned as it is (and validated).
func NormalizeZone(z, region string) string {
	if region != "" && strings.HasPrefix(z, region+"-") && logicalZoneRE.MatchString(z[len(region)+1:]) {
		return z[len(region)+1:]
	}
	return z
}

func logicalZones(fe *FieldErrors, zs []string, region string) {
	seen := map[string]bool{}
	for i, z := range zs {
		f := fmt.Sprintf("spec.zones[%d]", i)
		switch {
		case !logicalZoneRE.MatchString(z):
			fe.Add(f, "%q is not a logical zone: use \"1\", \"2\", \"3\"… or \"%s-1\"…", z, orRegion(region))
		case seen[z]:
			fe.Add(f, "duplicate zone %q", z)
		}
		seen[z] = true
	}
}

func orRegion(r string) string {
	if r == "" {
		return "<region>"
	}
	return r
}

func validateCounts(fe *FieldErrors, s *NodePoolSpec, pt PlatformType) {
	count := s.Count()
	if s.NodeCount != nil && (count < 0 || count > MaxNodes) {
		fe.Add("spec.nodeCount", "must be between 1 and %d, got %d", MaxNodes, count)
	}
	a := s.Autoscaling
	if a == nil {
		if count == 0 && s.NodeCount != nil {
			fe.Add("spec.nodeCount", "must be at least 1 (only an autoscaled pool with minNodes 0 may start at 0)")
		}
		return
	}
	const f = "spec.autoscaling"
	for _, b := range []struct {
		name string
		v    *int
	}{{"minNodes", a.MinNodes}, {"maxNodes", a.MaxNodes}} {
		if b.v != nil && (*b.v < 0 || *b.v > MaxNodes) {
			fe.Add(f+"."+b.name, "must be between 0 and %d, got %d", MaxNodes, *b.v)
		}
	}
	for _, u := range []struct {
		name string
		v    *int
	}{{"targetCPUUtilization", a.TargetCPUUtilization}, {"targetMemoryUtilization", a.TargetMemoryUtilization}} {
		if u.v != nil && (*u.v < 1 || *u.v > 100) {
			fe.Add(f+"."+u.name, "must be a percentage between 1 and 100, got %d", *u.v)
		}
	}
	for _, d := range []struct{ name, v string }{{"scaleDownDelay", a.ScaleDownDelay}, {"scaleUpDelay", a.ScaleUpDelay}} {
		if d.v == "" {
			continue
		}
		dur, err := time.ParseDuration(d.v)
		switch {
		case err != nil:
			fe.Add(f+"."+d.name, "%q is not a duration such as 30s, 10m or 1h", d.v)
		case dur < 0 || dur > maxDelay:
			fe.Add(f+"."+d.name, "must be between 0s and %v, got %s", maxDelay, d.v)
		}
	}
	if !a.Enabled {
		if a.MinNodes != nil && a.MaxNodes != nil && *a.MinNodes > *a.MaxNodes {
			fe.Add(f+".minNodes", "must not exceed maxNodes (%d), got %d", *a.MaxNodes, *a.MinNodes)
		}
		if count == 0 && s.NodeCount != nil {
			fe.Add("spec.nodeCount", "must be at least 1 (only an autoscaled pool with minNodes 0 may start at 0)")
		}
		return
	}
	if a.MinNodes == nil {
		fe.Add(f+".minNodes", "required when autoscaling is enabled")
	}
	if a.MaxNodes == nil {
		fe.Add(f+".maxNodes", "required when autoscaling is enabled")
	}
	if a.MinNodes == nil || a.MaxNodes == nil {
		return
	}
	lo, hi := *a.MinNodes, *a.MaxNodes
	switch {
	case hi < 1:
		fe.Add(f+".maxNodes", "must be at least 1, got %d", hi)
	case lo > hi:
		fe.Add(f+".minNodes", "must not exceed maxNodes (%d), got %d", hi, lo)
	case count < lo || count > hi:
		fe.Add("spec.nodeCount", "must be between minNodes (%d) and maxNodes (%d) when autoscaling is enabled, got %d", lo, hi, count)
	}
	if lo == 0 && !scaleToZero(pt, s.Mode) {
		fe.Add(f+".minNodes", "must be at least 1: %s", noZeroReason(pt))
	}
	if count == 0 && lo == 0 && !scaleToZero(pt, s.Mode) {
		fe.Add("spec.nodeCount", "must be at least 1: %s", noZeroReason(pt))
	}
}

func noZeroReason(pt PlatformType) string {
	if pt == PlatformCivo {
		return "Civo pools cannot scale to zero"
	}
	return "system pools cannot scale to zero"
}

func validateMetadata(fe *FieldErrors, s *NodePoolSpec) {
	labels(fe, "spec.labels", s.Labels)
	var blockLabels map[string]string
	var blockField string
	switch p := s.Platform; {
	case p.GCP != nil:
		blockLabels, blockField = p.GCP.Labels, "spec.platform.gcp.labels"
	case p.OCI != nil:
		blockLabels, blockField = p.OCI.Labels, "spec.platform.oci.labels"
	case p.Civo != nil:
		blockLabels, blockField = p.Civo.Labels, "spec.platform.civo.labels"
	}
	labels(fe, blockField, blockLabels)
	for _, k := range sortedKeys(blockLabels) {
		if v, ok := s.Labels[k]; ok && v != blockLabels[k] {
			fe.Add(blockField+"."+k, "conflicts with spec.labels.%s (%q vs %q)", k, blockLabels[k], v)
		}
	}

	taints(fe, "spec.taints", s.Taints)
	var blockTaints []Taint
	switch p := s.Platform; {
	case p.GCP != nil:
		blockTaints, blockField = p.GCP.Taints, "spec.platform.gcp.taints"
	case p.Civo != nil:
		blockTaints, blockField = p.Civo.Taints, "spec.platform.civo.taints"
	}
	taints(fe, blockField, blockTaints)
	type keyEffect struct{ key, effect string }
	neutral := map[keyEffect]string{}
	for _, t := range s.Taints {
		neutral[keyEffect{t.Key, t.Effect}] = t.Value
	}
	for i, t := range blockTaints {
		if v, ok := neutral[keyEffect{t.Key, t.Effect}]; ok && v != t.Value {
			fe.Add(fmt.Sprintf("%s[%d]", blockField, i), "conflicts with spec.taints: %s:%s has value %q there and %q here", t.Key, t.Effect, v, t.Value)
		}
	}
	if n := len(s.AllTaints()); n > MaxTaints {
		fe.Add("spec.taints", "at most %d taints in all, got %d", MaxTaints, n)
	}
}

func labels(fe *FieldErrors, field string, m map[string]string) {
	for _, k := range sortedKeys(m) {
		f := field + "." + k
		if errs := content.IsLabelKey(k); len(errs) > 0 {
			fe.Add(f, "%q is not a valid label key: %s", k, strings.Join(errs, "; "))
			continue
		}
		if d := reservedDomain(k); d != "" {
			fe.Add(f, "label domain %q is reserved for kpool or the provider", d)
		}
		if errs := content.IsLabelValue(m[k]); len(errs) > 0 {
			fe.Add(f, "%q is not a valid label value: %s", m[k], strings.Join(errs, "; "))
		}
	}
}

// reservedDomain returns the reserved domain that a label key falls in, or "".
func reservedDomain(key string) string {
	prefix, _, ok := strings.Cut(key, "/")
	if !ok {
		return ""
	}
	for _, a := range labelDomainAllowed {
		if prefix == a || strings.HasSuffix(prefix, "."+a) {
			return ""
		}
	}
	for _, d := range reservedLabelDomains {
		if prefix == d || strings.HasSuffix(prefix, "."+d) {
			return d
		}
	}
	return ""
}

func taints(fe *FieldErrors, field string, ts []Taint) {
	type keyEffect struct{ key, effect string }
	seen := map[keyEffect]bool{}
	for i, t := range ts {
		f := fmt.Sprintf("%s[%d]", field, i)
		if t.Key == "" {
			fe.Add(f+".key", "required")
		} else if errs := content.IsLabelKey(t.Key); len(errs) > 0 {
			fe.Add(f+".key", "%q is not a valid taint key: %s", t.Key, strings.Join(errs, "; "))
		}
		if errs := content.IsLabelValue(t.Value); len(errs) > 0 {
			fe.Add(f+".value", "%q is not a valid taint value: %s", t.Value, strings.Join(errs, "; "))
		}
		switch t.Effect {
		case EffectNoSchedule, EffectPreferNoSchedule, EffectNoExecute:
		case "":
			fe.Add(f+".effect", "required: NoSchedule, PreferNoSchedule or NoExecute")
		default:
			fe.Add(f+".effect", "must be NoSchedule, PreferNoSchedule or NoExecute, got %q", t.Effect)
		}
		ke := keyEffect{t.Key, t.Effect}
		if seen[ke] {
			fe.Add(f, "duplicate taint %s:%s", t.Key, t.Effect)
		}
		seen[ke] = true
	}
}

func validateTags(fe *FieldErrors, tags map[string]string) {
	if len(tags) > MaxTags {
		fe.Add("spec.tags", "at most %d tags, got %d", MaxTags, len(tags))
	}
	for _, k := range sortedKeys(tags) {
		f := "spec.tags." + k
		switch {
		case k == "" || len(k) > 128:
			fe.Add(f, "tag keys must have 1-128 characters")
		case strings.TrimSpace(k) != k:
			fe.Add(f, "tag keys must not start or end with white space")
		}
		if len(tags[k]) > 256 {
			fe.Add(f, "tag values must have at most 256 characters, got %d", len(tags[k]))
		}
	}
}

// ValidateControllerStatus checks a controller's report (not its generation,
// which needs the pool).
func ValidateControllerStatus(cs *ControllerStatus) error {
	var fe FieldErrors
	if cs.ControllerName == "" {
		fe.Add("controller_name", "required")
	} else if !controllerName.MatchString(cs.ControllerName) {
		fe.Add("controller_name", "%q is not valid: use lowercase letters, digits, '-' and '.' (such as gcp-nodepool-controller)", cs.ControllerName)
	}
	if cs.ObservedGeneration < 0 {
		fe.Add("observed_generation", "must not be negative, got %d", cs.ObservedGeneration)
	}
	if len(cs.Conditions) > 32 {
		fe.Add("conditions", "at most 32 conditions, got %d", len(cs.Conditions))
	}
	seen := map[string]bool{}
	for i, c := range cs.Conditions {
		f := fmt.Sprintf("conditions[%d]", i)
		switch {
		case c.Type == "":
			fe.Add(f+".type", "required")
		case !conditionType.MatchString(c.Type):
			fe.Add(f+".type", "%q is not a condition type such as Ready", c.Type)
		case seen[c.Type]:
			fe.Add(f+".type", "duplicate condition %q", c.Type)
		}
		seen[c.Type] = true
		if c.Status != ConditionTrue && c.Status != ConditionFalse && c.Status != ConditionUnknown {
			fe.Add(f+".status", "must be True, False or Unknown, got %q", c.Status)
		}
		if c.Reason != "" && (len(c.Reason) > 1024 || !conditionWhy.MatchString(c.Reason)) {
			fe.Add(f+".reason", "%q is not a reason such as NodesReady (CamelCase, letters, digits and '_')", c.Reason)
		}
		if len(c.Message) > 32768 {
			fe.Add(f+".message", "at most 32768 bytes")
		}
	}
	if len(cs.Metadata) > 64<<10 {
		fe.Add("metadata", "at most 64 KiB")
	} else if len(cs.Metadata) > 0 && (cs.Metadata[0] != '{') {
		fe.Add("metadata", "must be an object")
	}
	return fe.Err()
}

// ValidateLabels checks node labels as a spec's labels are checked:
// Kubernetes syntax, and no key in a domain kpool or a provider owns.
func ValidateLabels(fe *FieldErrors, field string, m map[string]string) { labels(fe, field, m) }

package kpool

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Limits that validation enforces.
const (
	MaxNodes  = 1000
	MaxTaints = 50
	// MaxTags is the clouds' 50 tags a resource (AKS, EKS; GKE and OCI
	// take 64) less the two of kpool's owner's mark (provider.TagKeys).
	MaxTags = 48
	// MaxLabels and MaxLabelBytes (keys and values together) cap a pool's
	// node labels, in spec.labels and in all with a platform block's: every
	// read of the pool carries them.
	MaxLabels       = 64
	MaxLabelBytes   = 16 << 10
	MaxAccelerators = 16
	MaxUserData     = 16 << 10
	maxDelay        = 24 * time.Hour
	// MinMinor and MaxMinor bound a Kubernetes version's minor (1.MINOR):
	// older ones no cloud still runs, newer ones do not exist yet.
	MinMinor = 24
	MaxMinor = 40
)

var (
	machineTypeRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._\-]{0,127}$`)
	// versionRE is MAJOR.MINOR[.PATCH], and after a patch a provider's
	// build suffix (GKE's 1.30.5-gke.1014001, an EKS AMI's 1.31.2-20250101),
	// which the provider's profile checks.
	versionRE      = regexp.MustCompile(`^v?(\d{1,9})\.(\d{1,9})(\.\d{1,9}(-[0-9A-Za-z][0-9A-Za-z.\-]{0,62})?)?$`)
	zoneRE         = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9:._\-]{0,127}$`)
	controllerName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)
	conditionType  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,62}$`)
	credentialRE   = regexp.MustCompile(`^[a-z0-9]([-a-z0-9_.]{0,61}[a-z0-9])?$`)
	conditionWhy   = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)
)

// LabelDomains are the label key domains kpool and Kubernetes own; users may
// not set labels there (nor in the providers' own domains, which each
// provider's profile lists).
var LabelDomains = []string{"kompox.dev", "kubernetes.io", "k8s.io"}

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

// NilUUID is the UUID of all zeros: a placeholder, never an object's id.
const NilUUID = "00000000-0000-0000-0000-000000000000"

// ValidateID checks a client-chosen object id: a UUID in canonical form,
// not the nil UUID.
func ValidateID(fe *FieldErrors, field, id string) {
	switch {
	case id == "":
	case !IsUUID(id):
		fe.Add(field, "%q is not a UUID in canonical form (such as 550e8400-e29b-41d4-a716-446655440000)", id)
	case id == NilUUID:
		fe.Add(field, "the nil UUID is not an id: omit the id for one to be chosen, or give another UUID")
	}
}

// RefID reads an id that refers to an object (in a path, a query or a
// body's cluster_id): a UUID of 36 characters in either case, returned in
// the lower case ids are stored in, so that 01A2…CE finds 01a2…ce. A value
// that is not one, or is the nil UUID, is a VALIDATION_ERROR naming field.
func RefID(field, v string) (string, error) {
	id := strings.ToLower(v)
	switch {
	case v == "":
		return "", Invalid(field, "required")
	case !IsUUID(id):
		return "", Invalid(field, "%q is not an id: want a UUID such as 550e8400-e29b-41d4-a716-446655440000", v)
	case id == NilUUID:
		return "", Invalid(field, "the nil UUID is not the id of any object")
	}
	return id, nil
}

// ValidateVersion checks a Kubernetes version: MAJOR.MINOR[.PATCH] (a
// leading v allowed) with major 1 and a minor in MinMinor..MaxMinor, so
// that 9.99, 1.2 and banana are refused here and not by the cloud minutes
// later. Providers may add their own suffixes (GKE's -gke.N) and check
// them in their profiles.
func ValidateVersion(fe *FieldErrors, field, v string) {
	if v == "" {
		return
	}
	m := versionRE.FindStringSubmatch(v)
	if m == nil {
		fe.Add(field, "%q is not a Kubernetes version: want MAJOR.MINOR or MAJOR.MINOR.PATCH, such as 1.30 or 1.30.4 (with a provider's build after the patch: 1.30.5-gke.1014001)", v)
		return
	}
	minor, err := strconv.Atoi(m[2])
	switch {
	case m[1] != "1":
		fe.Add(field, "%q is not a Kubernetes version: the major version is 1 (such as 1.30)", v)
	case err != nil || minor < MinMinor || minor > MaxMinor:
		fe.Add(field, "%q is not a Kubernetes version kpool knows: the minor version must be between %d and %d (1.%d to 1.%d)", v, MinMinor, MaxMinor, MinMinor, MaxMinor)
	}
}

// ValidateCluster checks a whole cluster: its name and spec.
func ValidateCluster(ps Platforms, c *Cluster) error {
	var fe FieldErrors
	ValidateName(&fe, "name", c.Name)
	ValidateID(&fe, "id", c.ID)
	if c.Team != "" {
		if _, err := ParseTeam(c.Team); err != nil {
			fe.Add("team", "%v", err)
		}
	}
	validateClusterSpec(&fe, ps, &c.Spec)
	return fe.Err()
}

func validateClusterSpec(fe *FieldErrors, ps Platforms, s *ClusterSpec) {
	p := &s.Platform
	const base = "spec.platform"
	pl, known := ps.Platform(p.Type)
	switch {
	case p.Type == "":
		fe.Add(base+".type", "required: one of %s", platformList(ps))
	case !known:
		fe.Add(base+".type", "unknown platform %q: use one of %s", p.Type, platformList(ps))
	default:
		blocks := p.Blocks()
		for _, b := range blocks {
			if b != string(p.Type) {
				fe.Add(base+"."+b, "not allowed: the platform type is %q", p.Type)
			}
		}
		switch {
		case slices.Contains(blocks, string(p.Type)):
			pl.ValidateCluster(fe, s)
		case pl.HasNodePools():
			fe.Add(base+"."+string(p.Type), "required for platform type %q", p.Type)
		}
	}
	ValidatePattern(fe, "spec.credential", s.Credential, credentialRE, false, "the name of a credential the operator configured: 1-63 lowercase letters, digits, '-', '_' and '.'")
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

func platformList(ps Platforms) string {
	types := ps.Types()
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

// ValidatePattern checks a string field against re, with want saying what
// a valid value looks like; "" is an error only when required.
func ValidatePattern(fe *FieldErrors, field, v string, re *regexp.Regexp, required bool, want string) {
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

// ValidateMachineType checks a machine type's syntax (every provider's names
// fit it); example is one of the provider's.
func ValidateMachineType(fe *FieldErrors, field, v, example string) {
	ValidatePattern(fe, field, v, machineTypeRE, true, "a machine type name such as "+example)
}

// ValidateDiskType checks an optional disk type's syntax; want says what
// the provider calls its types.
func ValidateDiskType(fe *FieldErrors, field, v, want string) {
	ValidatePattern(fe, field, v, machineTypeRE, false, want)
}

// ValidateRange checks an optional number: 0 (unset) or lo..hi.
func ValidateRange(fe *FieldErrors, field string, v, lo, hi int, unit string) {
	if v != 0 && (v < lo || v > hi) {
		fe.Add(field, "must be between %d and %d %s, got %d", lo, hi, unit, v)
	}
}

// SortedKeys returns a map's keys in order, so that errors come out in a
// stable order.
func SortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// DefaultNodePoolSpec fills in what a pool spec may omit: the platform type
// (the cluster's), the mode (user) and the node count (the autoscaler's
// minimum, or 1); zones "<region>-N" become "N". region is the cluster's.
func DefaultNodePoolSpec(s *NodePoolSpec, c *Cluster, region string) {
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
		s.Zones[i] = NormalizeZone(z, region)
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
func ValidateNodePool(ps Platforms, p *NodePool, c *Cluster) error {
	var fe FieldErrors
	ValidateName(&fe, "name", p.Name)
	ValidateID(&fe, "id", p.ID)
	validateNodePoolSpec(&fe, ps, &p.Spec, c)
	return fe.Err()
}

func validateNodePoolSpec(fe *FieldErrors, ps Platforms, s *NodePoolSpec, c *Cluster) {
	pt := c.Spec.Platform.Type
	if s.Platform.Type != "" && s.Platform.Type != pt {
		fe.Add("spec.platform.type", "must be %q, the platform of cluster %s (or omitted)", pt, c.Name)
	}
	for _, b := range s.Platform.Blocks() {
		if b != string(pt) {
			fe.Add("spec.platform."+b, "not allowed: the cluster's platform is %q", pt)
		}
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
	ValidateVersion(fe, "spec.kubernetesVersion", s.KubernetesVersion)
	if s.PlacementPool != "" {
		// The value of kompox.dev/node-pool on the nodes.
		ValidateName(fe, "spec.placementPool", s.PlacementPool)
	}
	validateCounts(fe, s)
	pl, known := ps.Platform(pt)
	region := ""
	if known {
		region = pl.Region(&c.Spec)
	}
	logicalZones(fe, s.Zones, region)
	ValidateLabels(fe, "spec.labels", s.Labels, ps.LabelDomains())
	ValidateTaints(fe, "spec.taints", s.Taints)
	validateTags(fe, s.Tags)
	if known {
		pl.ValidatePool(fe, s, c)
	}
}

// ValidateZoneNames checks a platform block's own list of zones: names,
// none twice.
func ValidateZoneNames(fe *FieldErrors, field string, zs []string) {
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

func logicalZones(fe *FieldErrors, zs []string, region string) {
	seen := map[string]bool{}
	for i, z := range zs {
		f := fmt.Sprintf("spec.zones[%d]", i)
		switch {
		case !IsLogicalZone(z):
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

func validateCounts(fe *FieldErrors, s *NodePoolSpec) {
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
}

// ValidateBlockMetadata checks the labels and taints a platform block adds
// (at their JSON paths): their syntax, that none contradicts spec.labels or
// spec.taints, and the number of taints in all.
func ValidateBlockMetadata(fe *FieldErrors, s *NodePoolSpec, domains []string, labels map[string]string, labelsPath string, taints []Taint, taintsPath string) {
	if labelsPath != "" {
		ValidateLabels(fe, labelsPath, labels, domains)
		for _, k := range SortedKeys(labels) {
			if v, ok := s.Labels[k]; ok && v != labels[k] {
				fe.Add(labelsPath+"."+k, "conflicts with spec.labels.%s (%q vs %q)", k, labels[k], v)
			}
		}
	}
	if labelsPath != "" && len(labels) > 0 {
		labelsFit(fe, "spec.labels", " in all (with "+labelsPath+")", s.Labels, labels)
	}
	all := len(s.Taints)
	if taintsPath != "" {
		ValidateTaints(fe, taintsPath, taints)
		type keyEffect struct{ key, effect string }
		neutral := map[keyEffect]string{}
		seen := map[Taint]bool{}
		for _, t := range s.Taints {
			neutral[keyEffect{t.Key, t.Effect}] = t.Value
			seen[t] = true
		}
		for i, t := range taints {
			if v, ok := neutral[keyEffect{t.Key, t.Effect}]; ok && v != t.Value {
				fe.Add(fmt.Sprintf("%s[%d]", taintsPath, i), "conflicts with spec.taints: %s:%s has value %q there and %q here", t.Key, t.Effect, v, t.Value)
			}
			if !seen[t] {
				seen[t] = true
				all++
			}
		}
	}
	if all > MaxTaints {
		fe.Add("spec.taints", "at most %d taints in all, got %d", MaxTaints, all)
	}
}

// ValidateLabels checks node labels: Kubernetes syntax, and no key in one of
// domains (those kpool, Kubernetes or a provider own).
func ValidateLabels(fe *FieldErrors, field string, m map[string]string, domains []string) {
	if !labelsFit(fe, field, "", m, nil) {
		return // each label's own faults would only make a huge answer
	}
	for _, k := range SortedKeys(m) {
		f := field + "." + k
		if errs := content.IsLabelKey(k); len(errs) > 0 {
			fe.Add(f, "%q is not a valid label key: %s", k, strings.Join(errs, "; "))
			continue
		}
		if d := ReservedDomain(k, domains); d != "" {
			fe.Add(f, "label domain %q is reserved for kpool or the provider", d)
		}
		if errs := content.IsLabelValue(m[k]); len(errs) > 0 {
			fe.Add(f, "%q is not a valid label value: %s", m[k], strings.Join(errs, "; "))
		}
	}
}

// labelsFit checks that the labels of a and b together (a key in both
// counts once) stay within MaxLabels and MaxLabelBytes, reporting at field.
func labelsFit(fe *FieldErrors, field, inAll string, a, b map[string]string) bool {
	n, size := len(a), 0
	for k, v := range a {
		size += len(k) + len(v)
	}
	for k, v := range b {
		if w, ok := a[k]; ok {
			size += len(v) - len(w)
			continue
		}
		n++
		size += len(k) + len(v)
	}
	switch {
	case n > MaxLabels:
		fe.Add(field, "at most %d labels%s, got %d", MaxLabels, inAll, n)
	case size > MaxLabelBytes:
		fe.Add(field, "at most %d bytes of label keys and values%s, got %d", MaxLabelBytes, inAll, size)
	default:
		return true
	}
	return false
}

// ReservedDomain returns the domain of domains that a label key falls in,
// or "".
func ReservedDomain(key string, domains []string) string {
	prefix, _, ok := strings.Cut(key, "/")
	if !ok {
		return ""
	}
	for _, a := range labelDomainAllowed {
		if prefix == a || strings.HasSuffix(prefix, "."+a) {
			return ""
		}
	}
	for _, d := range domains {
		if prefix == d || strings.HasSuffix(prefix, "."+d) {
			return d
		}
	}
	return ""
}

// ValidateTaints checks node taints: key, value and effect, none twice,
// and no key in a domain Kubernetes or kpool own (LabelDomains): the node
// lifecycle controller sets node.kubernetes.io/not-ready and the like
// itself, and a pool's taint there would fight it or fake its state.
func ValidateTaints(fe *FieldErrors, field string, ts []Taint) {
	type keyEffect struct{ key, effect string }
	seen := map[keyEffect]bool{}
	for i, t := range ts {
		f := fmt.Sprintf("%s[%d]", field, i)
		if t.Key == "" {
			fe.Add(f+".key", "required")
		} else if errs := content.IsLabelKey(t.Key); len(errs) > 0 {
			fe.Add(f+".key", "%q is not a valid taint key: %s", t.Key, strings.Join(errs, "; "))
		} else if d := ReservedDomain(t.Key, LabelDomains); d != "" {
			fe.Add(f+".key", "%q is in taint domain %q, which Kubernetes or kpool reserve (node.kubernetes.io/*, node-role.kubernetes.io/*…): use a key of your own, such as example.com/dedicated", t.Key, d)
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
	for _, k := range SortedKeys(tags) {
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

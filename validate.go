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
	m := versionRE().FindStringSubmatch(v)
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

// IsVersion reports whether v is a Kubernetes version kpool's
// ValidateVersion takes (not an alias such as GKE's "latest").
func IsVersion(v string) bool {
	var fe FieldErrors
	ValidateVersion(&fe, "v", v)
	return v != "" && fe.Err() == nil
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
	if s.NodeLabels != "" && s.NodeLabels != NodeLabelsGuide {
		fe.Add("spec.nodeLabels", "unknown value %q: \"\" (the placement labels only) or %q (also the guide's %s=<pool name>)", s.NodeLabels, NodeLabelsGuide, GuidePoolLabel)
	}
	ValidatePattern(fe, "spec.credential", s.Credential, credentialRE(), false, "the name of a credential the operator configured: 1-63 lowercase letters, digits, '-', '_' and '.'")
	ValidatePattern(fe, "spec.kubeconfig", s.Kubeconfig, credentialRE(), false, "the name of a kubeconfig credential the operator configured: 1-63 lowercase letters, digits, '-', '_' and '.'")
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
	ValidatePattern(fe, field, v, machineTypeRE(), true, "a machine type name such as "+example)
}

// ValidateDiskType checks an optional disk type's syntax; want says what
// the provider calls its types.
func ValidateDiskType(fe *FieldErrors, field, v, want string) {
	ValidatePattern(fe, field, v, machineTypeRE(), false, want)
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
	validateStrategy(fe, s.UpdateStrategy)
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
		case !zoneRE().MatchString(z):
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

// IsControllerName reports whether n is a controller name: lowercase
// letters, digits, '-' and '.', as a DNS subdomain.
func IsControllerName(n string) bool { return controllerName().MatchString(n) }

package provider

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kpool/kpool"
)

// Difference is a field where a pool at the provider differs from what
// kpool asked for.
type Difference struct {
	Field Field
	Want  string
	Got   string
	// Path is the spec field's JSON path (spec.platform.azure.vmSize),
	// for messages.
	Path string
}

func (d Difference) String() string {
	return fmt.Sprintf("%s: want %s, have %s", d.Field, d.Want, d.Got)
}

// Compare lists the fields kpool owns where observed differs from want, on
// the provider of profile p. Fields want leaves unset (machine type,
// zones, disk size, disk type, version, tags, provider-only settings) are
// not compared: a pool in no zone is where the provider puts it (GKE: the
// cluster's default locations), nor the count of an autoscaled pool (the autoscaler owns it),
// nor labels and taints in the domains of kpool, Kubernetes or the
// provider, nor a taint the provider adds itself (NodeTaints: GKE's GPU
// taint), nor a setting the provider does not report; disk types are
// compared as the provider reports them, versions by the parts want gives
// (1.31 is any 1.31.x) and numbers as numbers.
func Compare(p Profile, want PoolSpec, got *Pool) []Difference {
	domains := append(slices.Clone(kpool.LabelDomains), p.LabelDomains()...)
	owned := func(key string) bool { return kpool.ReservedDomain(key, domains) != "" }
	c := comparison{paths: newPaths(p)}
	if !want.Autoscaling {
		c.add(FieldCount, 0, want.Count, got.Count)
	}
	c.add(FieldAutoscaling, 0, bounds(want), bounds(got.PoolSpec))
	if want.MachineType != "" {
		c.add(FieldMachineType, 0, want.MachineType, got.MachineType)
	}
	if len(want.Zones) > 0 {
		c.add(FieldZones, 0, strings.Join(want.Zones, ","), strings.Join(got.Zones, ","))
	}
	c.add(FieldLabels, 0, userLabels(want.Labels, owned), userLabels(got.Labels, owned))
	c.add(FieldTaints, 0, userTaints(want.Taints, owned), userTaints(without(got.Taints, added(p, want)), owned))
	c.add(FieldSpot, 0, want.Spot, got.Spot)
	c.add(FieldMode, 0, modeOf(want.Mode), modeOf(got.Mode))
	if want.DiskSizeGB != 0 {
		c.add(FieldDisk, 0, want.DiskSizeGB, got.DiskSizeGB)
	}
	if want.DiskType != "" {
		c.add(FieldDisk, 1, p.DiskType(want.DiskType), p.DiskType(got.DiskType))
	}
	if want.Version != "" && !VersionMatches(got.Version, want.Version) {
		c.add(FieldVersion, 0, want.Version, got.Version)
	}
	if len(want.Tags) > 0 {
		c.add(FieldTags, 0, sortedPairs(want.Tags), sortedPairs(got.Tags))
	}
	c.add(FieldAccelerators, 0, accelerators(want.Accelerators), accelerators(got.Accelerators))
	if w, g := want.Upgrade, got.Upgrade; w != nil && g != nil {
		// What the spec sets and the cloud reports back.
		c.addSet(FieldUpgrade, w.MaxSurge, g.MaxSurge)
		c.addSet(FieldUpgrade, w.MaxUnavailable, g.MaxUnavailable)
		c.addSet(FieldUpgrade, durationOrNone(w.DrainTimeout), durationOrNone(g.DrainTimeout))
		c.addSet(FieldUpgrade, durationOrNone(w.Soak), durationOrNone(g.Soak))
	}
	for _, k := range slices.Sorted(maps.Keys(want.Settings)) {
		have, reported := got.Settings[k]
		if w := want.Settings[k]; w != "" && reported && !SameSetting(w, have) {
			c.out = append(c.out, Difference{FieldImage, w, have, c.paths.setting(k)})
		}
	}
	return c.out
}

// comparison gathers the differences Compare finds.
type comparison struct {
	paths paths
	out   []Difference
}

// add notes the nth field of kind f (a block's disk size is its first
// disk field, its disk type the second) when w and g differ.
func (c *comparison) add(f Field, nth int, w, g any) {
	ws, gs := fmt.Sprint(w), fmt.Sprint(g)
	if ws != gs {
		c.out = append(c.out, Difference{f, ws, gs, c.paths.of(f, nth)})
	}
}

// addSet compares a setting the spec sets ("" unset) with what the cloud
// reports ("" not reported).
func (c *comparison) addSet(f Field, w, g string) {
	if w != "" && g != "" && w != g {
		c.out = append(c.out, Difference{f, w, g, c.paths.of(f, 0)})
	}
}

// durationOrNone is a duration as addSet compares it ("": unset).
func durationOrNone(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// VersionMatches reports whether a pool's version, as the provider
// reports it (v1.31.1, 1.30.5-gke.1014001), is the one asked for: every
// part that both give agrees, so 1.31 is any 1.31.x, and 1.31.2 is a pool
// the provider reports only as 1.31.
func VersionMatches(got, want string) bool {
	if got == want {
		return true
	}
	g, w := versionParts(got), versionParts(want)
	if len(g) == 0 || len(w) == 0 {
		return false
	}
	return slices.Equal(g[:min(len(g), len(w))], w[:min(len(g), len(w))])
}

// versionParts are a version's numbers: v1.31.2-20250101 is 1, 31, 2.
func versionParts(v string) []string {
	v = strings.TrimPrefix(v, "v")
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	if v == "" {
		return nil
	}
	return strings.Split(v, ".")
}

// SameSetting compares two provider-only settings, numbers as numbers
// ("2" and "2.0" alike).
func SameSetting(a, b string) bool {
	if a == b {
		return true
	}
	x, err1 := strconv.ParseFloat(a, 32)
	y, err2 := strconv.ParseFloat(b, 32)
	return err1 == nil && err2 == nil && float32(x) == float32(y)
}

func modeOf(m string) string {
	if m == "" {
		return kpool.ModeUser
	}
	return m
}

func bounds(s PoolSpec) string {
	if !s.Autoscaling {
		return "off"
	}
	return fmt.Sprintf("%d-%d", s.MinCount, s.MaxCount)
}

func accelerators(as []kpool.Accelerator) string {
	out := make([]string, 0, len(as))
	for _, a := range as {
		out = append(out, fmt.Sprintf("%s=%d", a.Type, a.Count))
	}
	sort.Strings(out)
	return "[" + strings.Join(out, " ") + "]"
}

func userLabels(m map[string]string, owned func(string) bool) string {
	u := map[string]string{}
	for k, v := range m {
		if !owned(k) {
			u[k] = v
		}
	}
	return sortedPairs(u)
}

// added are the taints the provider puts on a pool's nodes beyond those
// asked for: they are the provider's, and drift never undoes them.
func added(p Profile, want PoolSpec) []kpool.Taint {
	var out []kpool.Taint
	for _, t := range p.NodeTaints(want) {
		if !slices.Contains(want.Taints, t) {
			out = append(out, t)
		}
	}
	return out
}

// without is ts less the taints in drop.
func without(ts, drop []kpool.Taint) []kpool.Taint {
	if len(drop) == 0 {
		return ts
	}
	var out []kpool.Taint
	for _, t := range ts {
		if !slices.Contains(drop, t) {
			out = append(out, t)
		}
	}
	return out
}

func userTaints(ts []kpool.Taint, owned func(string) bool) string {
	var out []string
	for _, t := range ts {
		if !owned(t.Key) {
			out = append(out, t.Key+"="+t.Value+":"+t.Effect)
		}
	}
	sort.Strings(out)
	return "[" + strings.Join(out, " ") + "]"
}

func sortedPairs(m map[string]string) string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return "{" + strings.Join(out, " ") + "}"
}

// paths are where a profile's pool fields sit in a spec: the neutral
// fields' own, and the block's as a block of zero values lists them.
type paths struct {
	block []BlockField
	t     kpool.PlatformType
}

func newPaths(p Profile) paths {
	var s kpool.NodePoolSpec
	s.Platform.Type = p.Type()
	p.SetBlock(&s, Block{})
	return paths{block: p.Block(nil, &s).Fields, t: p.Type()}
}

// neutralPaths are the fields every spec has outside its platform block.
var neutralPaths = map[Field]string{
	FieldCount: "spec.nodeCount", FieldAutoscaling: "spec.autoscaling", FieldZones: "spec.zones", FieldLabels: "spec.labels",
	FieldTaints: "spec.taints", FieldVersion: "spec.kubernetesVersion", FieldTags: "spec.tags", FieldMode: "spec.mode",
	FieldUpgrade: "spec.updateStrategy",
}

// of is the path of the nth block field of kind f.
func (ps paths) of(f Field, nth int) string {
	if p, ok := neutralPaths[f]; ok {
		return p
	}
	var last string
	for _, b := range ps.block {
		if b.Field != f {
			continue
		}
		if last = b.Path; nth == 0 {
			return b.Path
		}
		nth--
	}
	if last != "" {
		return last
	}
	return "spec.platform." + string(ps.t)
}

// setting is the path of a provider-only setting, by its name in the
// block.
func (ps paths) setting(name string) string {
	for _, b := range ps.block {
		if b.Field == FieldImage && strings.HasSuffix(b.Path, "."+name) {
			return b.Path
		}
	}
	return ps.of(FieldImage, 0)
}

package provider

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kpool/kpool"
)

// FactsMaxAge is how old a cluster's facts may be and still refuse a
// pool: older ones (the controllers have not reached the provider since)
// only say the checks were skipped.
const FactsMaxAge = 30 * time.Minute

// Preflight checks a pool's spec against what its cluster offers (f, as
// the controllers learnt it from the provider): what the provider would
// otherwise refuse later. Each finding is a field error naming the fact
// it came from; on an update (prev is the spec before it) only what the
// update changes is checked, so that a pool whose machine type was since
// withdrawn still takes a change of its labels. Facts that are missing,
// stale, partial, or of a cluster the controllers cannot reach now refuse
// nothing: the warnings say which checks were skipped.
func Preflight(p Profile, c *kpool.Cluster, s, prev *kpool.NodePoolSpec, f *kpool.ClusterFacts, now time.Time) ([]string, error) {
	switch {
	case !p.Capabilities().NodePools:
		return nil, nil
	case f == nil:
		return []string{fmt.Sprintf("preflight skipped: kpool has not learnt yet what cluster %s offers (its controllers learn it once they reach %s)",
			c.Name, p.Capabilities().Name)}, nil
	case f.Age(now) > FactsMaxAge:
		return []string{fmt.Sprintf("preflight skipped: the facts of cluster %s are %s old (kpool has not reached %s since)",
			c.Name, age(f.Age(now)), p.Capabilities().Name)}, nil
	case c.Status.Unreachable() != "":
		// The provider cannot confirm them now: they may be what changed.
		return []string{fmt.Sprintf("preflight skipped: cluster %s is not reachable (%s); its facts are %s old",
			c.Name, c.Status.Unreachable(), age(f.Age(now)))}, nil
	}
	var warnings []string
	for _, why := range f.Partial {
		warnings = append(warnings, "preflight partial: "+why)
	}
	ck := &preflight{p: p, c: c, s: s, prev: prev, f: f, now: now, b: p.Block(c, s)}
	if prev != nil {
		ck.was = p.Block(c, prev)
	}
	ck.zones()
	ck.machineType()
	ck.count()
	ck.version()
	return warnings, ck.fe.Err()
}

// Preflight is Preflight on the cluster's profile (kpool.Platforms).
// Without a driver here, nothing learns a cluster's facts: their absence
// is no news and goes unsaid.
func (r *Registry) Preflight(c *kpool.Cluster, s, prev *kpool.NodePoolSpec, f *kpool.ClusterFacts, now time.Time) ([]string, error) {
	if f == nil && !r.HasDriver(c.Spec.Platform.Type) {
		return nil, nil
	}
	return Preflight(r.Profile(c.Spec.Platform.Type), c, s, prev, f, now)
}

// preflight is one check of a spec against facts.
type preflight struct {
	p       Profile
	c       *kpool.Cluster
	s, prev *kpool.NodePoolSpec
	f       *kpool.ClusterFacts
	now     time.Time
	b, was  Block
	fe      kpool.FieldErrors
	placed  []string // the logical zones the pool goes to (its own, or the cluster's default)
}

// learnt says where a fact came from, for messages.
func (ck *preflight) learnt() string {
	return fmt.Sprintf("as %s told kpool %s ago", ck.p.Capabilities().Name, age(ck.f.Age(ck.now)))
}

func (ck *preflight) where() string {
	if r := ck.p.Region(&ck.c.Spec); r != "" {
		return r
	}
	return "cluster " + ck.c.Name
}

// zones checks the pool's zones are the cluster's, and notes where the
// pool goes.
func (ck *preflight) zones() {
	zones, _, err := PoolZones(ck.p, ck.c, ck.s)
	if err != nil {
		return // the spec's own validation reports it
	}
	ck.placed = zones
	if len(zones) == 0 {
		ck.placed = ck.f.DefaultZones
	}
	if len(ck.f.Zones) == 0 || (ck.prev != nil && slices.Equal(ck.s.Zones, ck.prev.Zones)) {
		return
	}
	for i, z := range ck.s.Zones {
		if !slices.Contains(ck.f.Zones, z) {
			ck.fe.Add(fmt.Sprintf("spec.zones[%d]", i), "cluster %s has no zone %s (its zones are %s, %s)", ck.c.Name, z, strings.Join(ck.f.Zones, ", "), ck.learnt())
		}
	}
}

// machineType checks the machine type is offered: in the region, in each
// of the pool's zones, and as spot when the pool asks for spot.
func (ck *preflight) machineType() {
	name, path := ck.b.MachineType, ck.b.Path(FieldMachineType)
	if name == "" || len(ck.f.MachineTypes) == 0 || path == "" {
		return
	}
	if ck.prev != nil && strings.EqualFold(name, ck.was.MachineType) && slices.Equal(ck.s.Zones, ck.prev.Zones) && ck.b.Spot == ck.was.Spot {
		return
	}
	mt, ok := ck.f.MachineType(name)
	if !ok {
		msg := fmt.Sprintf("%s is not offered in %s (%s)", name, ck.where(), ck.learnt())
		if near := Nearest(name, ck.f.MachineTypes, 3); len(near) > 0 {
			msg += "; the nearest offered: " + strings.Join(near, ", ")
		}
		ck.fe.Add(path, "%s", msg)
		return
	}
	var missing []string
	for _, z := range ck.placed {
		if !mt.OfferedIn(z) {
			missing = append(missing, z)
		}
	}
	if len(missing) > 0 {
		ck.fe.Add(path, "%s is not offered in %s zone %s (it is in zones %s, %s)", mt.Name, ck.where(), strings.Join(missing, ", "),
			strings.Join(mt.Zones, ", "), ck.learnt())
	}
	if ck.b.Spot && mt.NoSpot {
		spot := ck.b.Path(FieldSpot)
		if spot == "" {
			spot = path
		}
		ck.fe.Add(spot, "%s is not offered as spot capacity in %s (%s)", mt.Name, ck.where(), ck.learnt())
	}
}

// count checks that a provider that counts nodes per zone can divide the
// pool's count over the zones it goes to, the cluster's default ones
// included.
func (ck *preflight) count() {
	n := len(ck.placed)
	if !ck.p.Capabilities().CountPerZone || ck.s.Autoscaling.On() || n < 2 || ck.s.Count()%n == 0 {
		return
	}
	where := "zones " + strings.Join(ck.placed, ", ")
	if len(ck.s.Zones) == 0 {
		where = fmt.Sprintf("the cluster's default zones %s (the pool names none; %s)", strings.Join(ck.placed, ", "), ck.learnt())
	}
	ck.fe.Add("spec.nodeCount", "%s keeps the same number of nodes in each zone of a pool: %d nodes do not divide evenly over %s; give a multiple of %d",
		ck.p.Capabilities().Name, ck.s.Count(), where, n)
}

// version checks the pool's Kubernetes version is one its pools may run.
func (ck *preflight) version() {
	v := ck.s.KubernetesVersion
	if v == "" || len(ck.f.PoolVersions) == 0 || (ck.prev != nil && v == ck.prev.KubernetesVersion) || !kpool.IsVersion(v) {
		return
	}
	for _, pv := range ck.f.PoolVersions {
		if MatchesVersion(pv, v) {
			return
		}
	}
	ck.fe.Add("spec.kubernetesVersion", "cluster %s's pools may run %s, not %s (%s)", ck.c.Name, strings.Join(ck.f.PoolVersions, ", "), v, ck.learnt())
}

// MatchesVersion reports whether an offered version (as the provider
// writes it: "1.31.2", "v1.31.2", "1.31.2-gke.1200", or a minor alone,
// "1.31", which is any of its patches) is the version a spec asks for
// ("1.31" is any 1.31.x; "1.31.2" that patch).
func MatchesVersion(offered, want string) bool {
	o := strings.TrimPrefix(offered, "v")
	w := strings.TrimPrefix(want, "v")
	// An offered minor ("1.31", EKS names no patch) is any of its patches.
	return o == w || strings.HasPrefix(o, w+".") || strings.HasPrefix(o, w+"-") || (strings.Count(o, ".") == 1 && strings.HasPrefix(w, o+"."))
}

// Nearest returns up to n offered machine type names closest to name (by
// edit distance, case ignored), closest first.
func Nearest(name string, offered []kpool.MachineType, n int) []string {
	type scored struct {
		name string
		d    int
	}
	var all []scored
	for _, m := range offered {
		all = append(all, scored{m.Name, distance(strings.ToLower(name), strings.ToLower(m.Name))})
	}
	slices.SortStableFunc(all, func(a, b scored) int { return a.d - b.d })
	var out []string
	for _, s := range all[:min(n, len(all))] {
		out = append(out, s.name)
	}
	return out
}

// distance is the Levenshtein distance of two strings.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// age writes a duration as people read an age: "40 s", "12 minutes",
// "3 hours".
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	case d < 2*time.Hour:
		return fmt.Sprintf("%d minutes", int(d.Minutes()))
	}
	return fmt.Sprintf("%d hours", int(d.Hours()))
}

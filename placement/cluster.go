package placement

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// pool is a cluster's pool as placement sees it.
type pool struct {
	*kpool.NodePool
	zones  []string // logical, sorted; none when the provider chooses
	taints []kpool.Taint
}

func (c *Cluster) name() string {
	if c.Cluster.Name != "" {
		return c.Cluster.Name
	}
	return c.Cluster.ID
}

func (c *Cluster) platform() kpool.PlatformType { return c.Cluster.Spec.Platform.Type }

// withViews returns a copy of c with each pool's zones and taints worked
// out, once for every workload placed (c itself is not changed).
func (c *Cluster) withViews() *Cluster {
	out := &Cluster{Cluster: c.Cluster, Pools: c.Pools, Profile: c.Profile}
	if out.Profile == nil {
		out.Profile = provider.NoPools{Platform: c.platform()}
	}
	for _, p := range c.Pools {
		out.views = append(out.views, c.view(p))
	}
	return out
}

// pool returns the cluster's pool of a name.
func (c *Cluster) pool(name string) *pool {
	for _, v := range c.views {
		if v.Name == name {
			return v
		}
	}
	return nil
}

func (c *Cluster) view(p *kpool.NodePool) *pool {
	v := &pool{NodePool: p}
	v.zones, _, _ = provider.PoolZones(c.Profile, c.Cluster, &p.Spec)
	if d, err := provider.Desired(c.Profile, c.Cluster, p); err == nil {
		v.taints = c.Profile.NodeTaints(d)
	} else {
		b := c.Profile.Block(c.Cluster, &p.Spec)
		v.taints = c.Profile.NodeTaints(provider.PoolSpec{Taints: provider.Taints(b, &p.Spec)})
	}
	return v
}

// poolList describes the cluster's pools for an error message.
func (c *Cluster) poolList() string {
	if len(c.Pools) == 0 {
		return fmt.Sprintf("cluster %s has no node pools in kpool", c.name())
	}
	ps := append([]*pool(nil), c.views...)
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	var out []string
	for _, p := range ps {
		s := p.Name + " (" + zoneNoun(p.zones)
		if p.Deleting() {
			s += ", being deleted"
		}
		out = append(out, s+")")
	}
	return fmt.Sprintf("cluster %s has pools %s", c.name(), strings.Join(out, ", "))
}

// zoneNoun is a pool's zones for a message.
func zoneNoun(zones []string) string {
	switch len(zones) {
	case 0:
		return "no zones set"
	case 1:
		return "zone " + zones[0]
	}
	return "zones " + strings.Join(zones, ", ")
}

// logical maps a zone as a person gives it to the cluster's logical zone:
// "1", "<region>-1", or the provider's own name (us-central1-a, us-west-2a,
// AD-1 or its node label's spelling).
func (c *Cluster) logical(z string) (string, error) {
	if l := kpool.NormalizeZone(z, c.Profile.Region(&c.Cluster.Spec)); kpool.IsLogicalZone(l) {
		return l, nil
	}
	return c.Profile.LogicalZone(c.Cluster, z)
}

// resolve checks a workload's wanted pools and zones against the cluster
// and returns the node labels its pods must have, the taints they must
// tolerate, and warnings. count is the workload's replica count (hasCount
// false for a DaemonSet).
func (c *Cluster) resolve(fe *kpool.FieldErrors, at string, w wanted, count int, hasCount bool) ([]requirement, []kpool.Taint, []string) {
	var reqs []requirement
	var warns []string
	bad := len(*fe)

	// The pools named, each existing and not being deleted.
	var named []*pool
	for _, n := range w.pools.values {
		p := c.pool(n)
		switch {
		case p == nil && w.defaultPool:
			fe.Add(at+w.pools.field, "the workload names no pool and the default pool %q is not in the cluster: name one (%s)", n, c.poolList())
		case p == nil:
			fe.Add(at+w.pools.field, "pool %q is not in the cluster: %s", n, c.poolList())
		case p.Deleting():
			fe.Add(at+w.pools.field, "pool %q is being deleted: %s", n, c.poolList())
		default:
			named = append(named, p)
		}
	}
	if w.pools.values != nil {
		reqs = append(reqs, requirement{key: provider.LabelPool, values: w.pools.values, what: w.pools.what, noun: "pool"})
	}

	// The zones, each one that a pool wanted runs in. The pools outside
	// them get none of the pods: their taints and state do not matter.
	reached := named
	if w.zones.values != nil {
		if r, in, ok := c.zones(fe, at, w, named, &warns); ok {
			reqs = append(reqs, r)
			if w.pools.values != nil {
				reached = in
			}
		}
	}
	if len(*fe) > bad {
		return nil, nil, nil
	}

	var taints []kpool.Taint
	maxNodes := 0
	for _, p := range reached {
		for _, t := range p.taints {
			if !slices.Contains(taints, t) {
				taints = append(taints, t)
			}
		}
		if p.Status.Phase != kpool.PhaseReady {
			warns = append(warns, fmt.Sprintf("pool %s is %s, not Ready: its pods may stay Pending until it is", p.Name, orPending(p.Status.Phase)))
		}
		if a := p.Spec.Autoscaling; a.On() && a.MaxNodes != nil {
			maxNodes += *a.MaxNodes
		} else {
			maxNodes += p.Spec.Count()
		}
	}
	if hasCount && len(reached) > 0 && count > maxNodes {
		nodes := "nodes"
		if maxNodes == 1 {
			nodes = "node"
		}
		warns = append(warns, fmt.Sprintf("%d replicas, but %s %s at most %d %s: pods will share nodes, or stay Pending where they cannot",
			count, poolsNoun(reached), have(reached), maxNodes, nodes))
	}
	return reqs, taints, warns
}

// zones checks the wanted zones against the pools they are wanted in (the
// pools named, or every pool of the cluster when none is) and returns the
// requirement: kompox.dev/node-zone with logical zones when each of those
// pools is in one zone (drivers set that label only there), else
// topology.kubernetes.io/zone with the provider's values. It returns too
// the pools that run in any of the zones.
func (c *Cluster) zones(fe *kpool.FieldErrors, at string, w wanted, named []*pool, warns *[]string) (requirement, []*pool, bool) {
	field := at + w.zones.field
	if c.Profile.Capabilities().Zones == provider.ZonesNone {
		fe.Add(field, "%s pools have no zones: drop the zone", c.platform())
		return requirement{}, nil, false
	}
	among := named
	if w.pools.values == nil {
		for _, p := range c.views {
			if !p.Deleting() {
				among = append(among, p)
			}
		}
	} else if len(named) < len(w.pools.values) {
		return requirement{}, nil, false // a pool is missing: said already
	}
	var logical []string
	ok := true
	for _, z := range w.zones.values {
		l, err := c.logical(z)
		if err != nil {
			fe.Add(field, "%v", err)
			ok = false
			continue
		}
		var in []*pool
		for _, p := range among {
			if slices.Contains(p.zones, l) {
				in = append(in, p)
			}
		}
		if len(in) == 0 {
			fe.Add(field, "zone %q is not one that %s: %s", z, runsIn(among, w.pools.values == nil, c), zonesOf(among))
			ok = false
			continue
		}
		if !slices.Contains(logical, l) {
			logical = append(logical, l)
		}
	}
	if !ok {
		return requirement{}, nil, false
	}
	single := true
	var reached []*pool
	for _, p := range among {
		if !overlaps(p.zones, logical) {
			if w.pools.values != nil {
				*warns = append(*warns, fmt.Sprintf("pool %s runs in %s, none of those wanted: it gets none of these pods", p.Name, zoneNoun(p.zones)))
			}
			continue
		}
		reached = append(reached, p)
		if len(p.zones) != 1 {
			single = false
		}
	}
	if single {
		return requirement{key: provider.LabelZone, values: logical, what: w.zones.what, noun: "zone"}, reached, true
	}
	values := make([]string, len(logical))
	for i, l := range logical {
		v, err := c.Profile.NodeZone(c.Cluster, l)
		if err != nil {
			fe.Add(field, "%v", err)
			return requirement{}, nil, false
		}
		values[i] = v
	}
	return requirement{key: provider.LabelTopologyZone, values: values, what: w.zones.what, noun: "zone"}, reached, true
}

func runsIn(ps []*pool, all bool, c *Cluster) string {
	switch {
	case all:
		return "a pool of cluster " + c.name() + " runs in"
	case len(ps) == 1:
		return "pool " + ps[0].Name + " runs in"
	}
	return poolsNoun(ps) + " run in"
}

func zonesOf(ps []*pool) string {
	if len(ps) == 0 {
		return "there are no pools"
	}
	var out []string
	for _, p := range ps {
		out = append(out, p.Name+" has "+zoneNoun(p.zones))
	}
	return strings.Join(out, "; ")
}

func poolsNoun(ps []*pool) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	if len(ps) == 1 {
		return "pool " + names[0]
	}
	return "pools " + strings.Join(names, ", ")
}

func have(ps []*pool) string {
	if len(ps) == 1 {
		return "has"
	}
	return "have"
}

func orPending(p kpool.Phase) kpool.Phase {
	if p == "" {
		return kpool.PhasePending
	}
	return p
}

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
	// key and value are the label that selects the pool's nodes: kpool's
	// kompox.dev/node-pool where they carry it, else the one the provider
	// puts on every node of a pool (a pool kpool only observes). key is ""
	// when no label does; unselectable says why.
	key, value   string
	unselectable string
	// zoneLabel is the kompox.dev/node-zone the nodes carry ("" none): set
	// at creation on a pool in one zone, never changed after.
	zoneLabel string
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

// members returns what a placement name means: the members of the
// logical pool of that name (spec.placementPool, a pool's own name by
// default), those being deleted included; or, for a member named by its
// own name, that pool alone, selected by the provider's own pool label
// (its kompox.dev/node-pool is the logical pool's).
func (c *Cluster) members(name string) []*pool {
	var out []*pool
	for _, v := range c.views {
		if v.LogicalPool() == name {
			out = append(out, v)
		}
	}
	if len(out) > 0 {
		return out
	}
	if p := c.pool(name); p != nil {
		alone := *p
		if own := c.Profile.PoolLabel(); own != "" && p.ProviderName != "" {
			alone.key, alone.value, alone.zoneLabel = own, p.ProviderName, ""
		} else {
			alone.key, alone.unselectable = "", fmt.Sprintf("pool %s's nodes carry its logical pool's %s=%s, and %s puts no label of its own on them",
				p.Name, provider.LabelPool, p.LogicalPool(), c.platform())
		}
		return []*pool{&alone}
	}
	return nil
}

func (c *Cluster) view(p *kpool.NodePool) *pool {
	v := &pool{NodePool: p}
	v.zones, _, _ = provider.PoolZones(c.Profile, c.Cluster, &p.Spec)
	// What the nodes carry: as a controller saw it at the provider, or,
	// before one has, what kpool will create them with.
	carried := map[string]string{}
	if l := p.Status.PlacementLabels; l != nil {
		carried = *l
	} else if !p.Spec.Observed() {
		carried[provider.LabelPool] = p.LogicalPool()
		if len(v.zones) == 1 {
			carried[provider.LabelZone] = v.zones[0]
		}
	}
	switch own := c.Profile.PoolLabel(); {
	case carried[provider.LabelPool] == p.LogicalPool():
		v.key, v.value = provider.LabelPool, p.LogicalPool()
		v.zoneLabel = carried[provider.LabelZone]
	case own != "" && p.ProviderName != "":
		v.key, v.value = own, p.ProviderName
	case own != "":
		v.unselectable = fmt.Sprintf("pool %s's nodes carry no %s and its name at %s is not known yet", p.Name, provider.LabelPool, c.platform())
	default:
		v.unselectable = fmt.Sprintf("pool %s's nodes carry no %s, and %s puts no label of its own on a pool's nodes", p.Name, provider.LabelPool, c.platform())
	}
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

// zoneOf maps a zone label's value on a node to its logical zone: what
// lets a zone asked for under one key be compared with one pinned under
// another (kompox.dev/node-zone, topology.kubernetes.io/zone, or the
// deprecated failure-domain.beta.kubernetes.io/zone).
func (c *Cluster) zoneOf(key, value string) (string, bool) {
	switch key {
	case provider.LabelZone:
		return value, true
	case provider.LabelTopologyZone, labelBetaZone:
		for _, z := range zoneCandidates(c) {
			if v, err := c.Profile.NodeZone(c.Cluster, z); err == nil && strings.EqualFold(v, value) {
				return z, true
			}
		}
		if l, err := c.logical(value); err == nil {
			return l, true
		}
	}
	return "", false
}

// labelBetaZone is topology.kubernetes.io/zone's deprecated name, which
// nodes still carry.
const labelBetaZone = "failure-domain.beta.kubernetes.io/zone"

// zoneCandidates are the logical zones the cluster's pools run in.
func zoneCandidates(c *Cluster) []string {
	var out []string
	for _, p := range c.views {
		for _, z := range p.zones {
			if !slices.Contains(out, z) {
				out = append(out, z)
			}
		}
	}
	return out
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
// and returns the node selector terms its pods must match (ORed; each ANDs
// its requirements), the taints they must tolerate, and warnings. count is
// the workload's replica count (hasCount false for a DaemonSet).
func (c *Cluster) resolve(fe *kpool.FieldErrors, at string, w wanted, count int, hasCount bool) ([][]requirement, []kpool.Taint, []string) {
	var warns []string
	bad := len(*fe)

	// The pools named, each existing, not being deleted, and with a label
	// that selects its nodes.
	var named []*pool
	for _, n := range w.pools.values {
		ms := c.members(n)
		var live []*pool
		for _, p := range ms {
			switch {
			case p.Deleting():
			case p.key == "":
				fe.Add(at+w.pools.field, "%s: nothing can select them", p.unselectable)
			default:
				live = append(live, p)
			}
		}
		switch {
		case len(ms) == 0 && w.defaultPool:
			fe.Add(at+w.pools.field, "the workload names no pool and the default pool %q is not in the cluster: name one (%s)", n, c.poolList())
		case len(ms) == 0:
			fe.Add(at+w.pools.field, "pool %q is not in the cluster: %s", n, c.poolList())
		case len(live) == 0 && ms[0].key != "":
			fe.Add(at+w.pools.field, "pool %q is being deleted: %s", n, c.poolList())
		}
		named = append(named, live...)
	}

	// The zones, each one that a pool wanted runs in. The pools outside
	// them get none of the pods: their taints and state do not matter.
	reached := named
	var zone []requirement
	if w.zones.values != nil {
		if r, in, ok := c.zones(fe, at, w, named, &warns); ok {
			zone = []requirement{r}
			if w.pools.values != nil {
				reached = in
			}
		}
	}
	if len(*fe) > bad {
		return nil, nil, nil
	}

	// One term per label that selects the pools named: kompox.dev/node-pool,
	// and the provider's own for pools kpool did not label.
	var terms [][]requirement
	if w.pools.values != nil {
		var keys []string
		values := map[string][]string{}
		for _, p := range named {
			if values[p.key] == nil {
				keys = append(keys, p.key)
			}
			if !slices.Contains(values[p.key], p.value) { // members share the logical name
				values[p.key] = append(values[p.key], p.value)
			}
		}
		for _, k := range keys {
			terms = append(terms, append([]requirement{{key: k, values: values[k], what: w.pools.what, noun: "pool"}}, zone...))
		}
	} else if zone != nil {
		terms = [][]requirement{zone}
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
	return terms, taints, warns
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
	// kompox.dev/node-zone where every pool reached carries it (a pool
	// created in one zone); else the zone label every node has.
	carried := true
	var reached []*pool
	for _, p := range among {
		if !overlaps(p.zones, logical) {
			if w.pools.values != nil {
				*warns = append(*warns, fmt.Sprintf("pool %s runs in %s, none of those wanted: it gets none of these pods", p.Name, zoneNoun(p.zones)))
			}
			continue
		}
		reached = append(reached, p)
		if p.zoneLabel == "" || !slices.Contains(p.zones, p.zoneLabel) {
			carried = false
		}
	}
	if carried {
		return requirement{key: provider.LabelZone, values: logical, logical: logical, what: w.zones.what, noun: "zone"}, reached, true
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
	return requirement{key: provider.LabelTopologyZone, values: values, logical: logical, what: w.zones.what, noun: "zone"}, reached, true
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

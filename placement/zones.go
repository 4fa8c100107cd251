package placement

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

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

// runsIn says, for a message, where the zones asked for had to be: the
// pools wanted, or all the cluster's.
func runsIn(ps []*pool, all bool, c *Cluster) string {
	switch {
	case all:
		return "a pool of cluster " + c.name() + " runs in"
	case len(ps) == 1:
		return "pool " + ps[0].Name + " runs in"
	}
	return poolsNoun(ps) + " run in"
}

// zonesOf lists each pool's zones for a message.
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

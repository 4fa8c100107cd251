package placement

import (
	"fmt"
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

// name is the cluster's name for messages, its ID when it has none.
func (c *Cluster) name() string {
	if c.Cluster.Name != "" {
		return c.Cluster.Name
	}
	return c.Cluster.ID
}

// platform is the cluster's platform type.
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

// view works out how placement sees pool p: its zones, the label that
// selects its nodes (or why none does), and its nodes' taints.
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

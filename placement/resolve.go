package placement

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kpool/kpool"
)

// resolve checks a workload's wanted pools and zones against the cluster
// and returns the node selector terms its pods must match (ORed; each ANDs
// its requirements), the taints they must tolerate, and warnings. count is
// the workload's replica count (hasCount false for a DaemonSet).
func (c *Cluster) resolve(fe *kpool.FieldErrors, at string, w wanted, count int, hasCount bool) ([][]requirement, []kpool.Taint, []string) {
	var warns []string
	bad := len(*fe)

	// The pools named, each existing, not being deleted, and with a label
	// that selects its nodes.
	named := c.named(fe, at, w)

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

	terms := poolTerms(w, named, zone)
	taints := taintsOf(reached)
	warns = append(warns, readinessWarnings(reached)...)
	warns = append(warns, capacityWarnings(reached, count, hasCount)...)
	return terms, taints, warns
}

// named returns the live pools that the wanted pool names mean, recording
// a name that is not in the cluster, being deleted, or that nothing can
// select.
func (c *Cluster) named(fe *kpool.FieldErrors, at string, w wanted) []*pool {
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
	return named
}

// poolTerms returns one term per label that selects the pools named:
// kompox.dev/node-pool, and the provider's own for pools kpool did not
// label; each ANDs the zone requirement (if any). With no pools wanted,
// the zone requirement alone is the term.
func poolTerms(w wanted, named []*pool, zone []requirement) [][]requirement {
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
	return terms
}

// taintsOf returns the taints of the pools reached, each once: what the
// pods must tolerate.
func taintsOf(reached []*pool) []kpool.Taint {
	var taints []kpool.Taint
	for _, p := range reached {
		for _, t := range p.taints {
			if !slices.Contains(taints, t) {
				taints = append(taints, t)
			}
		}
	}
	return taints
}

// readinessWarnings warns of each pool reached that is not Ready: its pods
// may wait for it.
func readinessWarnings(reached []*pool) []string {
	var warns []string
	for _, p := range reached {
		if p.Status.Phase != kpool.PhaseReady {
			warns = append(warns, fmt.Sprintf("pool %s is %s, not Ready: its pods may stay Pending until it is", p.Name, orPending(p.Status.Phase)))
		}
	}
	return warns
}

// capacityWarnings warns when a workload's count replicas outnumber the
// nodes the pools reached can have at most (hasCount false: no count).
func capacityWarnings(reached []*pool, count int, hasCount bool) []string {
	maxNodes := 0
	for _, p := range reached {
		if a := p.Spec.Autoscaling; a.On() && a.MaxNodes != nil {
			maxNodes += *a.MaxNodes
		} else {
			maxNodes += p.Spec.Count()
		}
	}
	if !hasCount || len(reached) == 0 || count <= maxNodes {
		return nil
	}
	nodes := "nodes"
	if maxNodes == 1 {
		nodes = "node"
	}
	return []string{fmt.Sprintf("%d replicas, but %s %s at most %d %s: pods will share nodes, or stay Pending where they cannot",
		count, poolsNoun(reached), have(reached), maxNodes, nodes)}
}

// poolsNoun names pools for a message: "pool a" or "pools a, b".
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

// have is "has" or "have", as many as ps.
func have(ps []*pool) string {
	if len(ps) == 1 {
		return "has"
	}
	return "have"
}

// orPending is a pool's phase for a message, Pending before it has one.
func orPending(p kpool.Phase) kpool.Phase {
	if p == "" {
		return kpool.PhasePending
	}
	return p
}

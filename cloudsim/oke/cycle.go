package oke

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	"k8s.io/utils/ptr"
)

// Node cycling, as OKE's documentation describes it ("Performing an
// In-Place Worker Node Update by Cycling Nodes in an Existing Node Pool";
// "Balancing Service Availability and Cost When Cycling Managed Nodes in
// Node Pools"; "Notes on Cordoning and Draining Managed Nodes Before
// Termination" in "Deleting Worker Nodes"): an UpdateNodePool with
// nodePoolCyclingDetails.isNodeCyclingEnabled replaces the nodes that do
// not have the pool's current configuration. In batches: up to
// maximumSurge new nodes are added with the current configuration, and
// once they are ACTIVE (Ready in the cluster) as many old nodes, plus up
// to maximumUnavailable more, are cordoned and drained (PodDisruption-
// Budgets honoured), then terminated; nodes to bring the pool back to its
// size follow. A node not drained within evictionGraceDuration is
// terminated all the same when isForceDeleteAfterGraceDuration is set;
// otherwise it is not terminated, the work request FAILS and the pool
// NEEDS_ATTENTION (until an update: it does not heal by itself). An
// evictionGraceDuration of PT0M terminates nodes without cordon and drain.
// The drain is retried on each tick of the emulator's clock (any request,
// or a request to the cluster's Kubernetes API).

// Cycle phases.
const (
	phaseNext   = "next"   // choose the next batch
	phaseSurge  = "surge"  // the batch's new nodes come up
	phaseDrain  = "drain"  // the batch's old nodes are cordoned and drained
	phaseRemove = "remove" // the batch's old nodes terminate
	phaseRefill = "refill" // nodes to bring the pool to its size come up
)

// cycle is a node pool's node cycling, run by its update's work request.
type cycle struct {
	surge, unavailable int
	grace              time.Duration
	force              bool
	injected           bool // the work request fails (an injected fault)
	phase              string
	at                 time.Time // when the phase began, or when its timed step ends
	blocked            bool      // a drain of the batch was refused at an earlier tick
	batch, added       []*node
	replaced           int
}

// startCycle makes p's running update cycle its nodes, with the pool's
// settings (their defaults when it has none).
func (p *pool) startCycle(now time.Time) {
	size := ptr.Deref(p.np.NodeConfigDetails.Size, 0)
	cd := ptr.Deref(p.np.NodePoolCyclingDetails, ce.NodePoolCyclingDetails{})
	ev := ptr.Deref(p.np.NodeEvictionNodePoolSettings, ce.NodeEvictionNodePoolSettings{})
	c := &cycle{surge: scaledNodes(ptr.Deref(cd.MaximumSurge, defaultSurge), size, true),
		unavailable: scaledNodes(ptr.Deref(cd.MaximumUnavailable, defaultUnavailable), size, false),
		grace:       defaultGrace, force: ptr.Deref(ev.IsForceDeleteAfterGraceDuration, false),
		injected: p.op.Fails, phase: phaseNext, at: now}
	if g, ok := parseISODuration(ptr.Deref(ev.EvictionGraceDuration, "")); ok {
		c.grace = g
	}
	if c.surge+c.unavailable == 0 {
		c.surge = 1 // a percentage of a small pool: one node at a time
	}
	// The work request ends when the cycle does (endCycle), not at a time
	// known now.
	p.op.End = now.Add(100 * 365 * 24 * time.Hour)
	p.op.Done = nil
	p.cycle = c
	p.work.log(now, "Cycling the nodes of node pool %s: maximum surge %d, maximum unavailable %d, eviction grace duration %s.",
		p.id, c.surge, c.unavailable, c.grace)
}

// stale lists the pool's nodes (not being deleted) whose configuration is
// not the pool's current one: version, shape, image, boot volume,
// preemptible, labels, node tags or placement.
func (p *pool) stale() []*node {
	want, tags := p.config(), p.np.NodeConfigDetails.FreeformTags
	placed := map[string]bool{}
	for _, pc := range p.np.NodeConfigDetails.PlacementConfigs {
		placed[ptr.Deref(pc.AvailabilityDomain, "")] = true
	}
	var out []*node
	for _, n := range p.nodes {
		if n.state == string(ce.NodeLifecycleStateDeleting) || n.failed() {
			continue
		}
		if !reflect.DeepEqual(n.cfg, want) || !maps.Equal(n.tags, tags) || !placed[n.ad] {
			out = append(out, n)
		}
	}
	return out
}

// cycleStep moves the pool's cycle as far as the clock has come.
func (p *pool) cycleStep(now time.Time, s *Server) {
	for p.cycle != nil && p.cycle.step(p, now, s) {
	}
}

// step moves the cycle one phase on; false when it waits.
func (c *cycle) step(p *pool, now time.Time, s *Server) bool {
	switch c.phase {
	case phaseNext:
		return c.next(p, s)
	case phaseSurge, phaseRefill:
		if now.Before(c.at) {
			return false
		}
		setState(c.added, ce.NodeLifecycleStateActive)
		c.added = nil
		if c.phase == phaseRefill {
			c.phase = phaseNext
			return true
		}
		s.syncKube() // Ready in the cluster before the old nodes drain
		c.phase = phaseDrain
		return true
	case phaseDrain:
		return c.drain(p, now, s)
	case phaseRemove:
		if now.Before(c.at) {
			return false
		}
		p.nodes = slices.DeleteFunc(p.nodes, func(n *node) bool { return slices.Contains(c.batch, n) })
		c.replaced += len(c.batch)
		c.batch = nil
		c.phase = phaseNext
		if refill := ptr.Deref(p.np.NodeConfigDetails.Size, 0) - len(p.nodes); refill > 0 {
			c.added = p.addNodes(s, refill)
			if p.shortCycle(c.added, c.at) {
				return false
			}
			c.phase, c.at = phaseRefill, c.at.Add(s.nodeTime)
		}
		return true
	}
	return false
}

// next starts the next batch, or ends the cycle when no node is stale.
func (c *cycle) next(p *pool, s *Server) bool {
	stale := p.stale()
	if len(stale) == 0 {
		size := ptr.Deref(p.np.NodeConfigDetails.Size, 0)
		if len(p.nodes) < size {
			c.added = p.addNodes(s, size-len(p.nodes))
			if p.shortCycle(c.added, c.at) {
				return false
			}
			c.phase, c.at = phaseRefill, c.at.Add(s.nodeTime)
			return true
		}
		for len(p.nodes) > size {
			p.victim()
			p.nodes = p.nodes[:len(p.nodes)-1]
		}
		p.endCycle(c.at, "", "")
		return false
	}
	if c.injected {
		p.endCycle(c.at, "InternalError", fmt.Sprintf("No %s instance could be launched to replace node %s: an internal error.%s",
			ptr.Deref(p.np.NodeShape, ""), stale[0].name, injected))
		return false
	}
	c.batch = stale[:min(len(stale), c.surge+c.unavailable)]
	// New nodes first, as many as the batch (within the surge), but no
	// more than the pool's size needs once the batch is gone (an update
	// that also shrinks the pool removes its surplus without them).
	needed := ptr.Deref(p.np.NodeConfigDetails.Size, 0) - (len(p.nodes) - len(c.batch))
	c.added = p.addNodes(s, max(min(c.surge, len(c.batch), needed), 0))
	if p.shortCycle(c.added, c.at) {
		return false
	}
	p.work.log(c.at, "Replacing %d nodes (%s) with %d new nodes first.", len(c.batch), names(c.batch), len(c.added))
	if len(c.added) > 0 {
		c.phase, c.at = phaseSurge, c.at.Add(s.nodeTime)
	} else {
		c.phase = phaseDrain
	}
	return true
}

// drain cordons and drains the batch's old nodes through the cluster's
// Kubernetes API: done, they terminate; past the grace duration they are
// force deleted, or the cycle fails.
func (c *cycle) drain(p *pool, now time.Time, s *Server) bool {
	left := 0
	if c.grace > 0 {
		for _, n := range c.batch {
			if l, err := s.kube.api.DrainNode(p.cluster.ID, n.ip, false); err == nil {
				left += l
			}
		}
	}
	switch deadline := c.at.Add(c.grace); {
	case left == 0:
		if c.blocked {
			c.at = now // drained at this tick, not before
		}
	case now.Before(deadline):
		c.blocked = true
		return false
	case c.force:
		for _, n := range c.batch {
			_, _ = s.kube.api.DrainNode(p.cluster.ID, n.ip, true)
		}
		p.work.log(deadline, "%d pods could not be evicted from nodes %s within the eviction grace duration %s: deleted (isForceDeleteAfterGraceDuration).",
			left, names(c.batch), c.grace)
		c.at = deadline
	default:
		p.endCycle(deadline, "InternalError", fmt.Sprintf("%d pods could not be evicted from nodes %s within the eviction grace duration %s "+
			"(their PodDisruptionBudgets allow no disruption); the nodes were not terminated, as isForceDeleteAfterGraceDuration is false.",
			left, names(c.batch), c.grace))
		return false
	}
	c.blocked = false
	setState(c.batch, ce.NodeLifecycleStateDeleting)
	c.phase, c.at = phaseRemove, c.at.Add(s.nodeTime)
	return true
}

// endCycle ends the pool's cycle and its work request at t: SUCCEEDED,
// or FAILED with code and message (the pool then NEEDS_ATTENTION).
func (p *pool) endCycle(t time.Time, code, message string) {
	w := p.work
	w.settled, w.end, w.failed = true, t, code != ""
	p.op.End = t // the engine ends it at its next request; Done is unset
	p.op, p.cycle = nil, nil
	if code == "" {
		w.log(t, "Node pool %s update succeeded: its nodes have its current configuration.", p.id)
		p.state, p.details = stateActive, ""
		return
	}
	p.state, p.details = stateNeedsAttention, message
	w.fail(t, code, message)
}

// addNodes adds n CREATING nodes with the pool's configuration.
func (p *pool) addNodes(s *Server, n int) []*node {
	var out []*node
	for range n {
		p.addNode(s)
		out = append(out, p.nodes[len(p.nodes)-1])
	}
	return out
}

func setState(nodes []*node, st ce.NodeLifecycleStateEnum) {
	for _, n := range nodes {
		n.state = string(st)
	}
}

func names(nodes []*node) string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.name)
	}
	return strings.Join(out, ", ")
}

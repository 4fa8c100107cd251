package reconcile

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// clusterRun is one reconcile of one cluster.
type clusterRun struct {
	c    *Controller
	cl   *kpool.Cluster
	d    provider.Driver  // rate-limited and counted; provider.As finds its optional interfaces
	lane *laned           // d's lanes, which count the pass's writes
	prof provider.Profile // the cluster's platform
	name string           // the controller's name
	st   *clusterState
	// result hears what the pass came to, for kpool_reconciles_total.
	result *string
	// watch is the cluster's node watch (nil: none); nodes are its nodes
	// by provider pool name, when nodesKnown (the watch has listed them).
	watch      *nodeWatch
	nodes      map[string][]*corev1.Node
	nodesKnown bool
	// observed are the provider's pools by provider name, taken the
	// provider names of the cluster's kpool pools (a successor's name
	// must be neither).
	observed map[string]*provider.Pool
	taken    map[string]bool
}

// pool reconciles one pool against what the provider reports of it
// (nil: nothing of that provider name). It reports whether the pool is not
// settled yet, and returns an error worth retrying.
func (r *clusterRun) pool(ctx context.Context, p *kpool.NodePool, obs *provider.Pool) (bool, error) {
	s, err := r.scope(ctx, p, obs)
	if err != nil {
		// Without the last report the controller cannot know what it
		// already did (a refused generation): act on nothing, retry.
		return true, err
	}
	r.noteGeneration(p)
	s.linkWriter(ctx)
	s.observeInto()
	if obs != nil && r.prof.Capabilities().NewNodesOnly() {
		s.nodesCurrent()
	}

	s.desired, err = provider.Desired(r.prof, r.cl, p)
	if err != nil {
		s.failed(ctx, ReasonInvalidSpec, err.Error())
		return false, nil
	}
	s.desired.Owner = r.mark(p)
	if r.foreign(p, obs) {
		return s.foreignPool(ctx)
	}
	s.nodeTruth(ctx, !p.Spec.Observed())
	if rp := s.replacement(); rp != nil && !p.Spec.Observed() {
		s.rp.meta.Replacement = rp // carried in every report: a rolled-back generation is not tried again
		if rp.Active() {
			if p.Deleting() {
				return s.deleteSuccessor(ctx, rp)
			}
			return s.replace(ctx, rp)
		}
	}

	switch {
	case p.Deleting():
		return s.deleting(ctx)
	case p.Spec.Observed():
		return s.observe(ctx)
	case obs == nil:
		return s.create(ctx)
	}
	return s.update(ctx)
}

// observeInto records what the provider reports in the status metadata.
// When the provider cannot say how many nodes are up (an operation runs),
// the last count known stays, capped at the new target: a scale from 3 to
// 5 shows 3 until it ends, never 0.
func (s *poolScope) observeInto() {
	m, obs := &s.rp.meta, s.obs
	if obs == nil {
		m.ProvisioningState, m.Exists = "NotFound", ptr(false)
		return
	}
	m.Exists, m.ProvisioningState = ptr(true), obs.ProviderState
	if obs.State != provider.StateUnknown || obs.ProviderState != "" {
		// What the nodes carry, for placement (a pool not read this time
		// keeps its last report: see Pool).
		carried := map[string]string{}
		for _, k := range []string{provider.LabelPool, provider.LabelZone} {
			if v, ok := obs.Labels[k]; ok {
				carried[k] = v
			}
		}
		m.NodeLabels = &carried
	}
	m.ProviderMessage = obs.Message
	active, byZone := obs.ReadyNodes, obs.NodesByZone
	if obs.ReadyUnknown {
		var last kpool.ReportMeta
		if s.prev != nil {
			last = s.last()
		}
		active, byZone = 0, nil
		if last.ActiveNodes != nil {
			active = min(*last.ActiveNodes, obs.Count)
			if *last.ActiveNodes <= obs.Count {
				byZone = last.NodesByZone
			}
		}
	}
	desired := s.p.Spec.Count()
	if s.p.Spec.Autoscaling.On() {
		desired = obs.Count // the autoscaler's
	}
	m.ActiveNodes, m.DesiredNodes = &active, &desired
	if len(byZone) > 0 {
		m.NodesByZone = byZone
	}
	m.LabelProblems = obs.Problems
	s.noteShortage()
}

// nodesCurrent reports, for a provider that changes new nodes only, how
// many nodes still run an earlier configuration.
func (s *poolScope) nodesCurrent() {
	obs := s.obs
	if obs.StaleNodes == 0 {
		s.rp.set(kpool.ConditionNodesCurrent, kpool.ConditionTrue, ReasonAllNodesCurrent, "")
		return
	}
	s.rp.meta.StaleNodes = obs.StaleNodes
	s.rp.set(kpool.ConditionNodesCurrent, kpool.ConditionFalse, ReasonNewNodesOnly, fmt.Sprintf(
		"%d of %d nodes still run an earlier configuration: %s applies changes to new nodes only; cycle the pool to replace them",
		obs.StaleNodes, obs.Nodes, s.prof.Capabilities().Name))
}

// noteGeneration remembers when a pool's generation was first seen, for
// the spec-to-Ready metric.
func (r *clusterRun) noteGeneration(p *kpool.NodePool) {
	if s, ok := r.st.seen[p.ID]; !ok || s.generation != p.Generation {
		r.st.seen[p.ID] = seenGeneration{generation: p.Generation, at: r.c.cfg.Clock.Now()}
	}
}

// readied records that a pool's generation reached Ready.
func (r *clusterRun) readied(p *kpool.NodePool) {
	if s, ok := r.st.seen[p.ID]; ok && s.generation == p.Generation && !s.at.IsZero() {
		r.c.cfg.Metrics.SpecToReady.Observe(r.c.cfg.Clock.Since(s.at).Seconds())
		r.st.seen[p.ID] = seenGeneration{generation: p.Generation}
	}
}

package reconcile

import (
	"context"
	"fmt"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// cycleWanted reports whether the provider is to be asked to cycle the
// pool's nodes: it applies changes to new nodes only, some still run an
// earlier configuration, the pool's strategy lets kpool replace nodes
// (replacement: Surge), and this generation was not cycled yet.
func (s *poolScope) cycleWanted() bool {
	obs := s.obs
	return s.prof.Capabilities().NewNodesOnly() && obs.StaleNodes > 0 && obs.State == provider.StateReady &&
		s.p.Spec.UpdateStrategy.Surge() && (s.prev == nil || s.last().CycledGeneration != s.p.Generation)
}

// cycle sends the update that has the provider replace the stale nodes
// (OKE's node cycling, in batches of the strategy's surge, each drained
// under the workloads' budgets by the provider), once a generation.
func (s *poolScope) cycle(ctx context.Context) (bool, error) {
	d := s.desired
	up := provider.Upgrade{}
	if d.Upgrade != nil {
		up = *d.Upgrade
	}
	up.Cycle = true
	d.Upgrade = &up
	msg := fmt.Sprintf("cycling %d nodes that run an earlier configuration (%s)", s.obs.StaleNodes, s.p.Spec.UpdateStrategy.Describe())
	s.rp.meta.CycledGeneration = s.p.Generation
	s.rp.gen = s.p.Generation
	s.rp.set(kpool.ConditionReady, kpool.ConditionFalse, ReasonCycling, msg)
	s.rp.set(kpool.ConditionProgressing, kpool.ConditionTrue, ReasonCycling, "")
	claim := s.rp.clone()
	if err := s.post(ctx, &claim); err != nil {
		return true, err
	}
	start := s.c.cfg.Clock.Now()
	_, err := s.d.NodePoolUpdate(ctx, s.cl, d)
	s.called(ctx, "update", "cycle: "+msg, start, err)
	switch {
	case err == nil:
		return true, nil
	case s.refused(ctx, err):
		return false, nil
	}
	return s.retry(ctx, err)
}

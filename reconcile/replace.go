package reconcile

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/kubeapi"
	"github.com/kpool/kpool/provider"
)

// Replacement. A change the provider cannot make in place, on a pool whose
// updateStrategy says replacement: Surge, is carried out by a successor
// pool under a new provider name, in the same logical pool: created,
// awaited Ready in Kubernetes, the old nodes cordoned and drained under
// the workloads' PodDisruptionBudgets, a soak, the old pool deleted, and
// the successor's name made the pool's (the service does that when the
// report says Done). Each step is reported (ReportMeta.Replacement)
// before it acts, so that a restart resumes from the store and never
// creates a second successor; there are never two pools once it ends, nor
// none at any moment.

// replacement is the pool's replacement as this controller last reported
// it (nil: none), with a rollback the service recorded since.
func (s *poolScope) replacement() *kpool.Replacement {
	if s.prev == nil {
		return nil
	}
	rp := s.last().Replacement
	if rp == nil {
		return nil
	}
	if st := s.p.Status.Replacement; st != nil && st.RollbackRequestedAt != nil && st.Generation == rp.Generation && st.To == rp.To {
		rp.RollbackRequestedAt = st.RollbackRequestedAt
	}
	return rp
}

// replaceWanted reports whether the differences that need a new pool are
// to be carried out by a replacement now: the strategy asks for it and
// this generation was not rolled back.
func (s *poolScope) replaceWanted(stuck []provider.Difference) bool {
	if len(stuck) == 0 || !s.p.Spec.UpdateStrategy.Surge() {
		return false
	}
	rp := s.rp.meta.Replacement
	return rp == nil || rp.Generation != s.p.Generation || rp.Step != kpool.StepRolledBack
}

// startReplacement begins replacing the pool by a successor: its name is
// chosen and recorded, then it is created (surge).
func (s *poolScope) startReplacement(ctx context.Context, stuck []provider.Difference) (bool, error) {
	if s.watch == nil || s.watch.cs == nil || !s.nodesKnown {
		msg := "needs a new pool (" + join(stuck) + "): kpool replaces a pool only where it reaches the cluster's Kubernetes API, to drain the old nodes, and it does not now (see the cluster's NodesWatched)"
		s.rp.gen = s.p.Generation
		s.rp.set(kpool.ConditionReady, kpool.ConditionFalse, ReasonNeedsReplacement, msg)
		s.rp.set(kpool.ConditionProgressing, kpool.ConditionFalse, ReasonNeedsReplacement, "")
		s.send(ctx)
		return true, nil
	}
	to, err := s.successorName()
	if err != nil {
		s.failed(ctx, ReasonReplacementStopped, err.Error())
		return false, nil
	}
	s.rp.set(kpool.ConditionDegraded, kpool.ConditionFalse, "", "") // carried out, not stuck
	now := s.c.cfg.Clock.Now().UTC()
	rp := &kpool.Replacement{Generation: s.p.Generation, Step: kpool.StepSurging, From: s.p.ProviderName, To: to, StartedAt: now}
	s.logPool(ctx, slog.LevelInfo, "replacement started: a successor pool takes this one's place", "from", rp.From, "to", rp.To,
		"fields", join(stuck), "strategy", s.p.Spec.UpdateStrategy.Describe())
	return s.surge(ctx, rp)
}

// successorName is a provider name for the successor that no pool of the
// cluster, in kpool or at the provider, has: derived from the pool's name
// and generation, so a restart picks the same.
func (s *poolScope) successorName() (string, error) {
	names, err := provider.ProviderNames(s.prof.Capabilities(), fmt.Sprintf("%s-r%d", s.p.Name, s.p.Generation), 0)
	if err != nil {
		return "", err
	}
	for _, n := range names {
		if _, taken := s.observed[n]; !taken && !s.taken[n] {
			return n, nil
		}
	}
	return "", fmt.Errorf("no free provider name for the successor of %s: every name derived from %s-r%d is taken", s.p.ProviderName, s.p.Name, s.p.Generation)
}

// replace carries a running replacement on by one step.
func (s *poolScope) replace(ctx context.Context, rp *kpool.Replacement) (bool, error) {
	switch {
	case rp.RollbackRequestedAt != nil && rp.Step != kpool.StepRollingBack && rp.Step != kpool.StepRetiring:
		s.logPool(ctx, slog.LevelInfo, "replacement rollback asked for: the successor is drained and removed", "from", rp.From, "to", rp.To)
		s.beginRollback(rp, "rollback asked for at "+rp.RollbackRequestedAt.UTC().Format("15:04:05"))
	case rp.Generation != s.p.Generation && rp.Step != kpool.StepRollingBack && rp.Step != kpool.StepRetiring:
		s.newGeneration(ctx, rp)
	}
	switch rp.Step {
	case kpool.StepSurging:
		return s.surge(ctx, rp)
	case kpool.StepDraining:
		return s.drainOld(ctx, rp)
	case kpool.StepSoaking:
		return s.soak(ctx, rp)
	case kpool.StepRetiring:
		return s.retire(ctx, rp)
	case kpool.StepRollingBack:
		return s.rollBack(ctx, rp)
	}
	return s.stopped(ctx, rp)
}

// newGeneration handles a spec changed during a replacement: a successor
// that can take the new spec in place carries on (it is updated once it
// is the pool); one that cannot is rolled back, and the next pass plans
// the new spec against the old pool.
func (s *poolScope) newGeneration(ctx context.Context, rp *kpool.Replacement) {
	succ := s.observed[rp.To]
	if succ != nil && !unread(succ) {
		for _, d := range provider.Compare(s.prof, s.successorSpec(rp), succ) {
			if !s.prof.Capabilities().Correctable(d.Field) {
				s.logPool(ctx, slog.LevelInfo, "spec changed during a replacement in what the successor cannot take: rolling it back", "field", d.Path)
				s.beginRollback(rp, fmt.Sprintf("the spec changed during the replacement (%s), which the successor cannot take in place", d.Path))
				return
			}
		}
	}
	rp.Generation = s.p.Generation
}

// beginRollback turns the replacement round: the successor's drain starts
// afresh.
func (s *poolScope) beginRollback(rp *kpool.Replacement, why string) {
	rp.Step, rp.Message, rp.Draining, rp.Drained, rp.Blocking = kpool.StepRollingBack, why, nil, nil, nil
}

// successorSpec is the pool's desired spec under the successor's name.
// An autoscaled pool's successor starts at the size the autoscaler had
// grown the old pool to (within the bounds), not at the spec's starting
// size: the old nodes' pods must fit on it.
func (s *poolScope) successorSpec(rp *kpool.Replacement) provider.PoolSpec {
	d := s.desired
	d.ProviderName = rp.To
	if d.Autoscaling && s.obs != nil && s.obs.Count > d.Count {
		d.Count = s.obs.Count
		if d.MaxCount > 0 {
			d.Count = min(d.Count, d.MaxCount)
		}
	}
	return d
}

// record makes rp the pass's replacement and stores the report before
// the step acts: what a restart resumes from. Its error means the step
// must not act.
func (s *poolScope) record(ctx context.Context, rp *kpool.Replacement, reason, msg string) error {
	rp.Message = msg
	s.rp.meta.Replacement = rp
	s.rp.gen = s.p.Generation
	s.rp.set(kpool.ConditionReady, kpool.ConditionFalse, reason, fmt.Sprintf("%s: %s", rp.Step, msg))
	progressing := reason != ReasonReplacementStopped && reason != ReasonRolledBack
	s.rp.set(kpool.ConditionProgressing, yes(progressing), reason, "")
	claim := s.rp.clone()
	err := s.post(ctx, &claim)
	if err == nil {
		s.rp = claim
	}
	return err
}

// surge creates the successor and waits for its nodes to be Ready in
// Kubernetes.
func (s *poolScope) surge(ctx context.Context, rp *kpool.Replacement) (bool, error) {
	rp.OldNodes, rp.NewNodes = s.readyNodes(rp.From), s.readyNodes(rp.To)
	succ := s.observed[rp.To]
	if succ == nil {
		return s.createSuccessor(ctx, rp)
	}
	switch {
	case unread(succ):
		return true, nil
	case provider.Foreign(succ, s.desired.Owner):
		return s.stop(ctx, rp, fmt.Sprintf("the successor's name %s is held at %s by another owner's pool (%s)", rp.To, s.cl.Spec.Platform.Type, succ.Owner))
	case succ.State == provider.StateFailed:
		return s.stop(ctx, rp, fmt.Sprintf("the successor %s failed at %s: %s; %s keeps serving, and `kpool nodepool rollback` removes the successor",
			rp.To, s.cl.Spec.Platform.Type, orText(succ.Message, succ.ProviderState), rp.From))
	case succ.State != provider.StateReady:
		return true, s.record(ctx, rp, ReasonReplacing, fmt.Sprintf("creating the successor %s (%s at %s)", rp.To, succ.ProviderState, s.cl.Spec.Platform.Type))
	}
	want := succ.Count
	if !s.nodesKnown || rp.NewNodes < want || succ.ReadyNodes < want {
		return true, s.record(ctx, rp, ReasonReplacing, fmt.Sprintf("waiting for the successor %s's nodes to be Ready in Kubernetes: %d of %d", rp.To, rp.NewNodes, want))
	}
	rp.Step = kpool.StepDraining
	s.logPool(ctx, slog.LevelInfo, "replacement: the successor's nodes are Ready; draining the old nodes", "to", rp.To, "nodes", rp.NewNodes)
	return s.drainOld(ctx, rp)
}

// createSuccessor sends the successor's create, once its intent is
// stored; a create sent lately that the provider does not list yet is
// waited for, not sent again.
func (s *poolScope) createSuccessor(ctx context.Context, rp *kpool.Replacement) (bool, error) {
	now := s.c.cfg.Clock.Now().UTC()
	if rp.CreateSentAt != nil && now.Before(rp.CreateSentAt.Add(s.c.cfg.CallTimeout)) {
		return true, nil
	}
	rp.CreateSentAt = &now
	if err := s.record(ctx, rp, ReasonReplacing, "creating the successor "+rp.To+" at "+string(s.cl.Spec.Platform.Type)); err != nil {
		return true, err
	}
	start := s.c.cfg.Clock.Now()
	_, err := s.d.NodePoolCreate(ctx, s.cl, s.successorSpec(rp))
	s.called(ctx, "create", "replacement: successor "+rp.To, start, err)
	switch {
	case err == nil, provider.IsAlreadyExists(err):
		return true, nil
	case provider.IsNotImplemented(err), provider.IsValidation(err):
		rp.CreateSentAt = nil
		return s.stop(ctx, rp, fmt.Sprintf("%s refused the successor %s: %v; %s keeps serving", s.cl.Spec.Platform.Type, rp.To, err, rp.From))
	}
	return s.retry(ctx, err)
}

// soak waits out the strategy's soak, then retires the old pool.
func (s *poolScope) soak(ctx context.Context, rp *kpool.Replacement) (bool, error) {
	now := s.c.cfg.Clock.Now()
	if rp.SoakUntil != nil && now.Before(*rp.SoakUntil) {
		rp.NewNodes = s.readyNodes(rp.To)
		return true, s.record(ctx, rp, ReasonReplacing, fmt.Sprintf("the successor %s soaks until %s", rp.To, rp.SoakUntil.UTC().Format("15:04:05")))
	}
	rp.Step = kpool.StepRetiring
	return s.retire(ctx, rp)
}

// retire deletes the old pool; once the provider no longer lists it, the
// replacement is Done and the successor's name becomes the pool's.
func (s *poolScope) retire(ctx context.Context, rp *kpool.Replacement) (bool, error) {
	old := s.obs
	if old == nil {
		now := s.c.cfg.Clock.Now().UTC()
		rp.Step, rp.FinishedAt, rp.Blocking, rp.Draining = kpool.StepDone, &now, nil, nil
		rp.OldNodes, rp.NewNodes = 0, s.readyNodes(rp.To)
		s.rp.meta.ProviderName = rp.To
		if err := s.record(ctx, rp, ReasonReplacing, fmt.Sprintf("%s replaced %s", rp.To, rp.From)); err != nil {
			return true, err
		}
		s.logPool(ctx, slog.LevelInfo, "replacement done: the successor is the pool", "from", rp.From, "to", rp.To,
			"took", now.Sub(rp.StartedAt).String())
		return true, nil
	}
	if err := s.record(ctx, rp, ReasonReplacing, "deleting the old pool "+rp.From); err != nil {
		return true, err
	}
	if unread(old) || old.State == provider.StateDeleting {
		return true, nil
	}
	start := s.c.cfg.Clock.Now()
	err := s.d.NodePoolDelete(ctx, s.cl, rp.From)
	s.called(ctx, "delete", "replacement: the old pool", start, err)
	if err != nil && !provider.IsNotFound(err) {
		return s.retry(ctx, err)
	}
	return true, nil
}

// deleteSuccessor deletes a pool's successor when the pool is deleted
// during its replacement; once the successor is gone the pool itself is
// deleted.
func (s *poolScope) deleteSuccessor(ctx context.Context, rp *kpool.Replacement) (bool, error) {
	succ := s.observed[rp.To]
	if succ == nil {
		now := s.c.cfg.Clock.Now().UTC()
		rp.Step, rp.FinishedAt = kpool.StepRolledBack, &now
		rp.Message = "the pool was deleted during its replacement"
		s.rp.meta.Replacement = rp
		return s.deleting(ctx)
	}
	s.rp.set(kpool.ConditionDeleted, kpool.ConditionFalse, ReasonDeleting, "deleting the successor "+rp.To+" first")
	s.rp.set(kpool.ConditionProgressing, kpool.ConditionTrue, ReasonDeleting, "")
	s.send(ctx)
	if unread(succ) || succ.State == provider.StateDeleting {
		return true, nil
	}
	start := s.c.cfg.Clock.Now()
	err := s.d.NodePoolDelete(ctx, s.cl, rp.To)
	s.called(ctx, "delete", "the pool is deleted during its replacement: its successor", start, err)
	if err != nil && !provider.IsNotFound(err) {
		return s.retry(ctx, err)
	}
	return true, nil
}

// stop stops the replacement with why: the old pool serves.
func (s *poolScope) stop(ctx context.Context, rp *kpool.Replacement, why string) (bool, error) {
	if rp.Step != kpool.StepStopped {
		s.logPool(ctx, slog.LevelWarn, "replacement stopped", "from", rp.From, "to", rp.To, "step", rp.Step, "why", why)
	}
	rp.Step = kpool.StepStopped
	rp.Blocking = appendOnce(rp.Blocking, why)
	return s.stopped(ctx, rp)
}

// stopped reports a stopped replacement until a rollback or a new spec.
func (s *poolScope) stopped(ctx context.Context, rp *kpool.Replacement) (bool, error) {
	msg := rp.Message
	if len(rp.Blocking) > 0 {
		msg = strings.Join(rp.Blocking, "; ")
	}
	s.rp.set(kpool.ConditionDegraded, kpool.ConditionTrue, ReasonReplacementStopped, msg)
	return false, s.record(ctx, rp, ReasonReplacementStopped, msg)
}

// readyNodes counts a provider pool's Ready nodes in Kubernetes.
func (s *poolScope) readyNodes(providerName string) int {
	n := 0
	for _, node := range s.nodes[providerName] {
		if kubeapi.Ready(node) {
			n++
		}
	}
	return n
}

func appendOnce(list []string, v string) []string {
	if slices.Contains(list, v) {
		return list
	}
	return append(list, v)
}

func orText(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

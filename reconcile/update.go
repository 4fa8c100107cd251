package reconcile

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// update brings a pool that exists at the provider to its spec: it waits
// for an operation that runs, corrects what differs and can change in
// place, repairs a failed pool, marks an unmarked one as this pool's, and
// reports Ready once the provider has the spec.
func (s *poolScope) update(ctx context.Context) (bool, error) {
	obs := s.obs
	if unread(obs) {
		// The provider's answer for this pool failed this time (the list
		// itself did not): the last report stands, and the pool is read
		// again soon.
		return true, nil
	}
	if s.busy(ctx) {
		return true, nil
	}
	failed := obs.State == provider.StateFailed
	if failed {
		why := "the provider's last operation on the pool failed"
		if obs.Message != "" {
			why += ": " + obs.Message
		}
		s.rp.meta.LastError = why
	}
	ch := s.changes()
	s.logChanges(ctx, ch, failed)
	if s.rp.meta.Shortage != nil && len(ch.fixable) == 0 && !ch.mark {
		return s.short(ctx, ch, failed)
	}
	if !failed && s.replaceWanted(ch.stuck) {
		return s.startReplacement(ctx, ch.stuck)
	}
	if !failed && len(ch.fixable) == 0 && s.cycleWanted() {
		return s.cycle(ctx)
	}
	if nr, ok := s.scaleDownWanted(); ok && !failed && !ch.fighting {
		return s.scaleDown(ctx, nr)
	}
	if sd := s.rp.meta.ScaleDown; sd != nil && obs.Count <= s.desired.Count {
		s.rp.meta.ScaleDown = nil // done
	}
	if ch.fighting && !failed && !ch.mark {
		s.fought()
		return s.settled(ctx, ch.stuck)
	}
	if len(ch.fixable) > 0 || failed || ch.mark {
		if s.skipRetry() {
			return false, nil
		}
		return s.apply(ctx, ch, failed)
	}
	return s.settled(ctx, ch.stuck)
}

// unread reports whether the provider listed a pool without reading it
// (its own answer failed this time): nothing about it is known, its mark
// included, so nothing is done to it.
func unread(obs *provider.Pool) bool {
	return obs != nil && obs.State == provider.StateUnknown && obs.ProviderState == ""
}

// busy reports, and says so, whether the pool is in an operation (or a
// state kpool does not know, which may be one): changes wait for it.
func (s *poolScope) busy(ctx context.Context) bool {
	obs := s.obs
	switch obs.State {
	case provider.StateCreating, provider.StateUpdating, provider.StateDeleting:
		s.rp.set(kpool.ConditionReady, kpool.ConditionFalse, string(obs.State), obs.ProviderState+" at "+string(s.cl.Spec.Platform.Type))
		s.rp.set(kpool.ConditionProgressing, kpool.ConditionTrue, string(obs.State), "")
	case provider.StateReady, provider.StateFailed:
		return false
	default:
		// A state kpool does not know may be an operation: the pool is
		// waited on, never written to, until it is one kpool knows.
		msg := fmt.Sprintf("the provider reports state %q, which kpool does not know; waiting for it to end", obs.ProviderState)
		s.rp.set(kpool.ConditionReady, kpool.ConditionFalse, ReasonUnknownState, msg)
		s.rp.set(kpool.ConditionProgressing, kpool.ConditionTrue, ReasonUnknownState, "")
	}
	s.send(ctx)
	return true
}

// apply sends the update that brings the pool to its spec: what can
// change in place, a repair of a failed pool, this pool's mark on an
// unmarked one.
func (s *poolScope) apply(ctx context.Context, ch changes, failed bool) (bool, error) {
	start := s.c.cfg.Clock.Now()
	_, err := s.d.NodePoolUpdate(ctx, s.cl, s.desired)
	s.called(ctx, "update", updateWhy(ch, failed), start, err)
	switch {
	case err == nil && failed:
		// Sent again to repair the pool; a pool that keeps failing is
		// repaired with the pool's backoff, not at every pass.
		s.rp.gen = s.p.Generation
		msg := s.rp.meta.LastError + "; repairing it"
		s.rp.set(kpool.ConditionReady, kpool.ConditionFalse, ReasonRepairingFailed, msg)
		s.rp.set(kpool.ConditionProgressing, kpool.ConditionTrue, ReasonRepairingFailed, "")
		s.send(ctx)
		return true, &provider.Error{Kind: provider.KindTransient, Provider: s.cl.Spec.Platform.Type, Reason: msg}
	case err == nil:
		s.rp.gen = s.p.Generation
		s.rp.meta.Shortage = nil // asked anew: the next look says whether it is still short
		why, msg := ReasonUpdating, join(ch.fixable)
		switch {
		case ch.drifted:
			why = ReasonCorrectingDrift
			s.rp.meta.DriftCorrections++
			s.rp.meta.DriftCorrectedAt = ptr(s.c.cfg.Clock.Now().UTC())
		case len(ch.fixable) == 0:
			why, msg = ReasonMarking, markMessage(s.desired.Owner)
		}
		s.rp.set(kpool.ConditionReady, kpool.ConditionFalse, why, msg)
		s.rp.set(kpool.ConditionProgressing, kpool.ConditionTrue, why, "")
		s.send(ctx)
		return true, nil
	case provider.IsForeign(err):
		// Marked by another owner since the list: the next pass reports it.
		return true, nil
	case s.refused(ctx, err):
		return false, nil
	}
	return s.retry(ctx, err)
}

// settled reports a pool nothing is to be sent for: Ready once the
// provider has this generation's spec, or why not.
func (s *poolScope) settled(ctx context.Context, stuck []provider.Difference) (bool, error) {
	obs := s.obs
	if obs.State != provider.StateReady {
		s.rp.set(kpool.ConditionReady, kpool.ConditionFalse, string(obs.State), obs.ProviderState)
		s.rp.set(kpool.ConditionProgressing, kpool.ConditionTrue, string(obs.State), "")
		s.send(ctx)
		return true, nil
	}
	// The provider has this generation's spec.
	s.rp.gen = s.p.Generation
	if len(stuck) > 0 {
		if s.prev == nil || s.prev.Reason(kpool.ConditionReady) != ReasonNeedsReplacement {
			s.logPool(ctx, slog.LevelWarn, "pool differs at the provider in what cannot change in place: not correctable; it needs a new pool",
				"fields", join(stuck))
		}
		reason, msg := ReasonNeedsReplacement, s.rp.meta.LastError
		if rp := s.rp.meta.Replacement; rp != nil && rp.Step == kpool.StepRolledBack && rp.Generation == s.p.Generation {
			reason, msg = ReasonRolledBack, rp.Message
		}
		s.rp.set(kpool.ConditionReady, kpool.ConditionFalse, reason, msg)
		s.rp.set(kpool.ConditionProgressing, kpool.ConditionFalse, reason, "")
		s.send(ctx)
		return false, nil
	}
	s.rp.set(kpool.ConditionReady, kpool.ConditionTrue, ReasonNodesReady, fmt.Sprintf("%d of %d nodes ready", obs.ReadyNodes, obs.Count))
	s.rp.set(kpool.ConditionProgressing, kpool.ConditionFalse, ReasonReady, "")
	s.finished(ctx) // before the report replaces the last one it reads; the cloud's operation is over
	if !s.kubeReady(obs.ReadyNodes) {
		s.send(ctx)
		return true, nil
	}
	s.send(ctx)
	s.readied(s.p)
	return false, nil
}

// updateWhy says what an update is sent for, for its log line.
func updateWhy(ch changes, failed bool) string {
	switch {
	case failed:
		return "repair: the provider's last operation failed"
	case ch.drifted:
		return "drift correction: " + join(ch.fixable)
	case len(ch.fixable) == 0:
		return "owner's mark"
	}
	return "new spec: " + join(ch.fixable)
}

// logChanges says what a pass found at the provider that it did not
// expect, once each: an operation that failed there, a drift (changed
// behind kpool's back), correctable in place or not.
func (s *poolScope) logChanges(ctx context.Context, ch changes, failed bool) {
	if failed && !s.skipRetry() { // said again at each repair, not while none is tried
		op := "operation"
		if s.prev != nil {
			op = cmp.Or(operationOf(s.prev.Reason(kpool.ConditionReady)), op)
		}
		s.logPool(ctx, slog.LevelWarn, "operation failed at the provider", "operation", op,
			"provider_state", s.obs.ProviderState, "error", s.obs.Message)
	}
	if ch.drifted && (s.prev == nil || s.prev.Reason(kpool.ConditionDrifted) != ReasonChangedAtProvider) && !ch.fighting {
		s.logPool(ctx, slog.LevelInfo, "drift found: changed at the provider behind kpool's back",
			"fields", join(append(append([]provider.Difference(nil), ch.fixable...), ch.stuck...)),
			"correctable", len(ch.stuck) == 0)
	}
}

package reconcile

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// deleting deletes a pool at the provider (unless its policy abandons it)
// and reports Deleted=True once nothing is left, so that the record goes.
func (s *poolScope) deleting(ctx context.Context) (bool, error) {
	p, obs := s.p, s.obs
	switch {
	case p.Spec.DeletionPolicy == kpool.DeletionAbandon || p.Spec.Observed():
		s.rp.set(kpool.ConditionDeleted, kpool.ConditionTrue, ReasonAbandoned, "the pool is left at the provider")
		s.send(ctx)
		s.logPool(ctx, slog.LevelInfo, "pool deleted in kpool and left at the provider", "operation", "abandon")
		return false, nil
	case unread(obs):
		// Whose it is cannot be told this time: it is read again soon,
		// and deleted only once it is known to be this pool.
		return true, nil
	case obs == nil:
		if wait := s.createInFlight(); wait > 0 {
			// A create sent lately may still reach the provider: the
			// record stays until it would have, so that its pool is seen
			// and deleted rather than left behind.
			msg := fmt.Sprintf("waiting %v for a create sent at %s to settle before the pool is known gone", wait.Round(time.Second), s.cl.Spec.Platform.Type)
			s.rp.meta.CreateSentAt, s.rp.meta.Exists = s.last().CreateSentAt, nil
			s.rp.set(kpool.ConditionDeleted, kpool.ConditionFalse, ReasonDeleting, msg)
			s.rp.set(kpool.ConditionProgressing, kpool.ConditionTrue, ReasonDeleting, "")
			s.send(ctx)
			return true, nil
		}
		s.rp.set(kpool.ConditionDeleted, kpool.ConditionTrue, ReasonDeletedAtProvider, "")
		s.send(ctx)
		s.gone(ctx)
		return false, nil
	case obs.State != provider.StateDeleting:
		if s.drainFirst(ctx) {
			return true, nil
		}
		start := s.c.cfg.Clock.Now()
		err := s.d.NodePoolDelete(ctx, s.cl, p.ProviderName)
		s.called(ctx, "delete", "", start, err)
		if err != nil {
			if s.refused(ctx, err) {
				return false, nil
			}
			return s.retry(ctx, err)
		}
	}
	s.rp.set(kpool.ConditionDeleted, kpool.ConditionFalse, ReasonDeleting, "deleting "+p.ProviderName+" at "+string(s.cl.Spec.Platform.Type))
	s.rp.set(kpool.ConditionProgressing, kpool.ConditionTrue, ReasonDeleting, "")
	s.send(ctx)
	return true, nil
}

// createInFlight returns how much longer a create this controller sent may
// still be on its way to the provider (0: none is): a call lasts at most
// CallTimeout.
func (s *poolScope) createInFlight() time.Duration {
	if s.prev == nil {
		return 0
	}
	at := s.last().CreateSentAt
	if at == nil {
		return 0
	}
	return max(0, at.Add(s.c.cfg.CallTimeout).Sub(s.c.cfg.Clock.Now()))
}

// gone logs that nothing of a pool being deleted is left at the provider,
// with how long since its delete was taken (when this process sent it).
func (s *poolScope) gone(ctx context.Context) {
	s.logPool(ctx, slog.LevelInfo, "operation finished: nothing of the pool is left at the provider", s.took("operation", "delete")...)
}

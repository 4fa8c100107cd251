package reconcile

import (
	"context"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// create creates a pool at the provider. The intent is reported first,
// and the create is sent only once that report is stored: a pool someone
// has reported on goes through Deleting when deleted, so a create that may
// have been sent is always followed by a delete at the provider. A pool
// deleted before the report finds the report refused, and nothing is sent.
func (s *poolScope) create(ctx context.Context) (bool, error) {
	if s.skipRetry() {
		return false, nil
	}
	msg := "creating " + s.desired.ProviderName + " at " + string(s.cl.Spec.Platform.Type)
	why, op, because := ReasonCreating, "create", ""
	if s.deletedBehind() {
		// It existed, and kpool did not delete it: someone did at the
		// provider. Said in the report (and so in the events) and the log.
		why, op, because = ReasonRecreating, "re-create", "deleted at the provider behind kpool's back"
		msg = s.desired.ProviderName + " was deleted at " + string(s.cl.Spec.Platform.Type) + " behind kpool's back; re-creating it"
		s.rp.set(kpool.ConditionDrifted, kpool.ConditionTrue, ReasonDeletedAtProvider, msg)
	}
	s.rp.meta.Exists = nil // not known from here until it is listed
	s.rp.meta.CreateSentAt = ptr(s.c.cfg.Clock.Now().UTC())
	s.rp.set(kpool.ConditionReady, kpool.ConditionFalse, why, msg)
	s.rp.set(kpool.ConditionProgressing, kpool.ConditionTrue, why, "")
	claim := s.rp.clone()
	if err := s.post(ctx, &claim); err != nil {
		if kpool.IsNotFound(err) {
			return false, nil // deleted meanwhile: nothing was sent
		}
		return true, err
	}
	start := s.c.cfg.Clock.Now()
	created, err := s.d.NodePoolCreate(ctx, s.cl, s.desired)
	s.called(ctx, op, because, start, err)
	switch {
	case err == nil:
		s.rp.gen = s.p.Generation
		s.rp.meta.ProvisioningState, s.rp.meta.Exists = created.ProviderState, ptr(true)
		s.send(ctx)
		return true, nil
	case provider.IsAlreadyExists(err), provider.IsForeign(err):
		// It appeared since the list: the next pass updates it, or, when
		// another owner marked it, reports it foreign. Never adopted here.
		return true, nil
	case provider.IsNotImplemented(err) || provider.IsValidation(err):
		// Refused: nothing was made, so nothing waits to be deleted.
		s.rp.meta.Exists, s.rp.meta.CreateSentAt = ptr(false), nil
		s.refused(ctx, err)
		return false, nil
	}
	return s.retry(ctx, err)
}

// deletedBehind reports whether the pool the provider no longer lists is
// one it had: the last report saw it there, after its create had settled.
func (s *poolScope) deletedBehind() bool {
	if s.prev == nil {
		return false
	}
	m := s.last()
	r := s.prev.Reason(kpool.ConditionReady)
	return m.Exists != nil && *m.Exists && r != ReasonCreating && r != ReasonRecreating
}

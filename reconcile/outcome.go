package reconcile

import (
	"context"
	"errors"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// refused handles a provider's answer that no retry of this generation can
// change: a capability boundary or a validation error. The generation is
// remembered, so the call is not repeated until the spec changes.
func (s *poolScope) refused(ctx context.Context, err error) bool {
	var reason string
	switch {
	case provider.IsNotImplemented(err):
		reason = ReasonNotImplemented
		s.rp.set(kpool.ConditionSupported, kpool.ConditionFalse, reason, err.Error())
	case provider.IsValidation(err):
		reason = ReasonProviderRefused
	default:
		return false
	}
	s.rp.meta.FailedGeneration = s.p.Generation
	s.failed(ctx, reason, err.Error())
	return true
}

// failed reports a pool that cannot progress without a person. The report
// is about the current generation: the controller has processed it and
// found it cannot be done (Ready is never True for a generation not applied).
func (s *poolScope) failed(ctx context.Context, reason, msg string) {
	*s.result = ResultPoolFailed
	s.rp.gen = s.p.Generation
	s.rp.meta.LastError = msg
	s.rp.set(kpool.ConditionReady, kpool.ConditionFalse, reason, msg)
	s.rp.set(kpool.ConditionProgressing, kpool.ConditionFalse, reason, "")
	s.send(ctx)
}

// failAll reports a cluster-wide refusal on a pool. It returns the error
// of reading the pool's last report.
func (r *clusterRun) failAll(ctx context.Context, p *kpool.NodePool, err error) error {
	s, rerr := r.scope(ctx, p, nil)
	if rerr != nil {
		return rerr
	}
	reason := ReasonProviderError
	if provider.IsNotImplemented(err) {
		reason = ReasonNotImplemented
		s.rp.set(kpool.ConditionSupported, kpool.ConditionFalse, reason, err.Error())
	}
	if p.Deleting() && provider.IsNotImplemented(err) {
		// Nothing exists at a provider without pools: the record can go.
		s.rp.set(kpool.ConditionDeleted, kpool.ConditionTrue, reason, "nothing to delete at the provider")
	}
	s.failed(ctx, reason, err.Error())
	return nil
}

// skipRetry reports whether this generation already failed for good.
func (s *poolScope) skipRetry() bool {
	return s.prev != nil && s.last().FailedGeneration == s.p.Generation
}

// retry records a retryable error and keeps the pool's last report otherwise.
func (s *poolScope) retry(ctx context.Context, err error) (bool, error) {
	if provider.IsQuota(err) {
		return s.overQuota(ctx, err)
	}
	if provider.IsCapacity(err) {
		s.refusedCapacity(err)
		return s.overQuota(ctx, err)
	}
	s.rp.meta.LastError = err.Error()
	s.rp.set(kpool.ConditionReady, kpool.ConditionFalse, ReasonRetrying, err.Error())
	s.rp.set(kpool.ConditionProgressing, kpool.ConditionTrue, ReasonRetrying, "")
	s.send(ctx)
	return true, err
}

// overQuota reports a call the provider refused for a quota or limit: the
// pool does not progress (Ready and Progressing False, QuotaExceeded), and
// the same call is tried again no sooner than ResyncSlow, as raising a
// quota or freeing capacity is up to a person. The report is about this
// generation (it was processed, and cannot be done now), but the spec is
// not at fault, so the generation is not marked refused.
func (s *poolScope) overQuota(ctx context.Context, err error) (bool, error) {
	s.rp.gen = s.p.Generation
	s.rp.meta.LastError = err.Error()
	reason := ReasonQuotaExceeded
	if provider.IsCapacity(err) {
		reason = ReasonInsufficientCapacity
	}
	s.rp.set(kpool.ConditionReady, kpool.ConditionFalse, reason, err.Error())
	s.rp.set(kpool.ConditionProgressing, kpool.ConditionFalse, reason, "")
	s.send(ctx)
	var e *provider.Error
	if errors.As(err, &e) {
		wait := *e
		wait.RetryAfter = max(e.RetryAfter, s.c.cfg.ResyncSlow)
		return true, &wait
	}
	return true, err
}

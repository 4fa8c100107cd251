package reconcile

import (
	"context"
	"encoding/json"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// refused handles a provider's answer that no retry of this generation can
// change: a capability boundary or a validation error. The generation is
// remembered, so the call is not repeated until the spec changes.
func (r *clusterRun) refused(ctx context.Context, p *kpool.NodePool, prev *kpool.ControllerStatus, rp *report, err error) bool {
	var reason string
	switch {
	case provider.IsNotImplemented(err):
		reason = "NotImplemented"
		rp.set(kpool.ConditionSupported, kpool.ConditionFalse, reason, err.Error())
	case provider.IsValidation(err):
		reason = "ProviderRefused"
	default:
		return false
	}
	rp.meta["failed_generation"] = p.Generation
	r.failed(ctx, p, prev, rp, reason, err.Error())
	return true
}

// failed reports a pool that cannot progress without a person. The report
// is about the current generation: the controller has processed it and
// found it cannot be done (Ready is never True for a generation not applied).
func (r *clusterRun) failed(ctx context.Context, p *kpool.NodePool, prev *kpool.ControllerStatus, rp *report, reason, msg string) {
	rp.gen = p.Generation
	rp.meta["last_error"] = msg
	rp.set(kpool.ConditionReady, kpool.ConditionFalse, reason, msg)
	rp.set(kpool.ConditionProgressing, kpool.ConditionFalse, reason, "")
	r.send(ctx, p, prev, rp)
}

// failAll reports a cluster-wide refusal on a pool. It returns the error
// of reading the pool's last report.
func (r *clusterRun) failAll(ctx context.Context, p *kpool.NodePool, err error) error {
	prev, rerr := r.previous(ctx, p.ID)
	if rerr != nil {
		return rerr
	}
	rp := &report{meta: map[string]any{"provider_name": p.ProviderName, "platform": string(r.cl.Spec.Platform.Type)}}
	if prev != nil {
		rp.gen = prev.ObservedGeneration
	}
	reason := "ProviderError"
	if provider.IsNotImplemented(err) {
		reason = "NotImplemented"
		rp.set(kpool.ConditionSupported, kpool.ConditionFalse, reason, err.Error())
	}
	if p.Deleting() && provider.IsNotImplemented(err) {
		// Nothing exists at a provider without pools: the record can go.
		rp.set(kpool.ConditionDeleted, kpool.ConditionTrue, reason, "nothing to delete at the provider")
	}
	r.failed(ctx, p, prev, rp, reason, err.Error())
	return nil
}

// skipRetry reports whether this generation already failed for good.
func skipRetry(p *kpool.NodePool, prev *kpool.ControllerStatus) bool {
	if prev == nil {
		return false
	}
	var m struct {
		FailedGeneration int64 `json:"failed_generation"`
	}
	return json.Unmarshal(prev.Metadata, &m) == nil && m.FailedGeneration == p.Generation
}

// retry records a retryable error and keeps the pool's last report otherwise.
func (r *clusterRun) retry(ctx context.Context, p *kpool.NodePool, prev *kpool.ControllerStatus, rp *report, err error) (bool, error) {
	rp.meta["last_error"] = err.Error()
	rp.set(kpool.ConditionReady, kpool.ConditionFalse, "Retrying", err.Error())
	rp.set(kpool.ConditionProgressing, kpool.ConditionTrue, "Retrying", "")
	r.send(ctx, p, prev, rp)
	return true, err
}

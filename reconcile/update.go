package reconcile

import (
	"context"
	"fmt"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// update brings a pool that exists at the provider to its spec: it waits
// for an operation that runs, corrects what differs and can change in
// place, repairs a failed pool, marks an unmarked one as this pool's, and
// reports Ready once the provider has the spec.
func (r *clusterRun) update(ctx context.Context, p *kpool.NodePool, prev *kpool.ControllerStatus, rp *report, desired provider.PoolSpec, obs *provider.Pool) (bool, error) {
	if unread(obs) {
		// The provider's answer for this pool failed this time (the list
		// itself did not): the last report stands, and the pool is read
		// again soon.
		return true, nil
	}
	if r.busy(ctx, p, prev, rp, obs) {
		return true, nil
	}
	failed := obs.State == provider.StateFailed
	if failed {
		why := "the provider's last operation on the pool failed"
		if obs.Message != "" {
			why += ": " + obs.Message
		}
		rp.meta["last_error"] = why
	}
	ch := r.changes(rp, p, desired, obs)
	if len(ch.fixable) > 0 || failed || ch.mark {
		if skipRetry(p, prev) {
			return false, nil
		}
		return r.apply(ctx, p, prev, rp, desired, ch, failed)
	}
	return r.settled(ctx, p, prev, rp, obs, ch.stuck)
}

// unread reports whether the provider listed a pool without reading it
// (its own answer failed this time): nothing about it is known, its mark
// included, so nothing is done to it.
func unread(obs *provider.Pool) bool {
	return obs != nil && obs.State == provider.StateUnknown && obs.ProviderState == ""
}

// busy reports, and says so, whether the pool is in an operation (or a
// state kpool does not know, which may be one): changes wait for it.
func (r *clusterRun) busy(ctx context.Context, p *kpool.NodePool, prev *kpool.ControllerStatus, rp *report, obs *provider.Pool) bool {
	switch obs.State {
	case provider.StateCreating, provider.StateUpdating, provider.StateDeleting:
		rp.set(kpool.ConditionReady, kpool.ConditionFalse, string(obs.State), obs.ProviderState+" at "+string(r.cl.Spec.Platform.Type))
		rp.set(kpool.ConditionProgressing, kpool.ConditionTrue, string(obs.State), "")
	case provider.StateReady, provider.StateFailed:
		return false
	default:
		// A state kpool does not know may be an operation: the pool is
		// waited on, never written to, until it is one kpool knows.
		msg := fmt.Sprintf("the provider reports state %q, which kpool does not know; waiting for it to end", obs.ProviderState)
		rp.set(kpool.ConditionReady, kpool.ConditionFalse, "UnknownState", msg)
		rp.set(kpool.ConditionProgressing, kpool.ConditionTrue, "UnknownState", "")
	}
	r.send(ctx, p, prev, rp)
	return true
}

// changes is what separates a pool at the provider from its spec.
type changes struct {
	fixable, stuck []provider.Difference // in place, or only by a new pool
	drifted        bool                  // changed behind kpool's back (not by a new spec)
	mark           bool                  // the pool lacks this pool's owner's mark
}

// changes compares the pool with the spec and reports Drifted and, for
// what cannot change in place, Degraded.
func (r *clusterRun) changes(rp *report, p *kpool.NodePool, desired provider.PoolSpec, obs *provider.Pool) changes {
	var ch changes
	diffs := provider.Compare(r.prof, desired, obs)
	caps := r.prof.Capabilities()
	for _, d := range diffs {
		if caps.Correctable(d.Field) {
			ch.fixable = append(ch.fixable, d)
		} else {
			ch.stuck = append(ch.stuck, d)
		}
	}
	ch.drifted = rp.gen >= p.Generation && len(diffs) > 0
	if ch.drifted {
		rp.set(kpool.ConditionDrifted, kpool.ConditionTrue, "ChangedAtProvider", join(diffs))
	} else {
		rp.set(kpool.ConditionDrifted, kpool.ConditionFalse, "", "")
	}
	if len(ch.stuck) > 0 {
		msg := "differs at the provider and cannot change in place (create a new pool): " + join(ch.stuck)
		rp.meta["last_error"] = msg
		rp.set(kpool.ConditionDegraded, kpool.ConditionTrue, "NeedsReplacement", msg)
	}
	ch.mark = needsMark(desired, obs)
	return ch
}

// apply sends the update that brings the pool to its spec: what can
// change in place, a repair of a failed pool, this pool's mark on an
// unmarked one.
func (r *clusterRun) apply(ctx context.Context, p *kpool.NodePool, prev *kpool.ControllerStatus, rp *report, desired provider.PoolSpec, ch changes, failed bool) (bool, error) {
	_, err := r.d.NodePoolUpdate(ctx, r.cl, desired)
	switch {
	case err == nil && failed:
		// Sent again to repair the pool; a pool that keeps failing is
		// repaired with the pool's backoff, not at every pass.
		rp.gen = p.Generation
		msg := rp.meta["last_error"].(string) + "; repairing it"
		rp.set(kpool.ConditionReady, kpool.ConditionFalse, "RepairingFailed", msg)
		rp.set(kpool.ConditionProgressing, kpool.ConditionTrue, "RepairingFailed", "")
		r.send(ctx, p, prev, rp)
		return true, &provider.Error{Kind: provider.KindTransient, Provider: r.cl.Spec.Platform.Type, Reason: msg}
	case err == nil:
		rp.gen = p.Generation
		why, msg := "Updating", join(ch.fixable)
		switch {
		case ch.drifted:
			why = "CorrectingDrift"
		case len(ch.fixable) == 0:
			why, msg = "Marking", markMessage(desired.Owner)
		}
		rp.set(kpool.ConditionReady, kpool.ConditionFalse, why, msg)
		rp.set(kpool.ConditionProgressing, kpool.ConditionTrue, why, "")
		r.send(ctx, p, prev, rp)
		return true, nil
	case provider.IsForeign(err):
		// Marked by another owner since the list: the next pass reports it.
		return true, nil
	case r.refused(ctx, p, prev, rp, err):
		return false, nil
	}
	return r.retry(ctx, p, prev, rp, err)
}

// settled reports a pool nothing is to be sent for: Ready once the
// provider has this generation's spec, or why not.
func (r *clusterRun) settled(ctx context.Context, p *kpool.NodePool, prev *kpool.ControllerStatus, rp *report, obs *provider.Pool, stuck []provider.Difference) (bool, error) {
	if obs.State != provider.StateReady {
		rp.set(kpool.ConditionReady, kpool.ConditionFalse, string(obs.State), obs.ProviderState)
		rp.set(kpool.ConditionProgressing, kpool.ConditionTrue, string(obs.State), "")
		r.send(ctx, p, prev, rp)
		return true, nil
	}
	// The provider has this generation's spec.
	rp.gen = p.Generation
	if len(stuck) > 0 {
		rp.set(kpool.ConditionReady, kpool.ConditionFalse, "NeedsReplacement", rp.meta["last_error"].(string))
		rp.set(kpool.ConditionProgressing, kpool.ConditionFalse, "NeedsReplacement", "")
		r.send(ctx, p, prev, rp)
		return false, nil
	}
	rp.set(kpool.ConditionReady, kpool.ConditionTrue, "NodesReady", fmt.Sprintf("%d of %d nodes ready", obs.ReadyNodes, obs.Count))
	rp.set(kpool.ConditionProgressing, kpool.ConditionFalse, "Ready", "")
	r.send(ctx, p, prev, rp)
	r.readied(p)
	return false, nil
}

// observe reports on a pool kpool does not manage; it never writes to the
// provider.
func (r *clusterRun) observe(ctx context.Context, p *kpool.NodePool, prev *kpool.ControllerStatus, rp *report, desired provider.PoolSpec, obs *provider.Pool) (bool, error) {
	rp.gen = p.Generation
	if obs == nil {
		r.failed(ctx, p, prev, rp, "NotFound", "no pool "+p.ProviderName+" at the provider (observe mode: kpool does not create it)")
		return false, nil
	}
	if !obs.Owner.IsZero() {
		rp.meta["owner"] = ownerMeta(obs.Owner)
	}
	diffs := provider.Compare(r.prof, desired, obs)
	rp.set(kpool.ConditionDrifted, yes(len(diffs) > 0), "Observed", join(diffs))
	ready := obs.State == provider.StateReady
	rp.set(kpool.ConditionReady, yes(ready), string(obs.State), obs.ProviderState)
	rp.set(kpool.ConditionProgressing, yes(!ready && obs.State != provider.StateFailed), string(obs.State), "")
	r.send(ctx, p, prev, rp)
	return !ready, nil
}

func join(ds []provider.Difference) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.String()
	}
	return strings.Join(parts, "; ")
}

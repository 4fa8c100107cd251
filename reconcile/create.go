package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// create creates a pool at the provider. The intent is reported first,
// and the create is sent only once that report is stored: a pool someone
// has reported on goes through Deleting when deleted, so a create that may
// have been sent is always followed by a delete at the provider. A pool
// deleted before the report finds the report refused, and nothing is sent.
func (r *clusterRun) create(ctx context.Context, p *kpool.NodePool, prev *kpool.ControllerStatus, rp *report, desired provider.PoolSpec) (bool, error) {
	if skipRetry(p, prev) {
		return false, nil
	}
	msg := "creating " + desired.ProviderName + " at " + string(r.cl.Spec.Platform.Type)
	delete(rp.meta, kpool.MetaExists) // not known from here until it is listed
	rp.meta["create_sent_at"] = r.c.cfg.Clock.Now().UTC().Format(time.RFC3339Nano)
	rp.set(kpool.ConditionReady, kpool.ConditionFalse, "Creating", msg)
	rp.set(kpool.ConditionProgressing, kpool.ConditionTrue, "Creating", "")
	claim := *rp
	claim.conditions = slices.Clone(rp.conditions)
	if err := r.send(ctx, p, prev, &claim); err != nil {
		if kpool.IsNotFound(err) {
			return false, nil // deleted meanwhile: nothing was sent
		}
		return true, err
	}
	created, err := r.d.NodePoolCreate(ctx, r.cl, desired)
	switch {
	case err == nil:
		rp.gen = p.Generation
		rp.meta["provisioning_state"] = created.ProviderState
		rp.meta[kpool.MetaExists] = true
		r.send(ctx, p, nil, rp)
		return true, nil
	case provider.IsAlreadyExists(err), provider.IsForeign(err):
		// It appeared since the list: the next pass updates it, or, when
		// another owner marked it, reports it foreign. Never adopted here.
		return true, nil
	case provider.IsNotImplemented(err) || provider.IsValidation(err):
		// Refused: nothing was made, so nothing waits to be deleted.
		rp.meta[kpool.MetaExists] = false
		delete(rp.meta, "create_sent_at")
		r.refused(ctx, p, prev, rp, err)
		return false, nil
	}
	return r.retry(ctx, p, prev, rp, err)
}

// deleting deletes a pool at the provider (unless its policy abandons it)
// and reports Deleted=True once nothing is left, so that the record goes.
func (r *clusterRun) deleting(ctx context.Context, p *kpool.NodePool, prev *kpool.ControllerStatus, rp *report, obs *provider.Pool) (bool, error) {
	switch {
	case p.Spec.DeletionPolicy == kpool.DeletionAbandon || p.Spec.Observed():
		rp.set(kpool.ConditionDeleted, kpool.ConditionTrue, "Abandoned", "the pool is left at the provider")
		r.send(ctx, p, prev, rp)
		return false, nil
	case unread(obs):
		// Whose it is cannot be told this time: it is read again soon,
		// and deleted only once it is known to be this pool.
		return true, nil
	case obs == nil:
		if wait := r.createInFlight(prev); wait > 0 {
			// A create sent lately may still reach the provider: the
			// record stays until it would have, so that its pool is seen
			// and deleted rather than left behind.
			msg := fmt.Sprintf("waiting %v for a create sent at %s to settle before the pool is known gone", wait.Round(time.Second), r.cl.Spec.Platform.Type)
			rp.meta["create_sent_at"] = metaString(prev, "create_sent_at")
			delete(rp.meta, kpool.MetaExists)
			rp.set(kpool.ConditionDeleted, kpool.ConditionFalse, "Deleting", msg)
			rp.set(kpool.ConditionProgressing, kpool.ConditionTrue, "Deleting", "")
			r.send(ctx, p, prev, rp)
			return true, nil
		}
		rp.set(kpool.ConditionDeleted, kpool.ConditionTrue, "DeletedAtProvider", "")
		r.send(ctx, p, prev, rp)
		return false, nil
	case obs.State != provider.StateDeleting:
		if err := r.d.NodePoolDelete(ctx, r.cl, p.ProviderName); err != nil {
			if r.refused(ctx, p, prev, rp, err) {
				return false, nil
			}
			return r.retry(ctx, p, prev, rp, err)
		}
	}
	rp.set(kpool.ConditionDeleted, kpool.ConditionFalse, "Deleting", "deleting "+p.ProviderName+" at "+string(r.cl.Spec.Platform.Type))
	rp.set(kpool.ConditionProgressing, kpool.ConditionTrue, "Deleting", "")
	r.send(ctx, p, prev, rp)
	return true, nil
}

// createInFlight returns how much longer a create this controller sent may
// still be on its way to the provider (0: none is): a call lasts at most
// CallTimeout.
func (r *clusterRun) createInFlight(prev *kpool.ControllerStatus) time.Duration {
	at, err := time.Parse(time.RFC3339Nano, metaString(prev, "create_sent_at"))
	if err != nil {
		return 0
	}
	return max(0, at.Add(r.c.cfg.CallTimeout).Sub(r.c.cfg.Clock.Now()))
}

// metaString returns a string of a report's metadata ("" when absent).
func metaString(cs *kpool.ControllerStatus, key string) string {
	if cs == nil {
		return ""
	}
	var m map[string]any
	_ = json.Unmarshal(cs.Metadata, &m)
	v, _ := m[key].(string)
	return v
}

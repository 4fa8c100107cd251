package reconcile

import (
	"context"
	"errors"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// listFailed handles a cluster whose list failed. A capability boundary
// fails every pool for good. A refusal (no credential, a disallowed
// endpoint, the identity refused, no such cluster) makes the cluster not
// Reachable and its pools wait for it, and the cluster is looked at again
// slowly, as fixing it is up to a person. An outage (5xx, a dropped
// connection) is retried with backoff, and once it has lasted
// UnreachableAfter it too makes the cluster not Reachable; a call that ran
// out of time (the endpoint hangs) does at once, so that a restarted
// process knows to keep the cluster in its slow lane. Throttling never
// does.
func (r *clusterRun) listFailed(ctx context.Context, pools []*kpool.NodePool, err error) (time.Duration, error) {
	c, st := r.c, r.st
	if provider.IsTimeout(err) {
		r.slowLane(ctx, err)
	}
	switch {
	case ctx.Err() != nil:
		return 0, err
	case provider.IsThrottled(err), errors.Is(err, errLaneBusy):
		return 0, err
	case provider.IsNotImplemented(err):
		*r.result = ResultPoolFailed
		for _, p := range pools {
			if err := r.failAll(ctx, p, err); err != nil {
				return 0, err
			}
		}
		c.prune(st, pools)
		return c.cfg.ResyncSlow, nil
	case provider.Retryable(err):
		now := c.cfg.Clock.Now()
		if st.failingSince.IsZero() {
			st.failingSince = now
		}
		if now.Sub(st.failingSince) >= c.cfg.UnreachableAfter || provider.IsTimeout(err) {
			if uerr := r.unreachable(ctx, pools, kpool.ReasonEndpointUnreachable, errorText(err)); uerr != nil {
				return 0, uerr
			}
		}
		return 0, err
	}
	if uerr := r.unreachable(ctx, pools, refusalReason(err), errorText(err)); uerr != nil {
		return 0, uerr
	}
	c.prune(st, pools)
	return c.cfg.ResyncSlow, nil
}

// refusalReason is the Reachable=False reason of a list the provider (or
// kpool's credentials, before any request) refused.
func refusalReason(err error) string {
	var e *provider.Error
	if !errors.As(err, &e) {
		return kpool.ReasonProviderError
	}
	switch {
	case e.Field == "spec.credential":
		return kpool.ReasonNoCredential
	case e.Field == "spec.endpoint":
		return kpool.ReasonEndpointNotAllowed
	case e.Kind == provider.KindPermissionDenied:
		return kpool.ReasonCredentialRefused
	case e.Kind == provider.KindNotFound:
		return kpool.ReasonClusterNotFound
	case e.Kind == provider.KindValidation:
		return kpool.ReasonInvalidCluster
	}
	return kpool.ReasonProviderError
}

// errorText is what a condition says of a driver error: the provider's
// reason, or the error itself.
func errorText(err error) string {
	var e *provider.Error
	if errors.As(err, &e) && e.Reason != "" {
		if e.Field != "" && e.Field != "spec.credential" {
			return e.Field + ": " + e.Reason
		}
		return e.Reason
	}
	return err.Error()
}

// reachable records that the cluster answered: Reachable=True, said in the
// log when it was not.
func (r *clusterRun) reachable(ctx context.Context) error {
	was := r.cl.Status.Unreachable()
	if cond := r.cl.Status.Condition(kpool.ConditionReachable); cond != nil && cond.Status == kpool.ConditionTrue {
		return nil
	}
	if err := r.setReachable(ctx, kpool.Condition{Type: kpool.ConditionReachable, Status: kpool.ConditionTrue, Reason: ReasonListed}); err != nil {
		return err
	}
	if was != "" {
		r.c.cfg.Log.Info("cluster reachable again", r.logAttrs()...)
	}
	return nil
}

// unreachable records that the cluster cannot be reached, and why: its
// Reachable condition, a log line when that changes, and a report on each
// pool, which waits for its cluster instead of failing on its own.
func (r *clusterRun) unreachable(ctx context.Context, pools []*kpool.NodePool, reason, msg string) error {
	*r.result = ResultUnreachable
	cond := kpool.Condition{Type: kpool.ConditionReachable, Status: kpool.ConditionFalse, Reason: reason, Message: msg}
	if old := r.cl.Status.Condition(kpool.ConditionReachable); old == nil || old.Status != cond.Status || old.Reason != reason || old.Message != msg {
		if err := r.setReachable(ctx, cond); err != nil {
			return err
		}
		r.c.cfg.Log.Warn("cluster unreachable", append(r.logAttrs(), "reason", reason, "message", msg, "pools", len(pools))...)
	}
	for _, p := range pools {
		if err := r.wait(ctx, p, "cluster "+r.cl.Name+" is not reachable: "+msg); err != nil {
			return err
		}
	}
	return nil
}

// setReachable writes the cluster's Reachable condition.
func (r *clusterRun) setReachable(ctx context.Context, cond kpool.Condition) error {
	ictx := kpool.WithIdentity(ctx, Identity)
	cl, err := r.c.cfg.Service.ReportClusterStatus(ictx, r.cl.ID, kpool.ClusterReport{Conditions: []kpool.Condition{cond}})
	if err != nil {
		if kpool.IsNotFound(err) {
			return nil // gone meanwhile
		}
		return err
	}
	r.cl = cl
	return nil
}

func (r *clusterRun) logAttrs() []any {
	return []any{"cluster", r.cl.Name, "cluster_id", r.cl.ID, "provider", r.cl.Spec.Platform.Type}
}

// wait reports a pool whose cluster cannot be reached: what was last
// reported of it stands (its generation, node counts, conditions), Ready
// is Unknown with ReasonClusterUnreachable, and a pool being deleted is
// not Deleted yet. It returns the error of reading the last report.
func (r *clusterRun) wait(ctx context.Context, p *kpool.NodePool, msg string) error {
	s, err := r.scope(ctx, p, nil)
	if err != nil {
		return err
	}
	if s.prev != nil {
		s.rp.conditions = append(s.rp.conditions, s.prev.Conditions...)
		s.rp.meta = s.last()
		s.rp.meta.ProviderName, s.rp.meta.Platform = p.ProviderName, string(r.cl.Spec.Platform.Type)
	}
	why := kpool.ReasonClusterUnreachable
	s.rp.set(kpool.ConditionReady, kpool.ConditionUnknown, why, msg)
	s.rp.set(kpool.ConditionProgressing, kpool.ConditionFalse, why, "")
	if p.Deleting() {
		s.rp.set(kpool.ConditionDeleted, kpool.ConditionFalse, why, msg)
	}
	s.send(ctx)
	return nil
}

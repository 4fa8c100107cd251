package reconcile

import (
	"context"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// Drift: what separates a pool at the provider from its spec, and the
// report on a pool kpool only observes.

// changes is what separates a pool at the provider from its spec.
type changes struct {
	fixable, stuck []provider.Difference // in place, or only by a new pool
	drifted        bool                  // changed behind kpool's back (not by a new spec)
	mark           bool                  // the pool lacks this pool's owner's mark
}

// changes compares the pool with the spec and reports Drifted and, for
// what cannot change in place, Degraded.
func (s *poolScope) changes() changes {
	var ch changes
	diffs := provider.Compare(s.prof, s.desired, s.obs)
	caps := s.prof.Capabilities()
	for _, d := range diffs {
		if caps.Correctable(d.Field) {
			ch.fixable = append(ch.fixable, d)
		} else {
			ch.stuck = append(ch.stuck, d)
		}
	}
	// A generation the provider took is drift when it differs again; one
	// it refused for a quota is still to be applied.
	ch.drifted = s.rp.gen >= s.p.Generation && len(diffs) > 0 && !s.wasOverQuota()
	if ch.drifted {
		s.rp.set(kpool.ConditionDrifted, kpool.ConditionTrue, ReasonChangedAtProvider, join(diffs))
	} else {
		s.rp.set(kpool.ConditionDrifted, kpool.ConditionFalse, "", "")
	}
	if len(ch.stuck) > 0 {
		msg := "differs at the provider and cannot change in place (create a new pool): " + join(ch.stuck)
		s.rp.meta.LastError = msg
		s.rp.set(kpool.ConditionDegraded, kpool.ConditionTrue, ReasonNeedsReplacement, msg)
	}
	ch.mark = needsMark(s.desired, s.obs)
	return ch
}

// observe reports on a pool kpool does not manage; it never writes to the
// provider.
func (s *poolScope) observe(ctx context.Context) (bool, error) {
	obs := s.obs
	s.rp.gen = s.p.Generation
	if obs == nil {
		s.failed(ctx, ReasonNotFound, "no pool "+s.p.ProviderName+" at the provider (observe mode: kpool does not create it)")
		return false, nil
	}
	if !obs.Owner.IsZero() {
		s.rp.meta.Owner = ownerMeta(obs.Owner)
	}
	diffs := provider.Compare(s.prof, s.desired, obs)
	s.rp.set(kpool.ConditionDrifted, yes(len(diffs) > 0), ReasonObserved, join(diffs))
	ready := obs.State == provider.StateReady
	s.rp.set(kpool.ConditionReady, yes(ready), string(obs.State), obs.ProviderState)
	s.rp.set(kpool.ConditionProgressing, yes(!ready && obs.State != provider.StateFailed), string(obs.State), "")
	s.send(ctx)
	return !ready, nil
}

func join(ds []provider.Difference) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.String()
	}
	return strings.Join(parts, "; ")
}

// wasOverQuota reports whether the last report said this generation was
// refused for a quota.
func (s *poolScope) wasOverQuota() bool {
	return s.prev != nil && s.prev.ObservedGeneration == s.p.Generation && s.prev.Reason(kpool.ConditionReady) == ReasonQuotaExceeded
}

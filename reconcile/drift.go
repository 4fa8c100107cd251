package reconcile

import (
	"context"
	"fmt"
	"strings"
	"time"

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
	// fighting: the provider undid the last corrections of this drift;
	// no more are sent until the spec or the drift changes.
	fighting bool
}

// maxDriftCorrections is how many corrections of the same drift are sent
// in a row, each undone by the provider within fightWindow of the last,
// before kpool stops and says so.
const (
	maxDriftCorrections = 3
	fightWindow         = 30 * time.Minute
)

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
	ch.fighting = s.countDrift(ch.drifted, diffs)
	switch {
	case ch.fighting:
		s.rp.set(kpool.ConditionDrifted, kpool.ConditionTrue, ReasonKeepsChanging, fmt.Sprintf(
			"%s: the provider keeps changing it; kpool stopped correcting it after %d tries (change the spec, or find what changes it at the provider)",
			join(diffs), s.rp.meta.DriftCorrections))
	case ch.drifted:
		s.rp.set(kpool.ConditionDrifted, kpool.ConditionTrue, ReasonChangedAtProvider, join(diffs))
	default:
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
	// An observed pool whose nodes the watch maps to none (OKE's label is
	// kpool's, on the pools it writes) is not taken for one without nodes.
	if ready && s.kube != nil && s.kube.Total > 0 && !s.kubeReady(obs.ReadyNodes) {
		ready = false
	}
	s.send(ctx)
	return !ready, nil
}

// countDrift keeps count of the corrections sent for the same drift (the
// same fields) at this generation, and reports whether they reached
// maxDriftCorrections. Until kpool stops, the count lapses once a
// correction has held for fightWindow; once it has stopped, it stands until
// the drift ends or moves to other fields. A new generation starts afresh
// (scope carries the count only within one).
func (s *poolScope) countDrift(drifted bool, diffs []provider.Difference) bool {
	m := &s.rp.meta
	stopped := s.prev != nil && s.prev.Reason(kpool.ConditionDrifted) == ReasonKeepsChanging
	held := m.DriftCorrectedAt != nil && s.c.cfg.Clock.Since(*m.DriftCorrectedAt) > fightWindow
	fields := make([]string, len(diffs))
	for i, d := range diffs {
		fields[i] = d.Path
	}
	f := strings.Join(fields, ",")
	if (stopped && !drifted) || (!stopped && held) || (drifted && f != m.DriftFields) {
		m.DriftFields, m.DriftCorrections, m.DriftCorrectedAt = "", 0, nil
	}
	if !drifted {
		return false
	}
	m.DriftFields = f
	return m.DriftCorrections >= maxDriftCorrections
}

// fought records that kpool stopped correcting a drift: counted once, when
// it stops, in the metric operators alert on.
func (s *poolScope) fought() {
	if s.prev == nil || s.prev.Reason(kpool.ConditionDrifted) != ReasonKeepsChanging {
		s.c.cfg.Metrics.DriftFights.WithLabelValues(string(s.cl.Spec.Platform.Type)).Inc()
		s.c.cfg.Log.Warn("the provider keeps undoing a drift correction; kpool stopped correcting it",
			append(s.logAttrs(), "pool", s.p.Name, "pool_id", s.p.ID, "fields", s.rp.meta.DriftFields)...)
	}
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

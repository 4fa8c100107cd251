package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// poolScope is one pass over one pool: the pool, what the provider
// reports of it, this controller's last report on it, and the report the
// pass builds. Each step of the pass reads and writes the scope instead of
// handing these along (as Cluster API's scopes do).
type poolScope struct {
	*clusterRun
	p    *kpool.NodePool
	obs  *provider.Pool          // nil: nothing of its provider name at the provider
	prev *kpool.ControllerStatus // the last report stored (nil: none yet)
	// lastMeta is prev's metadata, decoded when lastOf was prev (last).
	lastOf   *kpool.ControllerStatus
	lastMeta kpool.ReportMeta
	// desired is the spec at the provider, once it maps onto the profile.
	desired provider.PoolSpec
	rp      report // what this pass reports
	// kube is what the cluster's Kubernetes API says of the pool's nodes
	// (nil: not known this pass).
	kube *kpool.NodeCounts
}

// report is the status a pass found, before it is sent.
type report struct {
	gen        int64 // the generation applied
	conditions []kpool.Condition
	meta       kpool.ReportMeta
}

// set sets a condition of the report, replacing one of the same type.
func (rp *report) set(t, status, reason, msg string) {
	c := kpool.Condition{Type: t, Status: status, Reason: reason, Message: msg}
	for i := range rp.conditions {
		if rp.conditions[i].Type == t {
			rp.conditions[i] = c
			return
		}
	}
	rp.conditions = append(rp.conditions, c)
}

// clone returns a copy that a later set does not change.
func (rp *report) clone() report {
	c := *rp
	c.conditions = slices.Clone(rp.conditions)
	return c
}

// scope starts a pass over pool p: it reads this controller's last report
// on it, whose generation stands until the pass applies another. A store
// error is returned, never taken for "no report": that would forget a
// refused generation and send it to the provider again.
func (r *clusterRun) scope(ctx context.Context, p *kpool.NodePool, obs *provider.Pool) (*poolScope, error) {
	prev, err := r.previous(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	s := &poolScope{clusterRun: r, p: p, obs: obs, prev: prev}
	if prev != nil {
		s.rp.gen = prev.ObservedGeneration
	}
	s.rp.meta = kpool.ReportMeta{ProviderName: p.ProviderName, Platform: string(r.cl.Spec.Platform.Type)}
	m := s.last()
	s.rp.meta.CycledGeneration, s.rp.meta.ScaleDown = m.CycledGeneration, m.ScaleDown
	if prev != nil && prev.ObservedGeneration == p.Generation {
		// Corrections of a drift count across passes of one generation.
		s.rp.meta.DriftFields, s.rp.meta.DriftCorrections, s.rp.meta.DriftCorrectedAt = m.DriftFields, m.DriftCorrections, m.DriftCorrectedAt
	}
	return s, nil
}

// last is the metadata of this controller's last report (zero: none),
// decoded once per report: a pass reads it at many of its steps.
func (s *poolScope) last() kpool.ReportMeta {
	if s.prev == nil {
		return kpool.ReportMeta{}
	}
	if s.lastOf != s.prev {
		s.lastOf, s.lastMeta = s.prev, s.prev.Meta()
	}
	return s.lastMeta
}

// previous returns this controller's last report on a pool (nil: none yet).
func (r *clusterRun) previous(ctx context.Context, poolID string) (*kpool.ControllerStatus, error) {
	reports, err := r.c.store.ControllerStatuses(ctx, poolID)
	if err != nil {
		return nil, fmt.Errorf("reading the reports on pool %s: %w", poolID, err)
	}
	for i := range reports {
		if reports[i].ControllerName == r.name {
			return &reports[i], nil
		}
	}
	return nil, nil
}

// send reports the pass's status through the service.
func (s *poolScope) send(ctx context.Context) error { return s.post(ctx, &s.rp) }

// post reports rp through the service, unless it says what the last
// report said. Its error matters only to a caller that must not act unless
// the report is stored; the others leave it to the next pass.
func (s *poolScope) post(ctx context.Context, rp *report) error {
	for _, t := range []string{kpool.ConditionDegraded, kpool.ConditionDrifted, kpool.ConditionSupported} {
		if !has(rp.conditions, t) {
			status := kpool.ConditionFalse
			if t == kpool.ConditionSupported {
				status = kpool.ConditionTrue
			}
			rp.set(t, status, "", "")
		}
	}
	cs := kpool.ControllerStatus{ControllerName: s.name, ObservedGeneration: min(rp.gen, s.p.Generation),
		Conditions: rp.conditions, Metadata: rp.meta.Encode()}
	if s.prev != nil && sameReport(s.prev, &cs) {
		return nil
	}
	ictx := kpool.WithIdentity(ctx, Identity)
	_, err := s.c.cfg.Service.ReportNodePoolStatus(ictx, s.p.ID, cs)
	switch {
	case err == nil:
		s.prev = &cs // what the next post compares with
	case !kpool.IsNotFound(err) && ctx.Err() == nil:
		s.c.cfg.Log.Warn("status report", "pool", s.p.ID, "err", err)
	}
	return err
}

func has(cs []kpool.Condition, t string) bool {
	for _, c := range cs {
		if c.Type == t {
			return true
		}
	}
	return false
}

func sameReport(a, b *kpool.ControllerStatus) bool {
	if a.ObservedGeneration != b.ObservedGeneration || len(a.Conditions) != len(b.Conditions) {
		return false
	}
	for i := range a.Conditions {
		x, y := a.Conditions[i], b.Conditions[i]
		if x.Type != y.Type || x.Status != y.Status || x.Reason != y.Reason || x.Message != y.Message {
			return false
		}
	}
	var ma, mb any
	_ = json.Unmarshal(a.Metadata, &ma)
	_ = json.Unmarshal(b.Metadata, &mb)
	ja, _ := json.Marshal(ma)
	jb, _ := json.Marshal(mb)
	return string(ja) == string(jb)
}

func yes(b bool) string {
	if b {
		return kpool.ConditionTrue
	}
	return kpool.ConditionFalse
}

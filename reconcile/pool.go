package reconcile

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// clusterRun is one reconcile of one cluster.
type clusterRun struct {
	c    *Controller
	cl   *kpool.Cluster
	d    provider.Driver  // rate-limited and counted; provider.As finds its optional interfaces
	prof provider.Profile // the cluster's platform
	name string           // the controller's name
	st   *clusterState
}

// report is the status a pass found, before it is sent.
type report struct {
	gen        int64 // the generation applied
	conditions []kpool.Condition
	meta       map[string]any
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

func yes(b bool) string {
	if b {
		return kpool.ConditionTrue
	}
	return kpool.ConditionFalse
}

// pool reconciles one pool against what the provider reports of it
// (nil: nothing of that provider name). It reports whether the pool is not
// settled yet, and returns an error worth retrying.
func (r *clusterRun) pool(ctx context.Context, p *kpool.NodePool, obs *provider.Pool) (bool, error) {
	prev, err := r.previous(ctx, p.ID)
	if err != nil {
		// Without the last report the controller cannot know what it
		// already did (a refused generation): act on nothing, retry.
		return true, err
	}
	applied := int64(0)
	if prev != nil {
		applied = prev.ObservedGeneration
	}
	r.noteGeneration(p)
	rp := &report{gen: applied, meta: map[string]any{"provider_name": p.ProviderName, "platform": string(r.cl.Spec.Platform.Type)}}
	observeInto(rp, p, obs, prev)
	if obs != nil && r.prof.Capabilities().NewNodesOnly() {
		nodesCurrent(rp, obs, r.prof.Capabilities().Name)
	}

	desired, err := provider.Desired(r.prof, r.cl, p)
	if err != nil {
		r.failed(ctx, p, prev, rp, "InvalidSpec", err.Error())
		return false, nil
	}
	desired.Owner = r.mark(p)
	if r.foreign(p, obs) {
		return r.foreignPool(ctx, p, prev, obs)
	}

	switch {
	case p.Deleting():
		return r.deleting(ctx, p, prev, rp, obs)
	case p.Spec.Observed():
		return r.observe(ctx, p, prev, rp, desired, obs)
	case obs == nil:
		return r.create(ctx, p, prev, rp, desired)
	}
	return r.update(ctx, p, prev, rp, desired, obs)
}

// observeInto records what the provider reports in the status metadata.
// When the provider cannot say how many nodes are up (an operation runs),
// the last count known stays, capped at the new target: a scale from 3 to
// 5 shows 3 until it ends, never 0.
func observeInto(rp *report, p *kpool.NodePool, obs *provider.Pool, prev *kpool.ControllerStatus) {
	if obs == nil {
		rp.meta["provisioning_state"] = "NotFound"
		rp.meta[kpool.MetaExists] = false
		return
	}
	rp.meta[kpool.MetaExists] = true
	rp.meta["provisioning_state"] = obs.ProviderState
	if obs.State != provider.StateUnknown || obs.ProviderState != "" {
		// What the nodes carry, for placement (a pool not read this time
		// keeps its last report: see Pool).
		carried := map[string]string{}
		for _, k := range []string{provider.LabelPool, provider.LabelZone} {
			if v, ok := obs.Labels[k]; ok {
				carried[k] = v
			}
		}
		rp.meta[kpool.MetaNodeLabels] = carried
	}
	if obs.Message != "" {
		rp.meta["provider_message"] = obs.Message
	}
	active, byZone := obs.ReadyNodes, obs.NodesByZone
	if obs.ReadyUnknown {
		var last struct {
			Active *int           `json:"active_nodes"`
			ByZone map[string]int `json:"nodes_by_zone"`
		}
		if prev != nil {
			_ = json.Unmarshal(prev.Metadata, &last)
		}
		active, byZone = 0, nil
		if last.Active != nil {
			active = min(*last.Active, obs.Count)
			if *last.Active <= obs.Count {
				byZone = last.ByZone
			}
		}
	}
	rp.meta["active_nodes"] = active
	desired := p.Spec.Count()
	if p.Spec.Autoscaling.On() {
		desired = obs.Count // the autoscaler's
	}
	rp.meta["desired_nodes"] = desired
	if len(byZone) > 0 {
		rp.meta["nodes_by_zone"] = byZone
	}
	if len(obs.Problems) > 0 {
		rp.meta["label_problems"] = obs.Problems
	}
}

// nodesCurrent reports, for a provider that changes new nodes only, how
// many nodes still run an earlier configuration.
func nodesCurrent(rp *report, obs *provider.Pool, name string) {
	if obs.StaleNodes == 0 {
		rp.set(kpool.ConditionNodesCurrent, kpool.ConditionTrue, "AllNodesCurrent", "")
		return
	}
	rp.meta["stale_nodes"] = obs.StaleNodes
	rp.set(kpool.ConditionNodesCurrent, kpool.ConditionFalse, "NewNodesOnly", fmt.Sprintf(
		"%d of %d nodes still run an earlier configuration: %s applies changes to new nodes only; cycle the pool to replace them",
		obs.StaleNodes, obs.Nodes, name))
}

// previous returns this controller's last report on a pool (nil: none
// yet). A store error is returned, never taken for "no report": that
// would forget a refused generation and send it to the provider again.
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

// send reports the pool's status through the service, unless it says what
// the last report said. Its error matters only to a caller that must not
// act unless the report is stored; the others leave it to the next pass.
func (r *clusterRun) send(ctx context.Context, p *kpool.NodePool, prev *kpool.ControllerStatus, rp *report) error {
	for _, t := range []string{kpool.ConditionDegraded, kpool.ConditionDrifted, kpool.ConditionSupported} {
		if !has(rp.conditions, t) {
			status := kpool.ConditionFalse
			if t == kpool.ConditionSupported {
				status = kpool.ConditionTrue
			}
			rp.set(t, status, "", "")
		}
	}
	meta, _ := json.Marshal(rp.meta)
	cs := kpool.ControllerStatus{ControllerName: r.name, ObservedGeneration: min(rp.gen, p.Generation), Conditions: rp.conditions, Metadata: meta}
	if prev != nil && sameReport(prev, &cs) {
		return nil
	}
	ictx := kpool.WithIdentity(ctx, Identity)
	_, err := r.c.cfg.Service.ReportNodePoolStatus(ictx, p.ID, cs)
	if err != nil && !kpool.IsNotFound(err) && ctx.Err() == nil {
		r.c.cfg.Log.Warn("status report", "pool", p.ID, "err", err)
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

// noteGeneration remembers when a pool's generation was first seen, for
// the spec-to-Ready metric.
func (r *clusterRun) noteGeneration(p *kpool.NodePool) {
	if s, ok := r.st.seen[p.ID]; !ok || s.generation != p.Generation {
		r.st.seen[p.ID] = seenGeneration{generation: p.Generation, at: r.c.cfg.Clock.Now()}
	}
}

// readied records that a pool's generation reached Ready.
func (r *clusterRun) readied(p *kpool.NodePool) {
	if s, ok := r.st.seen[p.ID]; ok && s.generation == p.Generation && !s.at.IsZero() {
		r.c.cfg.Metrics.SpecToReady.Observe(r.c.cfg.Clock.Since(s.at).Seconds())
		r.st.seen[p.ID] = seenGeneration{generation: p.Generation}
	}
}

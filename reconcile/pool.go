package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

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
	case provider.IsAlreadyExists(err):
		return true, nil // it appeared since the list: the next pass updates it
	case provider.IsNotImplemented(err) || provider.IsValidation(err):
		// Refused: nothing was made, so nothing waits to be deleted.
		rp.meta[kpool.MetaExists] = false
		delete(rp.meta, "create_sent_at")
		r.refused(ctx, p, prev, rp, err)
		return false, nil
	}
	return r.retry(ctx, p, prev, rp, err)
}

func (r *clusterRun) update(ctx context.Context, p *kpool.NodePool, prev *kpool.ControllerStatus, rp *report, desired provider.PoolSpec, obs *provider.Pool) (bool, error) {
	if obs.State == provider.StateUnknown && obs.ProviderState == "" {
		// The provider's answer for this pool failed this time (the list
		// itself did not): the last report stands, and the pool is read
		// again soon.
		return true, nil
	}
	switch obs.State {
	case provider.StateCreating, provider.StateUpdating, provider.StateDeleting:
		// An operation is running; changes wait for it.
		rp.set(kpool.ConditionReady, kpool.ConditionFalse, string(obs.State), obs.ProviderState+" at "+string(r.cl.Spec.Platform.Type))
		rp.set(kpool.ConditionProgressing, kpool.ConditionTrue, string(obs.State), "")
		r.send(ctx, p, prev, rp)
		return true, nil
	case provider.StateReady, provider.StateFailed:
	default:
		// A state kpool does not know may be an operation: the pool is
		// waited on, never written to, until it is one kpool knows.
		msg := fmt.Sprintf("the provider reports state %q, which kpool does not know; waiting for it to end", obs.ProviderState)
		rp.set(kpool.ConditionReady, kpool.ConditionFalse, "UnknownState", msg)
		rp.set(kpool.ConditionProgressing, kpool.ConditionTrue, "UnknownState", "")
		r.send(ctx, p, prev, rp)
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
	diffs := provider.Compare(r.prof, desired, obs)
	caps := r.prof.Capabilities()
	var fixable, stuck []provider.Difference
	for _, d := range diffs {
		if caps.Correctable(d.Field) {
			fixable = append(fixable, d)
		} else {
			stuck = append(stuck, d)
		}
	}
	specChange := rp.gen < p.Generation
	drifted := !specChange && len(diffs) > 0
	if drifted {
		rp.set(kpool.ConditionDrifted, kpool.ConditionTrue, "ChangedAtProvider", join(diffs))
	} else {
		rp.set(kpool.ConditionDrifted, kpool.ConditionFalse, "", "")
	}
	if len(stuck) > 0 {
		msg := "differs at the provider and cannot change in place (create a new pool): " + join(stuck)
		rp.meta["last_error"] = msg
		rp.set(kpool.ConditionDegraded, kpool.ConditionTrue, "NeedsReplacement", msg)
	}
	if len(fixable) > 0 || failed {
		if skipRetry(p, prev) {
			return false, nil
		}
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
			why := "Updating"
			if drifted {
				why = "CorrectingDrift"
			}
			rp.set(kpool.ConditionReady, kpool.ConditionFalse, why, join(fixable))
			rp.set(kpool.ConditionProgressing, kpool.ConditionTrue, why, "")
			r.send(ctx, p, prev, rp)
			return true, nil
		case r.refused(ctx, p, prev, rp, err):
			return false, nil
		}
		return r.retry(ctx, p, prev, rp, err)
	}
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
	diffs := provider.Compare(r.prof, desired, obs)
	rp.set(kpool.ConditionDrifted, yes(len(diffs) > 0), "Observed", join(diffs))
	ready := obs.State == provider.StateReady
	rp.set(kpool.ConditionReady, yes(ready), string(obs.State), obs.ProviderState)
	rp.set(kpool.ConditionProgressing, yes(!ready && obs.State != provider.StateFailed), string(obs.State), "")
	r.send(ctx, p, prev, rp)
	return !ready, nil
}

// deleting deletes a pool at the provider (unless its policy abandons it)
// and reports Deleted=True once nothing is left, so that the record goes.
func (r *clusterRun) deleting(ctx context.Context, p *kpool.NodePool, prev *kpool.ControllerStatus, rp *report, obs *provider.Pool) (bool, error) {
	switch {
	case p.Spec.DeletionPolicy == kpool.DeletionAbandon || p.Spec.Observed():
		rp.set(kpool.ConditionDeleted, kpool.ConditionTrue, "Abandoned", "the pool is left at the provider")
		r.send(ctx, p, prev, rp)
		return false, nil
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

// importPool records a provider pool kpool does not know, in observe mode.
func (r *clusterRun) importPool(ctx context.Context, o *provider.Pool) {
	name := o.Name
	var fe kpool.FieldErrors
	if kpool.ValidateName(&fe, "name", name); name == "" || len(fe) > 0 {
		name = strings.ToLower(strings.ReplaceAll(o.ProviderName, "_", "-"))
	}
	spec := r.specOf(o)
	ictx := kpool.WithIdentity(ctx, Identity)
	if _, err := r.c.cfg.Service.ImportNodePool(ictx, r.cl.ID, name, o.ProviderName, spec); err != nil {
		r.c.cfg.Log.Warn("import", "cluster", r.cl.ID, "pool", o.ProviderName, "err", err)
	}
}

// specOf is a kpool spec describing an observed pool: its neutral fields,
// the labels and taints that are the user's (not kpool's, Kubernetes' or
// the provider's), and its platform block as the profile writes it.
func (r *clusterRun) specOf(o *provider.Pool) kpool.NodePoolSpec {
	n := o.Count
	s := kpool.NodePoolSpec{NodeCount: &n, Mode: o.Mode, KubernetesVersion: o.Version, Zones: o.Zones, Labels: map[string]string{}, Tags: o.Tags}
	if o.Autoscaling {
		lo, hi := o.MinCount, o.MaxCount
		s.Autoscaling = &kpool.Autoscaling{Enabled: true, MinNodes: &lo, MaxNodes: &hi}
	}
	owned := r.c.cfg.Drivers.Owned
	for k, v := range o.Labels {
		if !owned(k) {
			s.Labels[k] = v
		}
	}
	for _, t := range o.Taints {
		if !owned(t.Key) {
			s.Taints = append(s.Taints, t)
		}
	}
	r.prof.SetBlock(&s, provider.Block{MachineType: o.MachineType, DiskSizeGB: o.DiskSizeGB, DiskType: o.DiskType, Spot: o.Spot, Extra: o.Settings})
	return s
}

func join(ds []provider.Difference) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.String()
	}
	return strings.Join(parts, "; ")
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

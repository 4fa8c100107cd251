package service

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/audit"
)

// UpdateNodePool applies a PUT or PATCH to a pool. The generation rises by
// one when the spec changes and not at all for a no-op.
func (s *Service) UpdateNodePool(ctx context.Context, poolID string, u Update) (*kpool.NodePool, error) {
	p, _, err := s.UpdateNodePoolPlan(ctx, poolID, u)
	return p, err
}

// UpdateNodePoolPlan is UpdateNodePool that also returns the plan: what the
// change does at the pool's provider. A change the provider cannot make in
// place is refused (VALIDATION_ERROR), one it cannot make at all is
// NOT_IMPLEMENTED; in a dry run neither is an error: the plan shows them,
// the pool is returned as it stays, and plan.Refusal() is what the write
// would answer.
//
// Updates of one pool that arrive while one is being written are applied
// together: one transaction locks the pool, applies each in turn (each with
// its own checks, generation, resource version, event and answer, exactly as
// if they had run one after another), and writes the result. A pool under
// many concurrent writers then takes a batch per lock and commit instead of
// one update, and no update is lost.
func (s *Service) UpdateNodePoolPlan(ctx context.Context, poolID string, u Update) (*kpool.NodePool, kpool.Plan, error) {
	id, err := poolCaller(ctx, poolID)
	if err != nil {
		return nil, kpool.Plan{Changes: []kpool.Change{}}, err
	}
	if err := s.checkLogicalUpdate(ctx, poolID, u); err != nil {
		return nil, kpool.Plan{Changes: []kpool.Change{}}, err
	}
	op := &poolUpdate{ctx: ctx, id: id, u: u, done: make(chan struct{})}
	if u.DryRun {
		s.applyUpdates(ctx, poolID, []*poolUpdate{op}, true)
		return op.result()
	}
	if s.queueUpdate(poolID, op) {
		s.runUpdates(poolID)
	}
	select {
	case <-op.done:
	case <-ctx.Done():
		if op.state.CompareAndSwap(opQueued, opAbandoned) {
			return nil, kpool.Plan{Changes: []kpool.Change{}}, ctx.Err()
		}
		<-op.done // taken into a batch: its outcome is moments away
	}
	return op.result()
}

// poolUpdate is one update waiting for, or in, a batch.
type poolUpdate struct {
	ctx   context.Context
	id    *kpool.Identity
	u     Update
	state atomic.Int32 // opQueued, then opTaken or opAbandoned
	done  chan struct{}

	out  *kpool.NodePool
	plan kpool.Plan
	err  error
}

const (
	opQueued int32 = iota
	opTaken
	opAbandoned
)

func (op *poolUpdate) result() (*kpool.NodePool, kpool.Plan, error) {
	if op.plan.Changes == nil {
		op.plan.Changes = []kpool.Change{}
	}
	if op.err != nil {
		return nil, op.plan, op.err
	}
	return op.out, op.plan, nil
}

// updateQueue holds a pool's updates waiting for the batch being written.
type updateQueue struct {
	ops []*poolUpdate
}

// maxBatch bounds the updates of one transaction.
const maxBatch = 128

// queueUpdate adds op to its pool's queue and reports whether the caller is
// to write it: true when no batch of the pool is being written.
func (s *Service) queueUpdate(poolID string, op *poolUpdate) bool {
	s.updatesMu.Lock()
	defer s.updatesMu.Unlock()
	if s.updates == nil {
		s.updates = map[string]*updateQueue{}
	}
	if q, ok := s.updates[poolID]; ok {
		q.ops = append(q.ops, op)
		return false
	}
	s.updates[poolID] = &updateQueue{ops: []*poolUpdate{op}}
	return true
}

// runUpdates writes the pool's first batch here (it holds the caller's own
// update), then hands the queue to a goroutine that writes the updates that
// arrived meanwhile, batch by batch, until none is left.
func (s *Service) runUpdates(poolID string) {
	if s.writeBatch(poolID) {
		go func() {
			for s.writeBatch(poolID) {
			}
		}()
	}
}

// writeBatch takes up to maxBatch queued updates, writes them, and reports
// whether more are queued (otherwise the queue is gone).
func (s *Service) writeBatch(poolID string) bool {
	s.updatesMu.Lock()
	q := s.updates[poolID]
	n := min(len(q.ops), maxBatch)
	batch := q.ops[:n:n]
	q.ops = q.ops[n:]
	s.updatesMu.Unlock()

	var taken []*poolUpdate
	for _, op := range batch {
		if op.state.CompareAndSwap(opQueued, opTaken) {
			taken = append(taken, op)
		}
	}
	if len(taken) > 0 {
		// The batch is everyone's: no one caller's cancellation stops it.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(taken[0].ctx), time.Minute)
		s.applyUpdates(ctx, poolID, taken, false)
		cancel()
		for _, op := range taken {
			close(op.done)
		}
	}

	s.updatesMu.Lock()
	defer s.updatesMu.Unlock()
	if len(q.ops) > 0 {
		return true
	}
	delete(s.updates, poolID)
	return false
}

// applyUpdates runs ops on one pool in one transaction, in order, and
// records each one's outcome. A failure of the transaction itself is every
// op's.
func (s *Service) applyUpdates(ctx context.Context, poolID string, ops []*poolUpdate, dry bool) {
	err := s.write(ctx, dry, func(tx kpool.Tx) error {
		p, c, reports, err := tx.NodePool(poolID)
		if err != nil {
			for _, op := range ops {
				op.out, op.plan, op.err = nil, kpool.Plan{}, err
			}
			if kpool.IsNotFound(err) {
				return nil // each op says so
			}
			return err
		}
		from := p.ResourceVersion
		var events []*kpool.Event
		for _, op := range ops {
			op.out, op.plan, op.err = nil, kpool.Plan{}, nil
			next, ev, err := s.applyUpdate(op, p, c, reports)
			if err != nil {
				op.err = err
				continue
			}
			op.out = next
			if ev != nil {
				p = next
				events = append(events, ev)
			}
		}
		if len(events) == 0 {
			return nil
		}
		if err := tx.UpdateNodePool(p, from); err != nil {
			return err
		}
		for _, ev := range events {
			if err := tx.AddEvent(ev); err != nil {
				return err
			}
		}
		if dry {
			for _, op := range ops {
				if op.out != nil { // the answer keeps the version never written
					cp := *op.out
					cp.ResourceVersion = from
					op.out = &cp
				}
			}
		}
		return nil
	})
	if err != nil {
		for _, op := range ops {
			op.out, op.err = nil, err
		}
	}
}

// applyUpdate applies one update to the pool as it stands (p, which it does
// not change) and returns the pool after it, with the event to record, or no
// event for a no-op.
func (s *Service) applyUpdate(op *poolUpdate, p *kpool.NodePool, c *kpool.Cluster, reports []kpool.ControllerStatus) (*kpool.NodePool, *kpool.Event, error) {
	if err := access(op.ctx, op.id, "NodePool", p.ID, p.ClusterOwner, p.ClusterTeam, kpool.Operate); err != nil {
		return nil, nil, err
	}
	u := op.u
	if err := s.credentialHolds(c); err != nil {
		return nil, nil, err
	}
	if err := precondition(u.ResourceVersion, p.ResourceVersion, "NodePool", p.Name); err != nil {
		return nil, nil, err
	}
	if p.Deleting() {
		return nil, nil, kpool.Errorf(kpool.CodeConflict, "NodePool '%s' is being deleted", p.Name)
	}
	var fe kpool.FieldErrors
	if u.Name != nil && *u.Name != p.Name {
		fe.Add("name", "immutable: the node pool is named %q; create a new pool to use another name", p.Name)
	}
	if u.ClusterID != nil && *u.ClusterID != p.ClusterID {
		fe.Add("cluster_id", "immutable: the node pool belongs to cluster %s", p.ClusterID)
	}
	if err := fe.Err(); err != nil {
		return nil, nil, err
	}
	op.plan = kpool.Plan{Provider: string(c.Spec.Platform.Type), ProviderName: p.ProviderName, Changes: []kpool.Change{}}
	if u.Spec == nil {
		return p, nil, nil
	}
	next := *p
	var err error
	if next.Spec, err = mergeSpec(p.Spec, u.Spec, u.Patch); err != nil {
		return nil, nil, err
	}
	s.defaults(&next.Spec, c)
	if !carries(u.Spec, "nodeCount") {
		clampCount(&next.Spec)
	}
	if err := kpool.ValidateNodePool(s.Platforms, &next, c); err != nil {
		return nil, nil, err
	}
	if op.plan.Warnings, err = s.advisories(c, &next.Spec, u.Spec); err != nil {
		return nil, nil, err
	}
	if next.Spec.Equal(&p.Spec) {
		return p, nil, nil
	}
	if err := s.preflightUpdate(op, c, &next.Spec, &p.Spec); err != nil {
		return nil, nil, err
	}
	if p.Spec.Observed() && next.Spec.Observed() {
		return nil, nil, observedConflict(p)
	}
	if err := foreignObserved(op.id, c, &next); err != nil {
		return nil, nil, err
	}
	pl, err := s.updatePlan(c, p, &next, reports)
	if err != nil {
		return nil, nil, err
	}
	op.plan.Changes, op.plan.Replacement = pl.Changes, pl.Replacement
	if err := pl.Refusal(); err != nil {
		if op.u.DryRun {
			// A dry run is for seeing exactly this: the answer is the
			// plan, with its replace (or not implemented) rows and their
			// reasons, and the pool as it stays; the write itself is
			// refused (see Plan.Refusal).
			return p, nil, nil
		}
		return nil, nil, err
	}
	now := s.now()
	next.UpdatedAt = now
	next.Generation = p.Generation + 1
	next.ResourceVersion = NewResourceVersion()
	next.Status = s.aggregate(&next, reports, p.Status, now)
	ev := audit.PoolEvent(op.ctx, kpool.EventNodePoolUpdated, &next, p.Generation, op.id.Email)
	ev.Detail, ev.CreatedAt = audit.ChangedFields("spec.", p.Spec, next.Spec), now
	return &next, ev, nil
}

// updatePlan plans a pool's change from p to next. When nothing exists at
// the provider to change in place, the pool will be created as it now is:
// the change is checked as a create, and planned in place.
func (s *Service) updatePlan(c *kpool.Cluster, p, next *kpool.NodePool, reports []kpool.ControllerStatus) (kpool.Plan, error) {
	pl, err := s.Platforms.Plan(c, &p.Spec, &next.Spec)
	if err != nil {
		return pl, err
	}
	if atProvider(reports) {
		if pl.Replaces() && next.Spec.UpdateStrategy.Surge() {
			pl.Replacement = next.Spec.UpdateStrategy.Describe()
		}
		return pl, nil
	}
	if err := s.Platforms.CheckCreate(c, &next.Spec); err != nil {
		return kpool.Plan{}, err
	}
	for i := range pl.Changes {
		if ch := &pl.Changes[i]; ch.Class != kpool.UpdateAdvisory {
			ch.Class, ch.Reason = kpool.UpdateInPlace, notCreatedReason
		}
	}
	return pl, nil
}

// observedConflict is the answer to a change of a pool kpool only
// observes: nothing would change at the provider, so the change is refused
// rather than stored as if it would.
func observedConflict(p *kpool.NodePool) error {
	reason := "the pool is observed (management: observe): kpool never changes it at the provider; set spec.management to manage in the same change to take it over"
	return &kpool.Error{Code: kpool.CodeConflict, Message: fmt.Sprintf("NodePool '%s' is observed, not managed", p.Name),
		Details: "spec.management: " + reason, Fields: []kpool.FieldError{{Field: "spec.management", Reason: reason}}}
}

// notCreatedReason is the plan's reason for a change of a pool that does not
// exist at its provider.
const notCreatedReason = "the pool does not exist at the provider yet: it will be created with this value"

// atProvider reports whether the pool may exist at its provider: some
// controller has reported on it without saying it does not exist (ReportMeta.Exists). A pool no
// controller has reported on, or that every one says does not exist (not
// created yet, or its create failed), has no in-place limits.
func atProvider(reports []kpool.ControllerStatus) bool {
	for i := range reports {
		if !reports[i].Absent() {
			return true
		}
	}
	return false
}

// checkLogicalUpdate checks, before the update runs, that the pool as it
// would be still fits its logical pool: only a spec that sets
// placementPool, taints or zones can change that.
func (s *Service) checkLogicalUpdate(ctx context.Context, poolID string, u Update) error {
	if u.Spec == nil || !(carries(u.Spec, "placementPool") || carries(u.Spec, "taints") || carries(u.Spec, "zones")) {
		return nil
	}
	_, p, err := s.visiblePool(ctx, poolID)
	if err != nil {
		return nil // the update itself says so
	}
	next := *p
	if next.Spec, err = mergeSpec(p.Spec, u.Spec, u.Patch); err != nil {
		return nil
	}
	c, err := s.Store.Cluster(ctx, p.ClusterID)
	if err != nil {
		return nil
	}
	return s.checkLogicalPool(ctx, c, &next)
}

// preflightUpdate checks what an update changes against the cluster's
// facts, adding the checks' warnings to the plan.
func (s *Service) preflightUpdate(op *poolUpdate, c *kpool.Cluster, next, prev *kpool.NodePoolSpec) error {
	pw, err := s.preflight(op.ctx, c, next, prev)
	op.plan.Warnings = append(op.plan.Warnings, pw...)
	return err
}

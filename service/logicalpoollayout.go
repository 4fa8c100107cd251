package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/audit"
)

// LogicalLayout is what the logical pool controller wants of a logical
// pool's members, and the status it computed.
type LogicalLayout struct {
	// Generation is the spec generation the layout was computed for: a
	// newer stored generation is a CONFLICT, and nothing is written.
	Generation int64
	// Members are the members it wants made, changed or removed.
	Members []LayoutMember
	Status  kpool.LogicalPoolStatus
	// Moved, when set, is the move the layout makes, in words: recorded as
	// event logicalpool.moved with it as the detail.
	Moved string
}

// LayoutMember is one member of a layout.
type LayoutMember struct {
	kpool.Offering
	// Alternative is the offering's rank (0 the template, k the k-th
	// fallback); the member's name is the logical pool's MemberName.
	Alternative int
	// Count is the member's nodeCount (with autoscaling, its minNodes);
	// MaxCount its maxNodes with autoscaling, 0 otherwise.
	Count    int
	MaxCount int
	// Delete removes a made member no longer wanted, as DeleteNodePool.
	Delete bool
}

// ApplyLogicalLayout writes, in one transaction, the members a logical
// pool's controller wants (created, scaled or deleted through the checks
// and writes of the pools' own create, update and delete) and its status.
// Only controllers apply layouts. A member name held by a pool outside the
// logical pool is a CONFLICT naming it. Applying the same layout again
// changes no member.
func (s *Service) ApplyLogicalLayout(ctx context.Context, lpID string, l LogicalLayout) (*kpool.LogicalPool, error) {
	id, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if !id.Controller {
		return nil, kpool.Errorf(kpool.CodeForbidden, "only controllers apply a logical pool's layout")
	}
	if !kpool.IsUUID(lpID) {
		return nil, notFound("LogicalPool", lpID)
	}
	var out *kpool.LogicalPool
	err = s.write(ctx, false, func(tx kpool.Tx) error {
		a, err := s.layoutApply(ctx, tx, id, lpID, l)
		if err != nil {
			return err
		}
		for _, m := range l.Members {
			if err := a.member(m); err != nil {
				return err
			}
		}
		lp := a.lp
		from := lp.ResourceVersion
		lp.Status = l.Status
		if lp.Status.ObservedGeneration == 0 {
			lp.Status.ObservedGeneration = l.Generation
		}
		lp.Status.LastUpdateTime, lp.UpdatedAt, lp.ResourceVersion = a.now, a.now, NewResourceVersion()
		if err := tx.UpdateLogicalPool(lp, from); err != nil {
			return err
		}
		out = lp
		if l.Moved == "" {
			return nil
		}
		return tx.AddEvent(logicalEvent(ctx, kpool.EventLogicalPoolMoved, lp, lp.Generation, id.Email, l.Moved, a.now))
	})
	return out, layoutError(err)
}

// layoutError says what a member write the database refused means.
func layoutError(err error) error {
	switch {
	case errors.Is(err, kpool.ErrClusterChanged):
		return kpool.Errorf(kpool.CodeConflict, "the cluster changed while the layout was applied; try again")
	case errors.Is(err, kpool.ErrClusterDeleting):
		return kpool.Errorf(kpool.CodeConflict, "the cluster is being deleted")
	case errors.Is(err, kpool.ErrProviderNameTaken):
		return kpool.Errorf(kpool.CodeConflict, "a member's provider name is taken; try again")
	}
	return err
}

// layout is a layout being applied in a transaction.
type layout struct {
	s      *Service
	ctx    context.Context
	tx     kpool.Tx
	id     *kpool.Identity
	c      *kpool.Cluster
	lp     *kpool.LogicalPool
	pools  map[string]*kpool.NodePool // the cluster's pools by name
	made   []*kpool.NodePool          // the members created so far
	now    time.Time
	detail string
}

// layoutApply locks the logical pool and the cluster's pools and checks
// that the layout is for the stored generation and that no pool outside
// the logical pool has a member's name.
func (s *Service) layoutApply(ctx context.Context, tx kpool.Tx, id *kpool.Identity, lpID string, l LogicalLayout) (*layout, error) {
	lp, err := lockLogical(ctx, tx, id, lpID, kpool.Read)
	if err != nil {
		return nil, err
	}
	if lp.Generation != l.Generation {
		return nil, kpool.Errorf(kpool.CodeConflict, "LogicalPool '%s' is at generation %d, the layout is for %d: compute it again", lp.Name, lp.Generation, l.Generation)
	}
	c, err := s.Store.Cluster(ctx, lp.ClusterID)
	if err != nil {
		return nil, err
	}
	if id.Scope != nil && !id.Scope.Covers(c.Spec.Platform.Type, c) {
		return nil, kpool.Errorf(kpool.CodeForbidden, "%s may act on %s only, not on this %s cluster", id.Email, id.Scope, c.Spec.Platform.Type)
	}
	pools, err := tx.LiveNodePools(c.ID)
	if err != nil {
		return nil, err
	}
	a := &layout{s: s, ctx: ctx, tx: tx, id: id, c: c, lp: lp, pools: map[string]*kpool.NodePool{}, now: s.now(), detail: "logical pool " + lp.Name}
	for _, p := range pools {
		a.pools[p.Name] = p
	}
	if err := checkLayout(lp, l); err != nil {
		return nil, err
	}
	for _, m := range l.Members {
		name := lp.MemberName(m.Zone, m.Alternative)
		if p := a.pools[name]; p != nil && p.Spec.PlacementPool != lp.Name {
			return nil, &kpool.Error{Code: kpool.CodeConflict, Message: "Node pool '" + name + "' is not a member of logical pool '" + lp.Name + "'",
				Details: "pool " + name + " of the cluster has the name of a member the logical pool makes; rename or delete it, or set its spec.placementPool to " + lp.Name}
		}
	}
	return a, nil
}

// checkLayout refuses a layout no logical pool could want: ranks beyond
// its fallbacks, negative counts, bounds crossed, a member twice.
func checkLayout(lp *kpool.LogicalPool, l LogicalLayout) error {
	var fe kpool.FieldErrors
	seen := map[string]bool{}
	for i, m := range l.Members {
		f := fmt.Sprintf("members[%d]", i)
		name := lp.MemberName(m.Zone, m.Alternative)
		switch {
		case !m.Delete && (m.Alternative < 0 || m.Alternative > len(lp.Spec.Fallbacks)):
			fe.Add(f+".alternative", "%d is not a rank of logical pool %s (0 to %d)", m.Alternative, lp.Name, len(lp.Spec.Fallbacks))
		case m.Count < 0 || m.MaxCount < 0:
			fe.Add(f+".count", "must not be negative")
		case lp.Spec.Autoscaling.On() && !m.Delete && m.MaxCount < m.Count:
			fe.Add(f+".maxCount", "must be at least count (%d), got %d", m.Count, m.MaxCount)
		case seen[name]:
			fe.Add(f, "member %s is in the layout twice", name)
		}
		seen[name] = true
	}
	return fe.Err()
}

// member makes, scales or deletes one member.
func (a *layout) member(m LayoutMember) error {
	name := a.lp.MemberName(m.Zone, m.Alternative)
	p := a.pools[name]
	switch {
	case m.Delete && (p == nil || p.Deleting()):
		return nil
	case m.Delete:
		reports, err := a.tx.ControllerStatuses(p.ID)
		if err != nil {
			return err
		}
		_, err = a.s.deletePool(a.ctx, a.tx, p, reports, a.id.Email, a.detail, a.now)
		return err
	case p == nil && (m.Count > 0 || (a.lp.Spec.Autoscaling.On() && m.MaxCount > 0)):
		return a.create(name, m)
	case p == nil || p.Deleting():
		return nil
	}
	return a.scale(p, m)
}

// counts sets a member spec's count (and bounds) from m.
func (a *layout) counts(spec *kpool.NodePoolSpec, m LayoutMember) {
	n := m.Count
	if as := a.lp.Spec.Autoscaling; as.On() {
		b := *as
		lo, hi := m.Count, m.MaxCount
		b.MinNodes, b.MaxNodes = &lo, &hi
		spec.Autoscaling = &b
		if spec.NodeCount == nil {
			spec.NodeCount = &n
		}
		clampCount(spec)
		return
	}
	spec.NodeCount, spec.Autoscaling = &n, nil
}

// create makes a member as CreateNodePool makes a pool.
func (a *layout) create(name string, m LayoutMember) error {
	s, c := a.s, a.c
	spec := s.memberSpec(c, a.lp, m.Offering)
	a.counts(&spec, m)
	p := &kpool.NodePool{ID: newID(), Name: name, ClusterID: c.ID, CreatedBy: a.id.Email, ClusterOwner: c.CreatedBy, ClusterTeam: c.Team, Spec: spec}
	s.defaults(&p.Spec, c)
	if err := kpool.ValidateNodePool(s.Platforms, p, c); err != nil {
		return prefixFields(err, "member "+name)
	}
	if err := s.Platforms.CheckCreate(c, &p.Spec); err != nil {
		return prefixFields(err, "member "+name)
	}
	if _, err := s.preflight(a.ctx, c, &p.Spec, nil); err != nil {
		return prefixFields(err, "member "+name)
	}
	if err := s.checkLogicalPool(a.ctx, c, p, a.made...); err != nil {
		return prefixFields(err, "member "+name)
	}
	names, err := s.Platforms.ProviderNames(c, name, 0)
	if err != nil {
		return err
	}
	taken, err := a.tx.ProviderNamesTaken(c.ID, names)
	if err != nil {
		return err
	}
	if p.ProviderName, err = freeName(names, taken, name, c); err != nil {
		return err
	}
	if err := s.insertNew(a.ctx, a.tx, c, p, a.id.Email, a.detail); err != nil {
		return err
	}
	a.made = append(a.made, p)
	a.pools[name] = p
	return nil
}

// scale brings a member to the template (what changes in place; a change
// only a new pool can make waits for the pool's update strategy to allow
// it, the counts going ahead meanwhile) and to its counts, as
// UpdateNodePool would.
func (a *layout) scale(p *kpool.NodePool, m LayoutMember) error {
	s, c := a.s, a.c
	reports, err := a.tx.ControllerStatuses(p.ID)
	if err != nil {
		return err
	}
	next := *p
	next.Spec = s.memberSpec(c, a.lp, m.Offering)
	s.defaults(&next.Spec, c)
	a.counts(&next.Spec, m)
	pl, err := s.updatePlan(c, p, &next, reports)
	if err != nil || pl.Refusal() != nil || kpool.ValidateNodePool(s.Platforms, &next, c) != nil {
		next.Spec = p.Spec // the template's change cannot reach it: its counts can
		a.counts(&next.Spec, m)
	}
	if next.Spec.Equal(&p.Spec) {
		return nil
	}
	if err := kpool.ValidateNodePool(s.Platforms, &next, c); err != nil {
		return prefixFields(err, "member "+p.Name)
	}
	pl, err = s.updatePlan(c, p, &next, reports)
	if err != nil {
		return err
	}
	if err := pl.Refusal(); err != nil {
		return prefixFields(err, "member "+p.Name)
	}
	if _, err := s.preflight(a.ctx, c, &next.Spec, &p.Spec); err != nil {
		return prefixFields(err, "member "+p.Name)
	}
	next.UpdatedAt, next.Generation = a.now, p.Generation+1
	next.Status = s.aggregate(&next, reports, p.Status, a.now)
	if err := updatePool(a.tx, &next); err != nil {
		return err
	}
	ev := audit.PoolEvent(a.ctx, kpool.EventNodePoolUpdated, &next, p.Generation, a.id.Email)
	ev.Detail, ev.CreatedAt = audit.ChangedFields("spec.", p.Spec, next.Spec)+" ("+a.detail+")", a.now
	a.pools[p.Name] = &next
	return a.tx.AddEvent(ev)
}

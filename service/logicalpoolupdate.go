package service

import (
	"context"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/audit"
)

// logicalTotal is the node count a logical pool asks of its members: its
// nodeCount, or with autoscaling its minNodes.
func logicalTotal(sp *kpool.LogicalPoolSpec) int {
	if a := sp.Autoscaling; a.On() && a.MinNodes != nil {
		return *a.MinNodes
	}
	if sp.NodeCount != nil {
		return *sp.NodeCount
	}
	return 0
}

// UpdateLogicalPool applies a PUT or PATCH to a logical pool: u.Spec is
// merged into its spec (u.Patch: RFC 7386) and checked as at create. The
// generation rises when the spec changes; a scale is an update of
// nodeCount. Its controller then moves the members to the new spec.
func (s *Service) UpdateLogicalPool(ctx context.Context, lpID string, u Update) (*kpool.LogicalPool, error) {
	id, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if !kpool.IsUUID(lpID) {
		return nil, notFound("LogicalPool", lpID)
	}
	var out *kpool.LogicalPool
	err = s.write(ctx, u.DryRun, func(tx kpool.Tx) error {
		lp, err := lockLogical(ctx, tx, id, lpID, kpool.Operate)
		if err != nil {
			return err
		}
		next, err := s.nextLogical(ctx, lp, u)
		if err != nil || next == nil {
			out = lp
			return err
		}
		if err := tx.UpdateLogicalPool(next, lp.ResourceVersion); err != nil {
			return err
		}
		out = next
		if u.DryRun { // the answer keeps the version never written
			cp := *next
			cp.ResourceVersion = lp.ResourceVersion
			out = &cp
		}
		detail := audit.ChangedFields("spec.", lp.Spec, next.Spec)
		return tx.AddEvent(logicalEvent(ctx, kpool.EventLogicalPoolUpdated, next, lp.Generation, id.Email, detail, next.UpdatedAt))
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// nextLogical is the logical pool after update u, checked; nil when u
// changes nothing.
func (s *Service) nextLogical(ctx context.Context, lp *kpool.LogicalPool, u Update) (*kpool.LogicalPool, error) {
	if err := precondition(u.ResourceVersion, lp.ResourceVersion, "LogicalPool", lp.Name); err != nil {
		return nil, err
	}
	var fe kpool.FieldErrors
	if u.Name != nil && *u.Name != lp.Name {
		fe.Add("name", "immutable: the logical pool is named %q; create a new one to use another name", lp.Name)
	}
	if u.ClusterID != nil && *u.ClusterID != lp.ClusterID {
		fe.Add("cluster_id", "immutable: the logical pool belongs to cluster %s", lp.ClusterID)
	}
	if u.Team != nil {
		fe.Add("team", "a logical pool's team is its cluster's")
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	if u.Spec == nil {
		return nil, nil
	}
	next := *lp
	var err error
	if next.Spec, err = mergeSpec(lp.Spec, u.Spec, u.Patch); err != nil {
		return nil, err
	}
	if specEqual(next.Spec, lp.Spec) {
		return nil, nil
	}
	c, err := s.Store.Cluster(ctx, lp.ClusterID)
	if err != nil {
		return nil, err
	}
	if err := s.credentialHolds(c); err != nil {
		return nil, err
	}
	if err := s.checkLogical(ctx, c, &next, "logicalpool update"); err != nil {
		return nil, err
	}
	next.Generation = lp.Generation + 1
	next.UpdatedAt = s.now()
	next.ResourceVersion = NewResourceVersion()
	return &next, nil
}

package service

import (
	"context"
	"fmt"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/audit"
)

// RollbackNodePool asks for the pool's running replacement to be undone:
// its controller uncordons the old nodes, drains the successor and deletes
// it, and the old pool goes on serving. The pool's spec is not changed (a
// later spec starts a new replacement); the request is recorded in the
// pool's status and the audit trail. CONFLICT when no replacement runs.
func (s *Service) RollbackNodePool(ctx context.Context, poolID string) (*kpool.NodePool, error) {
	id, err := poolCaller(ctx, poolID)
	if err != nil {
		return nil, err
	}
	var out *kpool.NodePool
	err = s.write(ctx, false, func(tx kpool.Tx) error {
		p, _, _, err := lockPool(ctx, tx, id, poolID, kpool.Operate)
		if err != nil {
			return err
		}
		rp := p.Status.Replacement
		switch {
		case p.Deleting():
			return kpool.Errorf(kpool.CodeConflict, "NodePool '%s' is being deleted: its replacement goes with it", p.Name)
		case !rp.Active():
			return kpool.Errorf(kpool.CodeConflict, "NodePool '%s' has no replacement under way to roll back", p.Name)
		case rp.Step == kpool.StepRetiring:
			return kpool.Errorf(kpool.CodeConflict, "NodePool '%s''s replacement is deleting the old pool (%s): it can no longer be rolled back", p.Name, rp.From)
		case rp.RollbackRequestedAt != nil || rp.Step == kpool.StepRollingBack:
			out = p
			return nil // asked already
		}
		now := s.now()
		next := *rp
		next.RollbackRequestedAt = &now
		p.Status.Replacement, p.UpdatedAt = &next, now
		if err := updatePool(tx, p); err != nil {
			return err
		}
		ev := audit.PoolEvent(ctx, kpool.EventNodePoolRollback, p, p.Generation, id.Email)
		ev.Detail, ev.CreatedAt = fmt.Sprintf("rollback of the replacement of %s by %s (%s)", rp.From, rp.To, rp.Step), now
		out = p
		return tx.AddEvent(ev)
	})
	return out, err
}

// replaced moves a pool to its successor at the provider when its
// controller reports the replacement Done: the successor's provider name
// becomes the pool's, in the transaction that stores the report. It
// returns the event to record (nil: nothing moved). A successor name
// another pool of the cluster holds is refused.
func replaced(ctx context.Context, tx kpool.Tx, p *kpool.NodePool, r *kpool.ControllerStatus, actor string) (*kpool.Event, error) {
	rp := r.Meta().Replacement
	if rp == nil || rp.Step != kpool.StepDone || rp.From != p.ProviderName || rp.To == "" || rp.To == p.ProviderName {
		return nil, nil
	}
	taken, err := tx.ProviderNamesTaken(p.ClusterID, []string{rp.To})
	if err != nil {
		return nil, err
	}
	if len(taken) > 0 {
		return nil, kpool.Invalid("metadata.replacement.to", "%s is the provider name of another pool of the cluster", rp.To)
	}
	p.ProviderName = rp.To
	ev := audit.PoolEvent(ctx, kpool.EventNodePoolReplaced, p, p.Generation, actor)
	ev.Detail = fmt.Sprintf("replaced %s by %s at the provider", rp.From, rp.To)
	return ev, nil
}

package service

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/audit"
)

// DeleteCluster deletes a cluster. One with live pools is a CONFLICT unless
// force, which deletes the pools too. The cluster goes at once when no pool
// remains; otherwise it is Deleting until its last pool is gone. gone
// reports which.
func (s *Service) DeleteCluster(ctx context.Context, clusterID string, d Delete) (out *kpool.Cluster, gone bool, err error) {
	id, _, err := s.manageableCluster(ctx, clusterID)
	if err != nil {
		return nil, false, err
	}
	force, rv := d.Force, d.ResourceVersion
	err = s.write(ctx, d.DryRun, func(tx kpool.Tx) error {
		c, err := tx.Cluster(clusterID)
		if err != nil {
			return err
		}
		if err := precondition(rv, c.ResourceVersion, "Cluster", c.Name); err != nil {
			return err
		}
		pools, err := tx.LiveNodePools(clusterID)
		if err != nil {
			return err
		}
		var live []string
		for _, p := range pools {
			if !p.Deleting() {
				live = append(live, p.Name)
			}
		}
		if len(live) > 0 && !force {
			names := live[:min(len(live), 10)]
			more := ""
			if len(live) > len(names) {
				more = fmt.Sprintf(" and %d more", len(live)-len(names))
			}
			return &kpool.Error{Code: kpool.CodeConflict, Message: fmt.Sprintf("Cluster '%s' still has %d node pools", c.Name, len(live)),
				Details: "delete the node pools first, or delete with force=true to delete them too: " + strings.Join(names, ", ") + more}
		}
		now := s.now()
		remaining := 0
		for _, p := range pools {
			if p.Deleting() {
				remaining++
				continue
			}
			reports, err := tx.ControllerStatuses(p.ID)
			if err != nil {
				return err
			}
			removed, err := s.deletePool(ctx, tx, p, reports, id.Email, "with its cluster (force)", now)
			if err != nil {
				return err
			}
			if !removed {
				remaining++
			}
		}
		if remaining == 0 {
			gone = true
			out = c
			if err := tx.DeleteCluster(c.ID); err != nil {
				return err
			}
			return tx.AddEvent(audit.ClusterDeleteEvent(ctx, kpool.EventClusterDeleted, c, id.Email, force, now))
		}
		if c.DeletionTimestamp == nil {
			c.DeletionTimestamp = &now
		}
		c.Status = kpool.ClusterStatus{Phase: kpool.ClusterDeleting, Message: fmt.Sprintf("waiting for %d node pools to be deleted", remaining)}
		c.UpdatedAt = now
		if err := updateCluster(tx, c); err != nil {
			return err
		}
		out = c
		return tx.AddEvent(audit.ClusterDeleteEvent(ctx, kpool.EventClusterDeleting, c, id.Email, force, now))
	})
	if err != nil {
		return nil, false, err
	}
	s.clusters.forget(clusterID)
	return out, gone, nil
}

// deletePool removes a pool no controller has reported on, or marks it
// Deleting until every reporting controller confirms. It reports whether the
// record is gone.
func (s *Service) deletePool(ctx context.Context, tx kpool.Tx, p *kpool.NodePool, reports []kpool.ControllerStatus, actor, detail string, now time.Time) (bool, error) {
	if p.Deleting() {
		return false, nil
	}
	if len(reports) == 0 {
		if err := tx.DeleteNodePool(p.ID); err != nil {
			return false, err
		}
		ev := audit.PoolEvent(ctx, kpool.EventNodePoolDeleted, p, p.Generation, actor)
		ev.Detail, ev.CreatedAt = detail, now
		return true, tx.AddEvent(ev)
	}
	p.DeletionTimestamp = &now
	p.UpdatedAt = now
	p.Status = s.aggregate(p, reports, p.Status, now)
	if err := updatePool(tx, p); err != nil {
		return false, err
	}
	ev := audit.PoolEvent(ctx, kpool.EventNodePoolDeleting, p, p.Generation, actor)
	ev.Detail, ev.CreatedAt = detail, now
	return false, tx.AddEvent(ev)
}

// forgetPool removes a pool's record and reports at once, leaving the pool
// at its provider as it is (DeleteNodePool with Delete.Force).
func (s *Service) forgetPool(ctx context.Context, tx kpool.Tx, p *kpool.NodePool, actor string, now time.Time) error {
	if err := tx.DeleteNodePool(p.ID); err != nil {
		return err
	}
	ev := audit.PoolEvent(ctx, kpool.EventNodePoolDeleted, p, p.Generation, actor)
	ev.CreatedAt = now
	ev.Detail = "removed by force: the pool " + p.ProviderName + " at the provider is left as it is, and kpool no longer manages it"
	return tx.AddEvent(ev)
}

// removeClusterIfDone deletes a Deleting cluster whose last pool has gone. c
// is the cluster as read with its pool; it is locked here, so that of two
// last pools going at once, the second to commit sees the first gone. (A
// cluster whose delete begins after c was read finds the pool gone itself.)
func (s *Service) removeClusterIfDone(ctx context.Context, tx kpool.Tx, c *kpool.Cluster, actor string, now time.Time) error {
	if !c.Deleting() {
		return nil
	}
	c, err := tx.Cluster(c.ID)
	if err != nil {
		return err
	}
	left, err := tx.HasNodePools(c.ID)
	if err != nil || left {
		return err
	}
	if err := tx.DeleteCluster(c.ID); err != nil {
		return err
	}
	ev := audit.ClusterEvent(ctx, kpool.EventClusterDeleted, c, c.Generation, actor)
	ev.Detail, ev.CreatedAt = "its last node pool is gone", now
	return tx.AddEvent(ev)
}

// DeleteNodePool deletes a pool: at once if no controller has reported on
// it, otherwise it is Deleting until every reporting controller reports
// Deleted=True. gone reports which.
//
// With d.Force the record goes at once, whatever its controllers report:
// for a pool that can never be deleted at its provider (its cluster's
// endpoint is gone for good). Only admins may; the pool at the provider is
// left as it is, and the audit event says so.
func (s *Service) DeleteNodePool(ctx context.Context, poolID string, d Delete) (out *kpool.NodePool, gone bool, err error) {
	if d.Force {
		id, err := caller(ctx)
		if err != nil {
			return nil, false, err
		}
		if !id.Admin {
			return nil, false, kpool.Errorf(kpool.CodeForbidden, "only admins may force a node pool's removal: it leaves the pool at its provider, which kpool then no longer manages")
		}
	}
	id, err := poolCaller(ctx, poolID)
	if err != nil {
		return nil, false, err
	}
	rv, force := d.ResourceVersion, d.Force
	err = s.write(ctx, d.DryRun, func(tx kpool.Tx) error {
		p, c, reports, err := lockPool(ctx, tx, id, poolID, kpool.Operate)
		if err != nil {
			return err
		}
		if err := precondition(rv, p.ResourceVersion, "NodePool", p.Name); err != nil {
			return err
		}
		now := s.now()
		if force {
			gone, err = true, s.forgetPool(ctx, tx, p, id.Email, now)
		} else {
			gone, err = s.deletePool(ctx, tx, p, reports, id.Email, "", now)
		}
		if err != nil {
			return err
		}
		out = p
		if gone {
			return s.removeClusterIfDone(ctx, tx, c, id.Email, now)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return out, gone, nil
}

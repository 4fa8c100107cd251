package service

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/audit"
)

// LogicalPoolCreate is a request to create a logical pool.
type LogicalPoolCreate struct {
	ClusterID, Name string
	Spec            json.RawMessage
	// DryRun checks everything and stores nothing; the answer shows the
	// preferred layout.
	DryRun bool
}

func logicalScope(lp *kpool.LogicalPool) (string, string) { return lp.ClusterOwner, lp.ClusterTeam }

// CreateLogicalPool creates a logical pool in a cluster whose pools the
// caller may change. Its status shows the members it is to make (the
// preferred layout) before the controller acts.
func (s *Service) CreateLogicalPool(ctx context.Context, in LogicalPoolCreate) (*kpool.LogicalPool, error) {
	clusterID, err := kpool.RefID("cluster_id", in.ClusterID)
	if err != nil {
		var fe kpool.FieldErrors
		addFields(&fe, err)
		kpool.ValidateName(&fe, "name", in.Name)
		return nil, fe.Err()
	}
	id, c, err := s.operableCluster(ctx, clusterID)
	if err != nil {
		return nil, err
	}
	if err := s.credentialHolds(c); err != nil {
		return nil, err
	}
	if c.Deleting() {
		return nil, kpool.Errorf(kpool.CodeConflict, "Cluster '%s' is being deleted", c.Name)
	}
	now := s.now()
	lp := &kpool.LogicalPool{ID: newID(), Name: in.Name, ClusterID: c.ID, Generation: 1, ResourceVersion: NewResourceVersion(),
		CreatedAt: now, UpdatedAt: now, CreatedBy: id.Email, ClusterOwner: c.CreatedBy, ClusterTeam: c.Team}
	if err := specOrHeader(in.Spec, &lp.Spec, lp.Name, ""); err != nil {
		return nil, err
	}
	if err := s.checkLogical(ctx, c, lp, "logicalpool create"); err != nil {
		return nil, err
	}
	lp.Status = s.preferredLayout(c, lp, now)
	err = s.write(ctx, in.DryRun, func(tx kpool.Tx) error {
		if err := tx.CreateLogicalPool(lp); err != nil {
			return err
		}
		return tx.AddEvent(logicalEvent(ctx, kpool.EventLogicalPoolCreated, lp, 0, id.Email, "", now))
	})
	if err != nil {
		return nil, inCluster(err, c)
	}
	return lp, nil
}

// preferredLayout is the status of a logical pool whose template's
// offerings hold: its count spread evenly over the template's zones, the
// earlier zones taking the remainder.
func (s *Service) preferredLayout(c *kpool.Cluster, lp *kpool.LogicalPool, now time.Time) kpool.LogicalPoolStatus {
	total := logicalTotal(&lp.Spec)
	offers := lp.Spec.Alternatives(s.Platforms, c)[0].Offerings
	st := kpool.LogicalPoolStatus{NodeCount: total, LastUpdateTime: now}
	for i, o := range offers {
		n := total / len(offers)
		if i < total%len(offers) {
			n++
		}
		st.Members = append(st.Members, kpool.LogicalMember{Name: lp.MemberName(o.Zone, 0), Offering: o, Made: true, NodeCount: n})
	}
	return st
}

// logicalEvent is the event of a write to logical pool lp.
func logicalEvent(ctx context.Context, typ string, lp *kpool.LogicalPool, before int64, actor, detail string, now time.Time) *kpool.Event {
	c := &kpool.Cluster{ID: lp.ClusterID, CreatedBy: lp.ClusterOwner, Team: lp.ClusterTeam, Generation: lp.Generation}
	ev := audit.ClusterEvent(ctx, typ, c, before, actor)
	ev.ObjectID, ev.ObjectName, ev.Detail, ev.CreatedAt = lp.ID, lp.Name, detail, now
	return ev
}

// LogicalPool returns one logical pool the caller may see.
func (s *Service) LogicalPool(ctx context.Context, id string) (*kpool.LogicalPool, error) {
	_, lp, err := find(ctx, "LogicalPool", id, s.Store.LogicalPool, logicalScope, kpool.Read)
	return lp, err
}

// FindLogicalPool returns the logical pool of a name in a cluster the
// caller may see; NOT_FOUND when there is none.
func (s *Service) FindLogicalPool(ctx context.Context, clusterID, name string) (*kpool.LogicalPool, error) {
	id, err := kpool.RefID("cluster_id", clusterID)
	if err != nil {
		return nil, err
	}
	if _, _, err := s.visibleCluster(ctx, id); err != nil {
		return nil, err
	}
	l, _, err := s.Store.LogicalPools(ctx, kpool.LogicalPoolFilter{ClusterID: id, Name: name, Page: kpool.Page{Limit: 1}})
	if err != nil {
		return nil, err
	}
	if len(l) == 0 {
		return nil, notFound("LogicalPool", name)
	}
	return l[0], nil
}

// LogicalPools lists the logical pools the caller may see (o.ClusterID,
// o.Name and o.Labels, on the template's labels, narrow it), a page at a
// time.
func (s *Service) LogicalPools(ctx context.Context, o ListOptions) (*List[*kpool.LogicalPool], error) {
	id, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	f := kpool.LogicalPoolFilter{ClusterID: o.ClusterID, Name: o.Name, Labels: o.Labels}
	f.Owner, f.Teams = id.Visible()
	if f.Page, err = page(o); err != nil {
		return nil, err
	}
	limit := f.Limit
	f.Limit++ // one more row than asked says whether a next page exists
	items, total, err := s.Store.LogicalPools(ctx, f)
	if err != nil {
		return nil, err
	}
	return pageOf(items, total, limit, func(lp *kpool.LogicalPool) kpool.Cursor { return kpool.Cursor{CreatedAt: lp.CreatedAt, ID: lp.ID} }), nil
}

// lockLogical reads and locks a logical pool in tx for the caller, who
// must be allowed to act on it at level l.
func lockLogical(ctx context.Context, tx kpool.Tx, id *kpool.Identity, lpID string, l kpool.Level) (*kpool.LogicalPool, error) {
	lp, err := tx.LogicalPool(lpID)
	if kpool.IsNotFound(err) {
		return nil, notFound("LogicalPool", lpID)
	}
	if err == nil {
		err = access(ctx, id, "LogicalPool", lpID, lp.ClusterOwner, lp.ClusterTeam, l)
	}
	if err != nil {
		return nil, err
	}
	return lp, nil
}

// madeName matches the names of the members a logical pool makes
// (MemberName): NAME, NAME-ZONE, NAME-fK, NAME-ZONE-fK.
func madeName(lp *kpool.LogicalPool) *regexp.Regexp {
	return regexp.MustCompile(`^` + regexp.QuoteMeta(lp.Name) + `(-[1-9][0-9]?)?(-f[1-9][0-9]*)?$`)
}

// DeleteLogicalPool deletes a logical pool and, in the same transaction,
// the members it made, as DeleteNodePool deletes a pool (their
// controllers drain and remove them); pools that joined it stay.
func (s *Service) DeleteLogicalPool(ctx context.Context, lpID string) error {
	id, err := caller(ctx)
	if err != nil {
		return err
	}
	if !kpool.IsUUID(lpID) {
		return notFound("LogicalPool", lpID)
	}
	return s.write(ctx, false, func(tx kpool.Tx) error {
		lp, err := lockLogical(ctx, tx, id, lpID, kpool.Operate)
		if err != nil {
			return err
		}
		pools, err := tx.LiveNodePools(lp.ClusterID)
		if err != nil {
			return err
		}
		now, made, removed := s.now(), madeName(lp), false
		for _, p := range pools {
			if p.Spec.PlacementPool != lp.Name || !made.MatchString(p.Name) {
				continue
			}
			reports, err := tx.ControllerStatuses(p.ID)
			if err != nil {
				return err
			}
			gone, err := s.deletePool(ctx, tx, p, reports, id.Email, "with logical pool "+lp.Name, now)
			if err != nil {
				return err
			}
			removed = removed || gone
		}
		if err := tx.DeleteLogicalPool(lp.ID); err != nil {
			return err
		}
		if err := tx.AddEvent(logicalEvent(ctx, kpool.EventLogicalPoolDeleted, lp, lp.Generation, id.Email, "", now)); err != nil {
			return err
		}
		if !removed {
			return nil
		}
		c, err := s.Store.Cluster(ctx, lp.ClusterID)
		if err != nil {
			return fmt.Errorf("logical pool %s: its cluster: %w", lp.Name, err)
		}
		return s.removeClusterIfDone(ctx, tx, c, id.Email, now)
	})
}

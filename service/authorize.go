package service

import (
	"context"
	"fmt"

	"github.com/kpool/kpool"
)

// access decides whether id may see an object of a cluster of owner and
// team or, at a level above Read, act on it. One it may not see is
// NOT_FOUND (no leak that it exists); one it may see but not act on is
// FORBIDDEN, saying what its role allows.
func access(ctx context.Context, id *kpool.Identity, kind, objID, owner, team string, l kpool.Level) error {
	seen, allowed := id.May(owner, team, l)
	if !seen {
		return notFound(kind, objID)
	}
	if l == kpool.Read {
		return nil
	}
	if _, err := writer(ctx); err != nil {
		return err
	}
	if allowed {
		return nil
	}
	if r := id.Role(team); r != "" {
		return kpool.Errorf(kpool.CodeForbidden, "you are a %s of team %s: only a team %s may %s", r, team, l.Role(), l)
	}
	return kpool.Errorf(kpool.CodeForbidden, "only the cluster's owner or an admin may %s", l)
}

// find reads an object for the caller: one the caller may not see is
// NOT_FOUND (no leak that it exists); one it may see but not act on at
// level l is FORBIDDEN. scope returns the owner and team of the object's
// cluster.
func find[T any](ctx context.Context, kind, objID string, get func(context.Context, string) (T, error), scope func(T) (string, string), l kpool.Level) (*kpool.Identity, T, error) {
	var zero T
	id, err := caller(ctx)
	if err != nil {
		return nil, zero, err
	}
	if !kpool.IsUUID(objID) {
		return nil, zero, notFound(kind, objID)
	}
	obj, err := get(ctx, objID)
	if kpool.IsNotFound(err) {
		return nil, zero, notFound(kind, objID)
	}
	if err != nil {
		return nil, zero, err
	}
	owner, team := scope(obj)
	if err := access(ctx, id, kind, objID, owner, team, l); err != nil {
		return nil, zero, err
	}
	return id, obj, nil
}

func clusterScope(c *kpool.Cluster) (string, string) { return c.CreatedBy, c.Team }

func poolScope(p *kpool.NodePool) (string, string) { return p.ClusterOwner, p.ClusterTeam }

// visibleCluster returns the cluster if the caller may see it.
func (s *Service) visibleCluster(ctx context.Context, clusterID string) (*kpool.Identity, *kpool.Cluster, error) {
	return find(ctx, "Cluster", clusterID, s.Store.Cluster, clusterScope, kpool.Read)
}

// operableCluster returns the cluster if the caller may change its pools.
func (s *Service) operableCluster(ctx context.Context, clusterID string) (*kpool.Identity, *kpool.Cluster, error) {
	return find(ctx, "Cluster", clusterID, s.Store.Cluster, clusterScope, kpool.Operate)
}

// manageableCluster returns the cluster if the caller may change it.
func (s *Service) manageableCluster(ctx context.Context, clusterID string) (*kpool.Identity, *kpool.Cluster, error) {
	return find(ctx, "Cluster", clusterID, s.Store.Cluster, clusterScope, kpool.Manage)
}

// visiblePool returns the pool if the caller may see it.
func (s *Service) visiblePool(ctx context.Context, poolID string) (*kpool.Identity, *kpool.NodePool, error) {
	return find(ctx, "NodePool", poolID, s.Store.NodePool, poolScope, kpool.Read)
}

// lockPool reads and locks a pool in tx for the caller, who must be allowed
// to act on it at level l: the check happens on the row the transaction
// holds, which saves a read before it.
func lockPool(ctx context.Context, tx kpool.Tx, id *kpool.Identity, poolID string, l kpool.Level) (*kpool.NodePool, *kpool.Cluster, []kpool.ControllerStatus, error) {
	p, c, reports, err := tx.NodePool(poolID)
	if kpool.IsNotFound(err) {
		return nil, nil, nil, notFound("NodePool", poolID)
	}
	if err == nil {
		err = access(ctx, id, "NodePool", poolID, p.ClusterOwner, p.ClusterTeam, l)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	return p, c, reports, nil
}

// mayJoinTeam checks that the caller may put a cluster in team: an admin of
// the team (or of kpool).
func mayJoinTeam(id *kpool.Identity, team string) error {
	if team == "" || id.Admin || id.Role(team) == kpool.TeamAdmin {
		return nil
	}
	reason := fmt.Sprintf("only an admin of team %s may put a cluster in it", team)
	return &kpool.Error{Code: kpool.CodeForbidden, Message: "Not allowed in this team", Details: "team: " + reason,
		Fields: []kpool.FieldError{{Field: "team", Reason: reason}}}
}

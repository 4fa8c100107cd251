package kpool

import (
	"context"
	"fmt"
)

// Level is what a caller asks to do with a cluster or its pools.
type Level int

const (
	// Read: see the cluster, its pools, their status and events.
	Read Level = iota
	// Operate: also create, change and delete the cluster's pools.
	Operate
	// Manage: also change and delete the cluster itself.
	Manage
)

// role is the team role a level needs.
func (l Level) role() TeamRole {
	switch l {
	case Operate:
		return TeamOperator
	case Manage:
		return TeamAdmin
	}
	return TeamViewer
}

func (l Level) String() string {
	switch l {
	case Operate:
		return "change its node pools"
	case Manage:
		return "change or delete the cluster"
	}
	return "read it"
}

// may reports whether the caller sees a cluster of owner and team, and
// whether it may act on it at level l. Admins may do everything;
// controllers read everything; the owner may do everything with its
// cluster; a team member what its role allows.
func (id *Identity) may(owner, team string, l Level) (seen, allowed bool) {
	switch {
	case id.Admin || id.Owns(owner):
		return true, true
	case id.Controller:
		return true, l == Read
	}
	r := id.Role(team)
	return r != "", r.Allows(l.role())
}

// Sees reports whether the caller may read a cluster of owner and team,
// and its pools and events.
func (id *Identity) Sees(owner, team string) bool {
	seen, _ := id.may(owner, team, Read)
	return seen
}

// access decides whether id may see an object of a cluster of owner and
// team or, at a level above Read, act on it. One it may not see is
// NOT_FOUND (no leak that it exists); one it may see but not act on is
// FORBIDDEN, saying what its role allows.
func access(ctx context.Context, id *Identity, kind, objID, owner, team string, l Level) error {
	seen, allowed := id.may(owner, team, l)
	if !seen {
		return notFound(kind, objID)
	}
	if l == Read {
		return nil
	}
	if _, err := writer(ctx); err != nil {
		return err
	}
	if allowed {
		return nil
	}
	if r := id.Role(team); r != "" {
		return Errorf(CodeForbidden, "you are a %s of team %s: only a team %s may %s", r, team, l.role(), l)
	}
	return Errorf(CodeForbidden, "only the cluster's owner or an admin may %s", l)
}

// find reads an object for the caller: one the caller may not see is
// NOT_FOUND (no leak that it exists); one it may see but not act on at
// level l is FORBIDDEN. scope returns the owner and team of the object's
// cluster.
func find[T any](ctx context.Context, kind, objID string, get func(context.Context, string) (T, error), scope func(T) (string, string), l Level) (*Identity, T, error) {
	var zero T
	id, err := caller(ctx)
	if err != nil {
		return nil, zero, err
	}
	if !IsUUID(objID) {
		return nil, zero, notFound(kind, objID)
	}
	obj, err := get(ctx, objID)
	if IsNotFound(err) {
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

func clusterScope(c *Cluster) (string, string) { return c.CreatedBy, c.Team }
func poolScope(p *NodePool) (string, string)   { return p.ClusterOwner, p.ClusterTeam }

// visibleCluster returns the cluster if the caller may see it.
func (s *Service) visibleCluster(ctx context.Context, clusterID string) (*Identity, *Cluster, error) {
	return find(ctx, "Cluster", clusterID, s.Store.Cluster, clusterScope, Read)
}

// operableCluster returns the cluster if the caller may change its pools.
func (s *Service) operableCluster(ctx context.Context, clusterID string) (*Identity, *Cluster, error) {
	return find(ctx, "Cluster", clusterID, s.Store.Cluster, clusterScope, Operate)
}

// manageableCluster returns the cluster if the caller may change it.
func (s *Service) manageableCluster(ctx context.Context, clusterID string) (*Identity, *Cluster, error) {
	return find(ctx, "Cluster", clusterID, s.Store.Cluster, clusterScope, Manage)
}

// visiblePool returns the pool if the caller may see it.
func (s *Service) visiblePool(ctx context.Context, poolID string) (*Identity, *NodePool, error) {
	return find(ctx, "NodePool", poolID, s.Store.NodePool, poolScope, Read)
}

// lockPool reads and locks a pool in tx for the caller, who must be allowed
// to act on it at level l: the check happens on the row the transaction
// holds, which saves a read before it.
func lockPool(ctx context.Context, tx Tx, id *Identity, poolID string, l Level) (*NodePool, *Cluster, []ControllerStatus, error) {
	p, c, reports, err := tx.NodePool(poolID)
	if IsNotFound(err) {
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
func mayJoinTeam(id *Identity, team string) error {
	if team == "" || id.Admin || id.Role(team) == TeamAdmin {
		return nil
	}
	reason := fmt.Sprintf("only an admin of team %s may put a cluster in it", team)
	return &Error{Code: CodeForbidden, Message: "Not allowed in this team", Details: "team: " + reason,
		Fields: []FieldError{{Field: "team", Reason: reason}}}
}

package service

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/audit"
)

// Clusters: registering, reading, changing and deleting them.

// CreateCluster registers a cluster owned by the caller, in a team when
// the request names one the caller is an admin of. A cloud cluster is
// registered once: a second registration of it (the same CloudID at the
// same endpoint) is a CONFLICT.
func (s *Service) CreateCluster(ctx context.Context, in ClusterCreate) (*kpool.Cluster, error) {
	id, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	c := &kpool.Cluster{ID: in.ID, Name: in.Name, CreatedBy: id.Email, Team: in.Team}
	if err := specOrHeader(in.Spec, &c.Spec, c.Name, c.ID); err != nil {
		return nil, err
	}
	if err := kpool.ValidateCluster(s.Platforms, c); err != nil {
		return nil, err
	}
	if err := mayJoinTeam(id, c.Team); err != nil {
		return nil, err
	}
	if c.Grant, _, err = s.authorizeCloud(id, c.Team, false, nil, &c.Spec); err != nil {
		return nil, err
	}
	if c.KubeconfigGrant, _, err = s.authorizeKubeconfig(id, c.Team, false, nil, &c.Spec); err != nil {
		return nil, err
	}
	if c.ID == "" {
		c.ID = newID()
	}
	now := s.now()
	c.Generation, c.CreatedAt, c.UpdatedAt = 1, now, now
	c.ResourceVersion = NewResourceVersion()
	c.Status = kpool.ClusterStatus{Phase: kpool.ClusterActive}
	c.CloudID = s.cloudID(c)
	err = s.insert(ctx, in.DryRun, func(tx kpool.Tx) error {
		if err := tx.CreateCluster(c); err != nil {
			return err
		}
		ev := audit.ClusterEvent(ctx, kpool.EventClusterCreated, c, 0, id.Email)
		ev.CreatedAt = now
		return tx.AddEvent(ev)
	})
	if errors.Is(err, kpool.ErrCloudClusterTaken) {
		return nil, s.cloudTaken(ctx, id, c)
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// cloudID is what the unique index compares: the platform, the cloud's
// name of the cluster, and the endpoint it is reached at ("" for a
// platform without clusters of its own).
func (s *Service) cloudID(c *kpool.Cluster) string {
	pl, ok := s.Platforms.Platform(c.Spec.Platform.Type)
	if !ok {
		return ""
	}
	name := pl.CloudID(&c.Spec)
	if name == "" {
		return ""
	}
	at := "the public endpoint"
	if e := c.Spec.Endpoint; e != "" {
		at = e
		if o, err := kpool.Origin(e); err == nil {
			at = o
		}
	}
	return string(c.Spec.Platform.Type) + " " + name + " at " + at
}

// cloudTaken is the answer to a registration of a cloud cluster that is
// registered already. It names the other registration only to a caller
// who may see it.
func (s *Service) cloudTaken(ctx context.Context, id *kpool.Identity, c *kpool.Cluster) error {
	why := "kpool would manage its node pools twice; use the existing registration (its owner can share it with a team)"
	if other, err := s.Store.ClusterByCloudID(ctx, c.CloudID); err == nil && other.ID != c.ID && id.Sees(other.CreatedBy, other.Team) {
		why = fmt.Sprintf("it is cluster %s (%s); use that registration", other.Name, other.ID)
	}
	return &kpool.Error{Code: kpool.CodeConflict, Message: "This cloud cluster is registered already",
		Details: "spec.platform: " + why, Fields: []kpool.FieldError{{Field: "spec.platform", Reason: "the cloud cluster is registered already: " + why}}}
}

// poolCaller returns the caller of a pool operation, refusing an id that
// cannot name a pool before any read.
func poolCaller(ctx context.Context, poolID string) (*kpool.Identity, error) {
	id, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if !kpool.IsUUID(poolID) {
		return nil, notFound("NodePool", poolID)
	}
	return id, nil
}

// Cluster returns one cluster the caller may see.
func (s *Service) Cluster(ctx context.Context, clusterID string) (*kpool.Cluster, error) {
	_, c, err := s.visibleCluster(ctx, clusterID)
	return c, err
}

// Clusters lists the clusters the caller may see.
func (s *Service) Clusters(ctx context.Context, o ListOptions) (*List[*kpool.Cluster], error) {
	id, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	f := kpool.ClusterFilter{Name: o.Name}
	f.Owner, f.Teams = id.Visible()
	if f.Page, err = page(o); err != nil {
		return nil, err
	}
	limit := f.Limit
	f.Limit++ // one more row than asked says whether a next page exists
	items, total, err := s.Store.Clusters(ctx, f)
	return pageOf(items, total, limit, func(c *kpool.Cluster) kpool.Cursor { return kpool.Cursor{CreatedAt: c.CreatedAt, ID: c.ID} }), err
}

// UpdateCluster applies a PUT or PATCH to a cluster. The platform type and
// the fields that say which cloud cluster it is are immutable. A new team
// needs an admin of it (see mayJoinTeam).
func (s *Service) UpdateCluster(ctx context.Context, clusterID string, u Update) (*kpool.Cluster, error) {
	id, _, err := s.manageableCluster(ctx, clusterID)
	if err != nil {
		return nil, err
	}
	var out *kpool.Cluster
	err = s.write(ctx, u.DryRun, func(tx kpool.Tx) error {
		c, err := tx.Cluster(clusterID)
		if err != nil {
			return err
		}
		if err := precondition(u.ResourceVersion, c.ResourceVersion, "Cluster", c.Name); err != nil {
			return err
		}
		if c.Deleting() {
			return kpool.Errorf(kpool.CodeConflict, "Cluster '%s' is being deleted", c.Name)
		}
		if u.Name != nil && *u.Name != c.Name {
			return kpool.Invalid("name", "immutable: the cluster is named %q; register a new cluster to use another name", c.Name)
		}
		out = c
		next, err := s.nextCluster(id, c, u)
		if err != nil || next == nil {
			return err
		}
		next.UpdatedAt = s.now()
		if !specEqual(c.Spec, next.Spec) {
			next.Generation = c.Generation + 1
		}
		out = next // what cloudTaken names, if the write is refused
		if err := updateCluster(tx, next); err != nil {
			return err
		}
		ev := audit.ClusterEvent(ctx, kpool.EventClusterUpdated, next, c.Generation, id.Email)
		ev.Detail, ev.CreatedAt = audit.ChangedFields("spec.", c.Spec, next.Spec), next.UpdatedAt
		if next.Team != c.Team {
			ev.Detail = strings.TrimPrefix(ev.Detail+fmt.Sprintf(", team %q -> %q", c.Team, next.Team), ", ")
		}
		return tx.AddEvent(ev)
	})
	if errors.Is(err, kpool.ErrCloudClusterTaken) {
		return nil, s.cloudTaken(ctx, id, out)
	}
	if err != nil {
		return nil, err
	}
	s.clusters.forget(clusterID)
	return out, nil
}

// nextCluster is c after the update u, checked; nil when nothing changes.
func (s *Service) nextCluster(id *kpool.Identity, c *kpool.Cluster, u Update) (*kpool.Cluster, error) {
	if u.Spec == nil && (u.Team == nil || *u.Team == c.Team) {
		return nil, nil // nothing sent
	}
	next := *c
	var err error
	if u.Spec != nil {
		if next.Spec, err = mergeSpec(c.Spec, u.Spec, u.Patch); err != nil {
			return nil, err
		}
	}
	if u.Team != nil {
		next.Team = *u.Team
	}
	if err := kpool.ValidateCluster(s.Platforms, &next); err != nil {
		return nil, err
	}
	if err := s.clusterImmutable(&c.Spec, &next.Spec); err != nil {
		return nil, err
	}
	if next.Team != c.Team {
		if err := mayJoinTeam(id, next.Team); err != nil {
			return nil, err
		}
	}
	// A credential sent again is chosen again: its grant is the caller's.
	chosen := next.Team != c.Team || (u.Spec != nil && carries(u.Spec, "credential"))
	basis, keep, err := s.authorizeCloud(id, next.Team, chosen, &c.Spec, &next.Spec)
	if err != nil {
		return nil, err
	}
	kubeChosen := next.Team != c.Team || (u.Spec != nil && carries(u.Spec, "kubeconfig"))
	kbasis, kkeep, err := s.authorizeKubeconfig(id, next.Team, kubeChosen, &c.Spec, &next.Spec)
	if err != nil {
		return nil, err
	}
	if !kkeep {
		next.KubeconfigGrant = kbasis
	}
	if !keep {
		next.Grant = basis
	}
	if specEqual(c.Spec, next.Spec) && next.Team == c.Team && next.Grant == c.Grant && next.KubeconfigGrant == c.KubeconfigGrant {
		return nil, nil
	}
	next.CloudID = s.cloudID(&next)
	return &next, nil
}

// clusterImmutable refuses changes to the fields that identify the cloud
// cluster: pointing a registration at another cluster would orphan its pools.
func (s *Service) clusterImmutable(old, next *kpool.ClusterSpec) error {
	var fe kpool.FieldErrors
	if old.Platform.Type != next.Platform.Type {
		fe.Add("spec.platform.type", "immutable: the cluster is on %q", old.Platform.Type)
	} else if pl, ok := s.Platforms.Platform(old.Platform.Type); ok {
		now := map[string]string{}
		for _, f := range pl.ClusterIdentity(next) {
			now[f.Path] = f.Value
		}
		for _, f := range pl.ClusterIdentity(old) {
			if now[f.Path] != f.Value {
				fe.Add("spec.platform."+f.Path, "immutable: it names the cloud cluster (%q); register a new cluster instead", f.Value)
			}
		}
	}
	return fe.Err()
}

// BackfillCloudIDs gives every cluster registered before kpool knew cloud
// identities its CloudID, and returns the registrations that name a cloud
// cluster another registration already has: those keep none, and the
// operator should delete one of each pair. It runs once at start; a
// cluster with its CloudID costs a read.
func (s *Service) BackfillCloudIDs(ctx context.Context) (duplicates []string, err error) {
	page := kpool.Page{Limit: kpool.MaxLimit}
	for {
		cs, _, err := s.Store.Clusters(ctx, kpool.ClusterFilter{Page: page})
		if err != nil {
			return duplicates, err
		}
		for _, c := range cs {
			if c.CloudID != "" || s.cloudID(c) == "" {
				continue
			}
			err := s.write(ctx, false, func(tx kpool.Tx) error {
				locked, err := tx.Cluster(c.ID)
				if err != nil || locked.CloudID != "" {
					return err
				}
				locked.CloudID = s.cloudID(locked)
				return updateCluster(tx, locked)
			})
			switch {
			case errors.Is(err, kpool.ErrCloudClusterTaken):
				duplicates = append(duplicates, fmt.Sprintf("cluster %s (%s, owner %s) is %s, which another registration has", c.Name, c.ID, c.CreatedBy, s.cloudID(c)))
			case err != nil && !kpool.IsNotFound(err):
				return duplicates, err
			}
		}
		if len(cs) < page.Limit {
			return duplicates, nil
		}
		page.After = &kpool.Cursor{CreatedAt: cs[len(cs)-1].CreatedAt, ID: cs[len(cs)-1].ID}
	}
}

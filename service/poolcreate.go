package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/audit"
	"github.com/kpool/kpool/internal/jsondoc"
)

// CreateNodePool creates a pool in a cluster the caller may change.
func (s *Service) CreateNodePool(ctx context.Context, in NodePoolCreate) (*kpool.NodePool, error) {
	p, _, err := s.CreateNodePoolPlan(ctx, in)
	return p, err
}

// CreateNodePoolPlan is CreateNodePool that also returns the plan: no
// changes, and a warning for each field set that the provider does not apply.
func (s *Service) CreateNodePoolPlan(ctx context.Context, in NodePoolCreate) (*kpool.NodePool, kpool.Plan, error) {
	p, warnings, err := s.createNodePool(ctx, in)
	if err != nil {
		return nil, kpool.Plan{Changes: []kpool.Change{}}, err
	}
	return p, kpool.Plan{Provider: string(p.Spec.Platform.Type), ProviderName: p.ProviderName, Changes: []kpool.Change{}, Warnings: warnings}, nil
}

func (s *Service) createNodePool(ctx context.Context, in NodePoolCreate) (*kpool.NodePool, []string, error) {
	clusterID, err := kpool.RefID("cluster_id", in.ClusterID)
	if err != nil {
		// No cluster to check the spec against: what can be checked
		// without one is reported with it.
		var fe kpool.FieldErrors
		addFields(&fe, err)
		if len(in.Spec) == 0 {
			fe.Add("spec", "required")
		}
		kpool.ValidateName(&fe, "name", in.Name)
		kpool.ValidateID(&fe, "id", in.ID)
		return nil, nil, fe.Err()
	}
	in.ClusterID = clusterID
	if in.ID == "" {
		in.ID = newID()
	}
	// The pool is checked against the cluster as cached (see clusterCache);
	// if the cluster has changed since, the database refuses the write and
	// the pool is checked again against the cluster as it is.
	fresh := false
	for attempt := 0; ; attempt++ {
		id, c, cached, err := s.clusterForCreate(ctx, in.ClusterID, fresh)
		if err != nil {
			return nil, nil, err
		}
		p, err := s.newPool(id, c, in)
		if err != nil && cached {
			fresh = true // refused by a cluster that may have changed: ask again
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		warnings, err := s.advisories(c, &p.Spec, in.Spec)
		if err != nil {
			return nil, nil, err
		}
		pw, err := s.preflight(ctx, c, &p.Spec, nil)
		if err != nil {
			return nil, nil, err
		}
		warnings = append(warnings, pw...)
		if err := s.checkLogicalPool(ctx, c, p); err != nil {
			return nil, nil, err
		}
		err = inCluster(s.insertPool(ctx, id, c, p, in.DryRun), c)
		switch {
		case errors.Is(err, kpool.ErrClusterChanged) && attempt < 2:
			s.clusters.forget(c.ID)
			fresh = true
			continue
		case errors.Is(err, kpool.ErrClusterChanged):
			return nil, nil, kpool.Errorf(kpool.CodeConflict, "Cluster '%s' is changing; try again", c.Name)
		case errors.Is(err, kpool.ErrClusterDeleting):
			s.clusters.forget(c.ID)
			return nil, nil, kpool.Errorf(kpool.CodeConflict, "Cluster '%s' is being deleted", c.Name)
		case kpool.IsNotFound(err):
			s.clusters.forget(c.ID)
			return nil, nil, notFound("Cluster", c.ID)
		case errors.Is(err, kpool.ErrProviderNameTaken):
			return nil, nil, &kpool.Error{Code: kpool.CodeConflict, Message: "No free provider name for node pool '" + p.Name + "'",
				Details: "pools are being created with names that map to the same provider names; try again"}
		case err != nil:
			return nil, nil, err
		}
		return p, warnings, nil
	}
}

// advisories returns a warning for each field of spec that sent (the
// request's spec) carries and that the pool's provider stores but does not
// apply (class advisory in its capabilities): those the plan of a create,
// from nothing to spec, classes advisory. Only the autoscaler's targets and
// delays can be, so a spec without them costs nothing.
func (s *Service) advisories(c *kpool.Cluster, spec *kpool.NodePoolSpec, sent json.RawMessage) ([]string, error) {
	a := spec.Autoscaling
	if a == nil || (a.TargetCPUUtilization == nil && a.TargetMemoryUtilization == nil && a.ScaleDownDelay == "" && a.ScaleUpDelay == "") {
		return nil, nil
	}
	pl, err := s.Platforms.Plan(c, &kpool.NodePoolSpec{}, spec)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ch := range pl.Changes {
		if ch.Class == kpool.UpdateAdvisory && jsondoc.Carries(sent, strings.TrimPrefix(ch.Field, "spec.")) {
			out = append(out, ch.Warning())
		}
	}
	return out, nil
}

// clusterForCreate returns the cluster a pool is to be created in, if the
// caller may change it: from the cache unless fresh (cached says which).
func (s *Service) clusterForCreate(ctx context.Context, clusterID string, fresh bool) (id *kpool.Identity, c *kpool.Cluster, cached bool, err error) {
	if id, err = caller(ctx); err != nil {
		return nil, nil, false, err
	}
	if !fresh {
		c = s.clusters.get(clusterID, s.now())
	}
	if c == nil {
		if _, c, err = s.operableCluster(ctx, clusterID); err != nil {
			return nil, nil, false, err
		}
		s.clusters.put(c, s.now())
		return id, c, false, nil
	}
	if err := access(ctx, id, "Cluster", clusterID, c.CreatedBy, c.Team, kpool.Operate); err != nil {
		return nil, nil, false, err
	}
	return id, c, true, nil
}

// newPool builds and checks a new pool of cluster c from a create request.
func (s *Service) newPool(id *kpool.Identity, c *kpool.Cluster, in NodePoolCreate) (*kpool.NodePool, error) {
	if err := s.credentialHolds(c); err != nil {
		return nil, err
	}
	if pl, ok := s.Platforms.Platform(c.Spec.Platform.Type); !ok {
		return nil, &kpool.Error{Code: kpool.CodeNotImplemented, Message: fmt.Sprintf("Platform %q has no node pools", c.Spec.Platform.Type),
			Details: fmt.Sprintf("cluster %s runs on %s, which kpool does not know", c.Name, c.Spec.Platform.Type)}
	} else if !pl.HasNodePools() {
		return nil, pl.NoPools("nodepool create")
	}
	p := &kpool.NodePool{ID: in.ID, Name: in.Name, ClusterID: c.ID, CreatedBy: id.Email, ClusterOwner: c.CreatedBy, ClusterTeam: c.Team}
	if err := specOrHeader(in.Spec, &p.Spec, p.Name, p.ID); err != nil {
		return nil, err
	}
	s.defaults(&p.Spec, c)
	if err := kpool.ValidateNodePool(s.Platforms, p, c); err != nil {
		return nil, err
	}
	if err := s.Platforms.CheckCreate(c, &p.Spec); err != nil {
		return nil, err
	}
	first, err := s.Platforms.ProviderNames(c, p.Name, 1)
	if err != nil {
		return nil, err
	}
	p.ProviderName = first[0]
	return p, foreignObserved(id, c, p)
}

// insertPool writes a new pool. The database checks the names (unique
// indexes), that the cluster is still at the generation the pool was checked
// against and is not being deleted (a trigger), so a create reads nothing
// first and costs the same in a cluster of any size. Only when the preferred
// provider name is taken are the other candidates looked up, and the create
// runs again with a free one.
func (s *Service) insertPool(ctx context.Context, id *kpool.Identity, c *kpool.Cluster, p *kpool.NodePool, dry bool) error {
	var err error
	for attempt := 0; ; attempt++ {
		write := s.insert
		if attempt > 0 {
			write = s.write // it reads the taken names first
		}
		err = write(ctx, dry, func(tx kpool.Tx) error {
			if attempt > 0 {
				names, err := s.Platforms.ProviderNames(c, p.Name, 0)
				if err != nil {
					return err
				}
				taken, err := tx.ProviderNamesTaken(c.ID, names)
				if err != nil {
					return err
				}
				if p.ProviderName, err = freeName(names, taken, p.Name, c); err != nil {
					return err
				}
			}
			return s.insertNew(ctx, tx, c, p, id.Email, "")
		})
		if !errors.Is(err, kpool.ErrProviderNameTaken) || attempt == 2 {
			return err
		}
	}
}

// insertNew writes a new pool at generation 1, checked against its
// cluster at the cluster's generation, with its created event (detail, if
// any, says how it came to be).
func (s *Service) insertNew(ctx context.Context, tx kpool.Tx, c *kpool.Cluster, p *kpool.NodePool, actor, detail string) error {
	now := s.now()
	p.Generation, p.CreatedAt, p.UpdatedAt = 1, now, now
	p.ResourceVersion = NewResourceVersion()
	p.Status = s.aggregate(p, nil, kpool.NodePoolStatus{}, now)
	if err := tx.CreateNodePool(p, c.Generation); err != nil {
		return err
	}
	ev := audit.PoolEvent(ctx, kpool.EventNodePoolCreated, p, 0, actor)
	ev.Detail, ev.CreatedAt = detail, now
	return tx.AddEvent(ev)
}

// inCluster finishes the store's "… already exists in cluster" (a name
// taken, which the store tells by the unique index, knowing only the
// cluster's id) with the cluster's name, for the person who reads it.
func inCluster(err error, c *kpool.Cluster) error {
	var e *kpool.Error
	if c == nil || !errors.As(err, &e) || e.Code != kpool.CodeConflict || !strings.HasSuffix(e.Message, " already exists in cluster") {
		return err
	}
	named := *e
	named.Message += " '" + c.Name + "'"
	return &named
}

// freeName returns the first of a pool's provider name candidates that no
// other pool of the cluster has.
func freeName(names, taken []string, pool string, c *kpool.Cluster) (string, error) {
	for _, n := range names {
		if !slices.Contains(taken, n) {
			return n, nil
		}
	}
	return "", &kpool.Error{Code: kpool.CodeConflict, Message: "No free provider name for node pool '" + pool + "'",
		Details: "every name derived from it is taken in cluster " + c.Name + " at " + string(c.Spec.Platform.Type) + "; choose another pool name"}
}

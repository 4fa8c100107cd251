package service

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/kpool/kpool"
)

// checkLogicalPool checks a pool joining a logical pool (spec.placementPool)
// against the other members in its cluster: single-zone members may not
// share a zone unless their offerings differ (a zone's fallback member, of
// another machine type or on-demand, sits next to the short one), and every member has the same taints, so that a pod
// tolerating one may land on all. It reads the cluster's pools, which only a
// member pays for.
func (s *Service) checkLogicalPool(ctx context.Context, c *kpool.Cluster, p *kpool.NodePool, also ...*kpool.NodePool) error {
	if p.Spec.PlacementPool == "" {
		return nil
	}
	others := slices.Clone(also)
	f := kpool.NodePoolFilter{ClusterID: c.ID, Page: kpool.Page{Limit: kpool.MaxLimit}}
	for {
		page, _, err := s.Store.NodePools(ctx, f)
		if err != nil {
			return err
		}
		others = append(others, page...)
		if len(page) < f.Limit {
			break
		}
		last := page[len(page)-1]
		f.After = &kpool.Cursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	var fe kpool.FieldErrors
	logical := p.LogicalPool()
	for _, m := range others {
		if m.ID == p.ID || m.Deleting() || m.LogicalPool() != logical {
			continue
		}
		if !sameTaints(m.Spec.Taints, p.Spec.Taints) {
			fe.Add("spec.taints", "pool %s, a member of logical pool %s, has taints %s: every member needs the same taints, so that a pod tolerating one can land on all",
				m.Name, logical, taintList(m.Spec.Taints))
		}
		if len(m.Spec.Zones) == 1 && len(p.Spec.Zones) == 1 && m.Spec.Zones[0] == p.Spec.Zones[0] &&
			s.Platforms.Offering(c, &m.Spec) == s.Platforms.Offering(c, &p.Spec) {
			fe.Add("spec.zones", "pool %s of logical pool %s is in zone %s already, of the same machine type and spot: single-zone members of one offering must be in different zones",
				m.Name, logical, m.Spec.Zones[0])
		}
	}
	return fe.Err()
}

func sameTaints(a, b []kpool.Taint) bool {
	if len(a) != len(b) {
		return false
	}
	for _, t := range a {
		if !slices.Contains(b, t) {
			return false
		}
	}
	return true
}

func taintList(ts []kpool.Taint) string {
	if len(ts) == 0 {
		return "none"
	}
	var out []string
	for _, t := range ts {
		s := t.Key
		if t.Value != "" {
			s += "=" + t.Value
		}
		out = append(out, s+":"+t.Effect)
	}
	return strings.Join(out, ", ")
}

// CreateZonalNodePools creates a zonal logical pool in one request: one
// member per zone of in's spec.zones, named NAME-ZONE, each in its zone
// with spec.placementPool NAME (or the spec's own), so that the cluster
// autoscaler balances the zones and workloads select the logical pool. The
// members are written in one transaction: all of them, or none.
func (s *Service) CreateZonalNodePools(ctx context.Context, in NodePoolCreate) ([]*kpool.NodePool, error) {
	var base kpool.NodePoolSpec
	var fe kpool.FieldErrors
	kpool.ValidateName(&fe, "name", in.Name)
	if in.ID != "" {
		fe.Add("id", "a zonal pool's members get ids of their own: send none")
	}
	if len(in.Spec) == 0 {
		fe.Add("spec", "required")
	} else if err := json.Unmarshal(in.Spec, &base); err != nil {
		fe.Add("spec", "not a node pool spec: %v", err)
	}
	if len(fe) == 0 && len(base.Zones) == 0 {
		fe.Add("spec.zones", "required: the zones to make one pool each in (logical zones, such as 1, 2, 3)")
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	clusterID, err := kpool.RefID("cluster_id", in.ClusterID)
	if err != nil {
		return nil, err
	}
	id, c, _, err := s.clusterForCreate(ctx, clusterID, true)
	if err != nil {
		return nil, err
	}
	logical := base.PlacementPool
	if logical == "" {
		logical = in.Name
	}
	var members []*kpool.NodePool
	for _, z := range base.Zones {
		var spec map[string]any
		_ = json.Unmarshal(in.Spec, &spec)
		spec["zones"] = []string{z}
		spec["placementPool"] = logical
		raw, _ := json.Marshal(spec)
		p, err := s.newPool(id, c, NodePoolCreate{ID: newID(), Name: in.Name + "-" + strings.ToLower(z), ClusterID: c.ID, Spec: raw})
		if err != nil {
			return nil, prefixFields(err, "zone "+z)
		}
		members = append(members, p)
	}
	for i, p := range members {
		others := append(slices.Clone(members[:i]), members[i+1:]...)
		if err := s.checkLogicalPool(ctx, c, p, others...); err != nil {
			return nil, err
		}
	}
	err = s.write(ctx, in.DryRun, func(tx kpool.Tx) error {
		for _, p := range members {
			if err := s.insertNew(ctx, tx, c, p, id.Email, "member of zonal logical pool "+logical); err != nil {
				return err
			}
		}
		return nil
	})
	switch {
	case errors.Is(err, kpool.ErrClusterChanged):
		s.clusters.forget(c.ID)
		return nil, kpool.Errorf(kpool.CodeConflict, "Cluster '%s' changed while the pools were created; try again", c.Name)
	case errors.Is(err, kpool.ErrClusterDeleting):
		return nil, kpool.Errorf(kpool.CodeConflict, "Cluster '%s' is being deleted", c.Name)
	case errors.Is(err, kpool.ErrProviderNameTaken):
		return nil, &kpool.Error{Code: kpool.CodeConflict, Message: "A member's provider name is taken", Details: "another pool of cluster " + c.Name + " has the name a member maps to at the provider; choose another name"}
	case err != nil:
		return nil, err
	}
	return members, nil
}

// prefixFields says which member a validation error is about.
func prefixFields(err error, what string) error {
	var e *kpool.Error
	if errors.As(err, &e) && e.Code == kpool.CodeValidation {
		e.Message = what + ": " + e.Message
	}
	return err
}

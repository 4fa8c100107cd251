package service

import (
	"context"

	"github.com/kpool/kpool"
)

// NodePool returns one pool the caller may see.
func (s *Service) NodePool(ctx context.Context, poolID string) (*kpool.NodePool, error) {
	_, p, err := s.visiblePool(ctx, poolID)
	return p, err
}

// NodePools lists the pools the caller may see.
func (s *Service) NodePools(ctx context.Context, o ListOptions) (*List[*kpool.NodePool], error) {
	raw, err := s.RawNodePools(ctx, o)
	if err != nil {
		return nil, err
	}
	l := &List[*kpool.NodePool]{Items: make([]*kpool.NodePool, len(raw.Items)), Total: raw.Total, Limit: raw.Limit, Next: raw.Next}
	for i, r := range raw.Items {
		if l.Items[i], err = r.Decode(); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// RawNodePool is NodePool with the spec and status as stored, for answers
// that pass the pool on as JSON.
func (s *Service) RawNodePool(ctx context.Context, poolID string) (*kpool.RawNodePool, error) {
	_, p, err := find(ctx, "NodePool", poolID, s.Store.RawNodePool, func(p *kpool.RawNodePool) (string, string) { return p.ClusterOwner, p.ClusterTeam }, kpool.Read)
	return p, err
}

// RawNodePools is NodePools with each pool's spec and status as stored.
func (s *Service) RawNodePools(ctx context.Context, o ListOptions) (*List[*kpool.RawNodePool], error) {
	id, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	f := kpool.NodePoolFilter{ClusterID: o.ClusterID, Name: o.Name, Phase: o.Phase, Health: o.Health, Labels: o.Labels}
	f.Owner, f.Teams = id.Visible()
	if f.Page, err = page(o); err != nil {
		return nil, err
	}
	limit := f.Limit
	f.Limit++ // one more row than asked says whether a next page exists
	items, total, err := s.Store.RawNodePools(ctx, f)
	if err != nil {
		return nil, err
	}
	return pageOf(items, total, limit, func(p *kpool.RawNodePool) kpool.Cursor { return kpool.Cursor{CreatedAt: p.CreatedAt, ID: p.ID} }), nil
}

// NodePoolCounts returns how many pools each cluster the caller sees has
// in each phase (ClusterID, when set, narrows it to one cluster), from the
// store's counters: as cheap with a million pools as with ten.
func (s *Service) NodePoolCounts(ctx context.Context, clusterID string) ([]kpool.PoolCount, error) {
	id, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	f := kpool.NodePoolFilter{ClusterID: clusterID}
	f.Owner, f.Teams = id.Visible()
	return s.Store.NodePoolCounts(ctx, f)
}

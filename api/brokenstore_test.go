package api

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/kpool/kpool"
)

// errBroken is a store failure that is not a kpool error (a bug, a corrupt
// row): the API answers 500 INTERNAL.
var errBroken = errors.New("store broken for the test")

// brokenStore fails every read and write with errBroken while failing is set.
type brokenStore struct {
	kpool.Store
	failing atomic.Bool
}

func (b *brokenStore) Cluster(ctx context.Context, id string) (*kpool.Cluster, error) {
	if b.failing.Load() {
		return nil, errBroken
	}
	return b.Store.Cluster(ctx, id)
}

func (b *brokenStore) AuditEvents(ctx context.Context, f kpool.EventFilter) ([]kpool.Event, error) {
	if b.failing.Load() {
		return nil, errBroken
	}
	return b.Store.AuditEvents(ctx, f)
}

func (b *brokenStore) Clusters(ctx context.Context, f kpool.ClusterFilter) ([]*kpool.Cluster, int, error) {
	if b.failing.Load() {
		return nil, 0, errBroken
	}
	return b.Store.Clusters(ctx, f)
}

func (b *brokenStore) NodePool(ctx context.Context, id string) (*kpool.NodePool, error) {
	if b.failing.Load() {
		return nil, errBroken
	}
	return b.Store.NodePool(ctx, id)
}

func (b *brokenStore) NodePools(ctx context.Context, f kpool.NodePoolFilter) ([]*kpool.NodePool, int, error) {
	if b.failing.Load() {
		return nil, 0, errBroken
	}
	return b.Store.NodePools(ctx, f)
}

func (b *brokenStore) RawNodePool(ctx context.Context, id string) (*kpool.RawNodePool, error) {
	if b.failing.Load() {
		return nil, errBroken
	}
	return b.Store.RawNodePool(ctx, id)
}

func (b *brokenStore) RawNodePools(ctx context.Context, f kpool.NodePoolFilter) ([]*kpool.RawNodePool, int, error) {
	if b.failing.Load() {
		return nil, 0, errBroken
	}
	return b.Store.RawNodePools(ctx, f)
}

func (b *brokenStore) ControllerStatuses(ctx context.Context, poolID string) ([]kpool.ControllerStatus, error) {
	if b.failing.Load() {
		return nil, errBroken
	}
	return b.Store.ControllerStatuses(ctx, poolID)
}

func (b *brokenStore) Write(ctx context.Context, fn func(kpool.Tx) error) error {
	if b.failing.Load() {
		return errBroken
	}
	return b.Store.Write(ctx, fn)
}

func (b *brokenStore) Insert(ctx context.Context, fn func(kpool.Tx) error) error {
	if b.failing.Load() {
		return errBroken
	}
	return b.Store.Insert(ctx, fn)
}

package provider

import (
	"context"

	"github.com/kpool/kpool"
)

// FactsReader is a driver that learns what its provider offers a cluster
// (kpool.ClusterFacts): versions, zones and machine types, from the
// provider's own catalogue APIs. The controllers call it when a cluster
// is registered and on the slow resync; the API checks pools against
// what it returned (Preflight). A catalogue the credential may not read
// is noted in Partial, not an error; an error is the cluster's (not
// reachable, not found) and is classified as any driver error.
type FactsReader interface {
	ClusterFacts(ctx context.Context, c *kpool.Cluster) (*kpool.ClusterFacts, error)
}

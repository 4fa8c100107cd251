package service

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/kpool/kpool"
)

// Nodes: what a cluster's Kubernetes API says of its nodes, to those who may
// see the cluster or the pool, and kpool's own way to that API for its
// read-only proxy.

// errNodesOff is the answer of a kpool with no NodeSource or KubeProxy.
func errNodesOff(what string) error {
	return &kpool.Error{Code: kpool.CodeNotImplemented, Message: what + " is not configured",
		Details: "this kpool reads no cluster's Kubernetes API"}
}

// PoolNodes returns the nodes of a pool of a cluster (those whose cloud pool
// label names the pool's provider name), sorted by name, to a caller who
// may see the pool. A pool of another cluster is NOT_FOUND.
func (s *Service) PoolNodes(ctx context.Context, clusterID, poolID string) ([]kpool.Node, error) {
	_, p, err := s.visiblePool(ctx, poolID)
	if err != nil {
		return nil, err
	}
	if !strings.EqualFold(p.ClusterID, clusterID) {
		return nil, notFound("NodePool", poolID)
	}
	if s.Nodes == nil {
		return nil, errNodesOff("Node reading")
	}
	c, err := s.Store.Cluster(ctx, p.ClusterID)
	if err != nil {
		return nil, err
	}
	all, err := s.Nodes.ClusterNodes(ctx, c)
	if err != nil {
		return nil, err
	}
	name := p.ProviderName
	if name == "" {
		name = p.Name
	}
	out := []kpool.Node{}
	for _, n := range all {
		if n.Pool == name {
			out = append(out, n)
		}
	}
	sortNodes(out)
	return out, nil
}

// ClusterNodes returns every node of a cluster, sorted by name, to a caller
// who may see the cluster.
func (s *Service) ClusterNodes(ctx context.Context, clusterID string) ([]kpool.Node, error) {
	_, c, err := s.visibleCluster(ctx, clusterID)
	if err != nil {
		return nil, err
	}
	if s.Nodes == nil {
		return nil, errNodesOff("Node reading")
	}
	all, err := s.Nodes.ClusterNodes(ctx, c)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(all)
	if out == nil {
		out = []kpool.Node{}
	}
	sortNodes(out)
	return out, nil
}

// KubeTransport returns kpool's own way to a cluster's Kubernetes API (its
// server URL, and a round tripper that adds kpool's credential), to a caller
// who may see the cluster: the read-only proxy's upstream.
func (s *Service) KubeTransport(ctx context.Context, clusterID string) (*url.URL, http.RoundTripper, error) {
	_, c, err := s.visibleCluster(ctx, clusterID)
	if err != nil {
		return nil, nil, err
	}
	if s.Kube == nil {
		return nil, nil, errNodesOff("The Kubernetes API proxy")
	}
	return s.Kube.KubeTransport(ctx, c)
}

func sortNodes(ns []kpool.Node) {
	slices.SortFunc(ns, func(a, b kpool.Node) int { return strings.Compare(a.Name, b.Name) })
}

// ProxiedCluster returns a cluster a caller may see, for a kubeconfig of
// kpool's proxy to it: NOT_IMPLEMENTED when this kpool has no proxy.
func (s *Service) ProxiedCluster(ctx context.Context, clusterID string) (*kpool.Cluster, error) {
	_, c, err := s.visibleCluster(ctx, clusterID)
	if err != nil {
		return nil, err
	}
	if s.Kube == nil {
		return nil, errNodesOff("The Kubernetes API proxy")
	}
	return c, nil
}

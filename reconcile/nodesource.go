package reconcile

import (
	"context"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/kubeapi"
)

// NodeSource reads clusters' nodes from the controllers' watches where
// they run (this process leads and has listed the cluster's nodes), and
// from the cluster's API otherwise (Live): kpool.NodeSource for the API.
type NodeSource struct {
	Controller *Controller
	Live       kpool.NodeSource
}

// ClusterNodes returns cl's nodes, sorted by name, each with the placement
// labels it lacks as the last pass over its pool expected them.
func (s NodeSource) ClusterNodes(ctx context.Context, cl *kpool.Cluster) ([]kpool.Node, error) {
	c := s.Controller
	c.watches.mu.Lock()
	nw := c.watches.byCluster[cl.ID]
	c.watches.mu.Unlock()
	if nw == nil || nw.informer == nil || !nw.informer.HasSynced() {
		if s.Live == nil {
			return nil, kubeapi.ErrNoAccess
		}
		return s.Live.ClusterNodes(ctx, cl)
	}
	prof := c.cfg.Drivers.Profile(cl.Spec.Platform.Type)
	want := c.wanted(cl.ID)
	var out []kpool.Node
	for _, o := range nw.informer.GetStore().List() {
		n, ok := o.(*corev1.Node)
		if !ok {
			continue
		}
		node := kubeapi.NodeOf(n, prof, cl)
		if w, ok := want[node.Pool]; ok {
			node.MissingLabels = kubeapi.Missing(n.Labels, w)
		}
		out = append(out, node)
	}
	slices.SortFunc(out, func(a, b kpool.Node) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// wanted returns, by provider pool name, the labels the last pass expected
// on the nodes of each of a cluster's pools.
func (c *Controller) wanted(clusterID string) map[string]map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.clusters[clusterID]
	if !ok {
		return nil
	}
	return maps.Clone(st.want)
}

// expect records the labels a pool's nodes are to carry, for NodeSource.
func (s *poolScope) expect(want map[string]string) {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	if s.st.want == nil {
		s.st.want = map[string]map[string]string{}
	}
	s.st.want[s.p.ProviderName] = want
}

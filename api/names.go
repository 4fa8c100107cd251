package api

import (
	"context"
	"fmt"
	"strings"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
)

// Names wherever an ID is taken: a cluster or a node pool may be named by
// its ID or by its name, found with the API's ?name= filter. A name that
// more than one object has (a pool name in several clusters, a cluster name
// of several owners, as an admin sees them) is an error listing them. As
// with the client's other errors, the advice in a message is the kpool
// CLI's.

// ClusterID returns the ID of the cluster ref names: an ID (in any case, or
// as -o name prints it, cluster/ID) or a name. A name no cluster has is
// NOT_FOUND; one several clusters have is VALIDATION_ERROR on cluster.
func (c *Client) ClusterID(ctx context.Context, ref string) (string, error) {
	ref = strings.TrimPrefix(ref, "cluster/")
	if kpool.IsUUID(strings.ToLower(ref)) {
		return strings.ToLower(ref), nil
	}
	list, err := c.Clusters(ctx, service.ListOptions{Name: ref, Limit: kpool.MaxLimit})
	if err != nil {
		return "", err
	}
	switch len(list.Clusters) {
	case 0:
		return "", kpool.Errorf(kpool.CodeNotFound, "No cluster named %q: kpool cluster list shows the clusters you can see", ref)
	case 1:
		return list.Clusters[0].ID, nil
	}
	var cands []string
	for _, cl := range list.Clusters {
		cands = append(cands, fmt.Sprintf("%s (registered by %s)", cl.ID, cl.CreatedBy))
	}
	return "", kpool.Invalid("cluster", "%d clusters are named %q: give one's ID: %s", len(cands), ref, strings.Join(cands, ", "))
}

// NodePoolID returns the ID of the node pool ref names: an ID (in any case,
// or as -o name prints it, nodepool/ID) or a name, looked for in cluster (a
// cluster's name or ID, see ClusterID) or, when cluster is "", in every
// cluster the caller sees. A name no pool has there is NOT_FOUND; one
// several pools have is VALIDATION_ERROR on name.
func (c *Client) NodePoolID(ctx context.Context, ref, cluster string) (string, error) {
	ref = strings.TrimPrefix(ref, "nodepool/")
	if kpool.IsUUID(strings.ToLower(ref)) {
		return strings.ToLower(ref), nil
	}
	o := service.ListOptions{Name: ref, Limit: kpool.MaxLimit}
	if cluster != "" {
		id, err := c.ClusterID(ctx, cluster)
		if err != nil {
			return "", err
		}
		o.ClusterID = id
	}
	list, err := c.NodePools(ctx, o)
	if err != nil {
		return "", err
	}
	switch len(list.NodePools) {
	case 0:
		in := ""
		if cluster != "" {
			in = " in cluster " + cluster
		}
		return "", kpool.Errorf(kpool.CodeNotFound, "No node pool named %q%s: kpool nodepool list shows the pools you can see", ref, in)
	case 1:
		return list.NodePools[0].ID, nil
	}
	in := c.clusterNames(ctx, list.NodePools)
	var cands []string
	for _, p := range list.NodePools {
		cands = append(cands, fmt.Sprintf("%s (in %s)", p.ID, in[p.ClusterID]))
	}
	return "", kpool.Invalid("name", "%d node pools are named %q: give --cluster, or one's ID: %s", len(cands), ref, strings.Join(cands, ", "))
}

// clusterNames names the clusters of pools for a message, by cluster id:
// the cluster's name, with its owner where two of the clusters share a
// name (as an admin sees them), or "cluster <id>" when it cannot be read.
func (c *Client) clusterNames(ctx context.Context, pools []*kpool.NodePool) map[string]string {
	clusters := map[string]*kpool.Cluster{}
	named := map[string]int{}
	for _, p := range pools {
		if _, seen := clusters[p.ClusterID]; seen {
			continue
		}
		cl, err := c.Cluster(ctx, p.ClusterID)
		if err != nil || cl.Name == "" {
			cl = nil
		} else {
			named[cl.Name]++
		}
		clusters[p.ClusterID] = cl
	}
	out := map[string]string{}
	for id, cl := range clusters {
		switch {
		case cl == nil:
			out[id] = "cluster " + id
		case named[cl.Name] > 1:
			out[id] = cl.Name + ", registered by " + cl.CreatedBy
		default:
			out[id] = cl.Name
		}
	}
	return out
}

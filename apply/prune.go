package apply

import (
	"context"
	"regexp"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/service"
)

// pruneItems returns the pools --prune would delete: those of the clusters
// the file's documents are in that no document names and that sel matches
// (checked here whatever the server filtered), in cluster order. A pool
// being deleted is left out; one a logical pool made is an item with its
// Owner, to be skipped. With no cluster at all, it is an error (unless the
// documents are refused already, which says why).
func pruneItems(ctx context.Context, c *api.Client, items []*Item, sel kpool.Selector) ([]*Item, error) {
	named := map[[2]string]bool{}
	var clusters []*Item // the first item of each cluster
	for _, it := range items {
		if it.ClusterID == "" {
			continue
		}
		if !hasCluster(clusters, it.ClusterID) {
			clusters = append(clusters, it)
		}
		named[[2]string{it.ClusterID, it.Name}] = true
	}
	if len(clusters) == 0 && len(items) > 0 && items[0].Err != nil {
		return nil, nil // every document is refused (none found its cluster): that is the answer
	}
	if len(clusters) == 0 {
		return nil, kpool.Invalid("prune", "needs a cluster: none of the file's documents is in a cluster found, and --prune deletes only in the clusters the file names")
	}
	var out []*Item
	for _, first := range clusters {
		owners, err := logicalOwners(ctx, c, first.ClusterID)
		if err != nil {
			return nil, err
		}
		pools, err := clusterPools(ctx, c, first.ClusterID, sel)
		if err != nil {
			return nil, err
		}
		for _, p := range pools {
			if p.ClusterID != first.ClusterID || named[[2]string{p.ClusterID, p.Name}] || p.Deleting() || !sel.Matches(p.Spec.Labels) {
				continue
			}
			out = append(out, &Item{Name: p.Name, ClusterID: p.ClusterID, Cluster: first.Cluster, Live: p, Prune: true, Owner: owners.owner(p)})
		}
	}
	return out, nil
}

func hasCluster(items []*Item, id string) bool {
	for _, it := range items {
		if it.ClusterID == id {
			return true
		}
	}
	return false
}

// clusterPools lists every pool of a cluster that sel matches, page by
// page.
func clusterPools(ctx context.Context, c *api.Client, clusterID string, sel kpool.Selector) ([]*kpool.NodePool, error) {
	var out []*kpool.NodePool
	o := service.ListOptions{ClusterID: clusterID, Labels: sel, Limit: kpool.MaxLimit}
	for {
		page, err := c.NodePools(ctx, o)
		if err != nil {
			return nil, err
		}
		out = append(out, page.NodePools...)
		if page.Next == "" || len(page.NodePools) == 0 {
			return out, nil
		}
		o.After = page.Next
	}
}

// owners are a cluster's logical pools, to tell which pools one made.
type owners []*kpool.LogicalPool

// logicalOwners lists a cluster's logical pools.
func logicalOwners(ctx context.Context, c *api.Client, clusterID string) (owners, error) {
	var out owners
	o := service.ListOptions{Limit: kpool.MaxLimit}
	for {
		page, err := c.LogicalPools(ctx, clusterID, o)
		if err != nil {
			return nil, err
		}
		out = append(out, page.LogicalPools...)
		if page.Next == "" || len(page.LogicalPools) == 0 {
			return out, nil
		}
		o.After = page.Next
	}
}

// owner is the name of the logical pool that made p, "" for none: p is in
// its placement pool and named as its members are (NAME, NAME-ZONE,
// NAME-fK, NAME-ZONE-fK, as kpool.LogicalPool.MemberName makes them), or
// its status lists p as a member it made.
func (o owners) owner(p *kpool.NodePool) string {
	for _, lp := range o {
		if p.Spec.PlacementPool == lp.Name && memberName(lp.Name).MatchString(p.Name) {
			return lp.Name
		}
		for _, m := range lp.Status.Members {
			if m.Made && m.ID == p.ID {
				return lp.Name
			}
		}
	}
	return ""
}

// memberName matches the names of the members a logical pool of that
// name makes.
func memberName(name string) *regexp.Regexp {
	return regexp.MustCompile(`^` + regexp.QuoteMeta(name) + `(-[1-9][0-9]?)?(-f[1-9][0-9]*)?$`)
}

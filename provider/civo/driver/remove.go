package driver

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// Removing chosen nodes on Civo: DELETE …/pools/{pool}/instances/{id}
// (civogo's DeleteKubernetesClusterPoolInstance) removes that instance
// and lowers the pool's count by one. A node names its instance by its
// spec.providerID, civo://<instance id> (Civo's cloud controller manager,
// civo/civo-cloud-controller-manager instances.go; the cluster
// autoscaler's Civo provider deletes a node by the id it reads there,
// civo_node_group.go DeleteNodes), or, without one, by its name, the
// instance's hostname (the CCM finds an instance by its node's name).

// codeInstanceNotFound is Civo's code for an instance a pool does not
// have (civogo's errors.go).
const codeInstanceNotFound = "database_cluster_pool_instance_not_found"

// civoScheme is the prefix of a Civo node's spec.providerID.
const civoScheme = "civo://"

var _ provider.NodeRemover = (*Driver)(nil)

// DeleteInstance removes one instance of a pool; the pool's count goes
// down by one.
func (c *Client) DeleteInstance(ctx context.Context, cluster, pool, instance string) error {
	return c.do(ctx, http.MethodDelete, c.poolsPath(cluster)+"/"+url.PathEscape(pool)+"/instances/"+url.PathEscape(instance), nil, nil)
}

// NodePoolRemoveNodes removes the chosen nodes of a pool and lowers its
// count by as many (provider.NodeRemover). Every node is checked before
// anything is sent: one of another pool, or not a Civo instance, is
// refused and nothing is removed; one the pool no longer has, or whose
// instance is already being deleted, is skipped.
func (d *Driver) NodePoolRemoveNodes(ctx context.Context, c *kpool.Cluster, providerName string, nodes []provider.NodeRef) error {
	cl, id, err := d.client(c)
	if err != nil {
		return err
	}
	if len(nodes) == 0 {
		return nil
	}
	pools, err := cl.List(ctx, id)
	if err != nil {
		return classify(err, "")
	}
	var pool *Pool
	for i := range pools {
		if pools[i].ID == providerName {
			pool = &pools[i]
		}
	}
	if pool == nil {
		return &provider.Error{Kind: provider.KindNotFound, Provider: platform, Reason: "pool " + providerName + " not found in cluster " + id}
	}
	ids, err := instancesOf(pool, pools, nodes)
	if err != nil {
		return err
	}
	if len(ids) > 0 && pool.Count-len(ids) < 1 {
		return provider.ValidationError(platform, "spec.nodeCount", "removing %d nodes would leave pool %s (count %d) without nodes: a Civo pool has at least 1", len(ids), providerName, pool.Count)
	}
	for _, in := range ids {
		if err := cl.DeleteInstance(ctx, id, providerName, in); err != nil && !instanceMissing(err) {
			return classify(err, "")
		}
	}
	return nil
}

// instancesOf maps the nodes to the ids of the pool's instances to
// delete: nil and a validation error when one is another pool's or not a
// Civo node; gone and going ones left out.
func instancesOf(pool *Pool, pools []Pool, nodes []provider.NodeRef) ([]string, error) {
	var ids []string
	seen := map[string]bool{}
	for _, n := range nodes {
		in, ok := findInstance(pool, n)
		switch {
		case ok && (in.Status == "DELETING" || seen[in.ID]):
			continue // already going
		case ok:
			seen[in.ID] = true
			ids = append(ids, in.ID)
			continue
		}
		if n.ProviderID != "" && !strings.HasPrefix(n.ProviderID, civoScheme) {
			return nil, provider.ValidationError(platform, "nodes", "node %s (%s) is not a Civo instance", n.Name, n.ProviderID)
		}
		for i := range pools {
			if pools[i].ID == pool.ID {
				continue
			}
			if _, theirs := findInstance(&pools[i], n); theirs {
				return nil, provider.ValidationError(platform, "nodes", "node %s is pool %s's, not pool %s's: nothing was removed", n.Name, pools[i].ID, pool.ID)
			}
		}
		// No pool has it: its instance is gone.
	}
	return ids, nil
}

// findInstance finds a node's instance in a pool: by the id of its
// providerID, else by its name as the instance's hostname.
func findInstance(p *Pool, n provider.NodeRef) (Instance, bool) {
	id, byID := strings.CutPrefix(n.ProviderID, civoScheme)
	for _, in := range p.Instances {
		if byID && in.ID == id || !byID && n.ProviderID == "" && n.Name != "" && in.Hostname == n.Name {
			return in, true
		}
	}
	return Instance{}, false
}

// instanceMissing reports whether err is Civo's answer for an instance
// the pool no longer has (database_cluster_pool_instance_not_found).
func instanceMissing(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound && ae.Code == codeInstanceNotFound
}

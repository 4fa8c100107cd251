package driver

import (
	"context"
	"net/http"
	"strings"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// Removing chosen nodes on OKE: DeleteNode with isDecrementSize deletes
// that node (its compute instance) and lowers the pool's size by one
// (OKE's "Deleting Worker Nodes"), as the cluster autoscaler's OCI
// provider removes a node group's nodes. A Kubernetes node names its
// instance by its spec.providerID: the instance OCID, bare on OKE's nodes
// or as oci://<OCID> (Oracle's cloud controller manager reads both:
// MapProviderIDToResourceID); without one, by its name, which on OKE is
// its private IP (GetNodePool's nodes[].privateIp), or the node's OKE
// name.

// ociScheme is the prefix a providerID may give an instance OCID.
const ociScheme = "oci://"

var _ provider.NodeRemover = (*Driver)(nil)

// NodePoolRemoveNodes removes the chosen nodes of a pool and lowers its
// size by as many (provider.NodeRemover). Every node is checked before
// anything is sent: one of another pool of the cluster, or not an OCI
// instance, is refused and nothing is removed; one the pool no longer
// has, or already DELETING, is skipped. kpool drained the nodes, so OKE's
// own cordon and drain (its default eviction settings) finds them empty.
func (d *Driver) NodePoolRemoveNodes(ctx context.Context, c *kpool.Cluster, providerName string, nodes []provider.NodeRef) error {
	cn, err := d.client(c)
	if err != nil {
		return err
	}
	if len(nodes) == 0 {
		return nil
	}
	np, _, _, err := cn.byName(ctx, providerName)
	if err != nil {
		return err
	}
	if np == nil {
		return provider.NotFoundError(platform, "node pool", providerName)
	}
	defer d.invalidate(cn, np.Id)
	ids, err := cn.nodesToRemove(ctx, np, nodes)
	if err != nil {
		return err
	}
	for _, id := range ids {
		resp, err := cn.cl.DeleteNode(provider.Detached(ctx), ce.DeleteNodeRequest{NodePoolId: np.Id, NodeId: common.String(id),
			IsDecrementSize: common.Bool(true)})
		if err != nil && status(err) != http.StatusNotFound { // 404: gone meanwhile
			return classify(err, resp.RawResponse, "")
		}
	}
	return nil
}

// nodesToRemove maps the nodes to the OCIDs of the pool's nodes to
// delete: a validation error when one is another pool's or not an OCI
// instance; gone and going ones left out.
func (cn *conn) nodesToRemove(ctx context.Context, np *ce.NodePool, refs []provider.NodeRef) ([]string, error) {
	var ids []string
	seen := map[string]bool{}
	var others []ce.NodePool // read once, when a node is not the pool's
	for _, r := range refs {
		if n, ok := findNode(np.Nodes, r); ok {
			id := ptr.Deref(n.Id, "")
			if !seen[id] && n.LifecycleState != ce.NodeLifecycleStateDeleting && n.LifecycleState != ce.NodeLifecycleStateDeleted {
				ids = append(ids, id)
			}
			seen[id] = true
			continue
		}
		if id := instanceID(r.ProviderID); r.ProviderID != "" && !strings.HasPrefix(id, "ocid1.instance.") {
			return nil, provider.ValidationError(platform, "nodes", "node %s (%s) is not an OCI instance", r.Name, r.ProviderID)
		}
		if others == nil {
			var err error
			if others, err = cn.otherPools(ctx, ptr.Deref(np.Id, "")); err != nil {
				return nil, err
			}
		}
		for _, o := range others {
			if _, theirs := findNode(o.Nodes, r); theirs {
				return nil, provider.ValidationError(platform, "nodes", "node %s is node pool %s's, not %s's: nothing was removed",
					r.Name, ptr.Deref(o.Name, ""), ptr.Deref(np.Name, ""))
			}
		}
		// No pool of the cluster has it: its instance is gone.
	}
	return ids, nil
}

// otherPools reads the cluster's node pools but one, with their nodes.
func (cn *conn) otherPools(ctx context.Context, except string) ([]ce.NodePool, error) {
	sums, err := cn.list(ctx, "")
	if err != nil {
		return nil, err
	}
	out := []ce.NodePool{}
	for _, s := range sums {
		if ptr.Deref(s.Id, "") == except {
			continue
		}
		np, _, err := cn.get(ctx, *s.Id)
		if err != nil {
			return nil, err
		}
		if np != nil {
			out = append(out, *np)
		}
	}
	return out, nil
}

// instanceID is the instance OCID of a providerID.
func instanceID(providerID string) string { return strings.TrimPrefix(providerID, ociScheme) }

// findNode finds a Kubernetes node among OKE's nodes of a pool: by its
// providerID's instance OCID, else by its name as the node's private IP
// or OKE name.
func findNode(nodes []ce.Node, r provider.NodeRef) (ce.Node, bool) {
	id := instanceID(r.ProviderID)
	for _, n := range nodes {
		switch {
		case ptr.Deref(n.Id, "") == "":
			// A node that could not launch has no instance to delete.
		case id != "" && ptr.Deref(n.Id, "") == id:
			return n, true
		case id == "" && r.Name != "" && (ptr.Deref(n.PrivateIp, "") == r.Name || ptr.Deref(n.Name, "") == r.Name):
			return n, true
		}
	}
	return ce.Node{}, false
}

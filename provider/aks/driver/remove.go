package driver

import (
	"context"
	"net/http"
	"regexp"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

var _ provider.NodeRemover = (*Driver)(nil)

// NodePoolRemoveNodes removes chosen nodes of an agent pool and lowers its
// count by as many, with AKS's deleteMachines
// (AgentPoolsClient.BeginDeleteMachines; REST "Agent Pools - Delete
// Machines"). Its machine names are those the pool's Machines API lists
// (MachinesClient.NewListPager): a scale-set node's machine is named as
// the node, and its properties.resourceId is the node's spec.providerID
// after azure://. The pool's machines are listed first; then each node is
// matched by its providerID (or, without one, its name): a machine of the
// pool is removed; a node of the pool's scale set that is no longer among
// them is gone and skipped; any other node (another pool's, another
// cluster's) is refused with a validation error and nothing is sent. With
// nothing left to remove, nothing is sent. A pool that does not exist is
// a not-found error.
//
// As NodePoolCreate, NodePoolUpdate and NodePoolDelete, it returns once
// AKS accepted the operation (202) and does not wait for it: the pool
// reads Scaling (busy) until its nodes are gone, and the operation's
// status URL is kept to explain a failure. A write while another
// operation runs on the pool is AKS's 409, classified as every answer.
// The POST is sent once (no retry of its own): calling again with the same
// nodes sends only the machines still there.
func (d *Driver) NodePoolRemoveNodes(ctx context.Context, c *kpool.Cluster, providerName string, nodes []provider.NodeRef) error {
	if len(nodes) == 0 {
		return nil
	}
	cs, a, err := d.client(c)
	if err != nil {
		return err
	}
	machines, err := d.machines(ctx, cs, a, providerName)
	if err != nil {
		return err
	}
	names, err := machineNames(a, providerName, machines, nodes)
	if err != nil || len(names) == 0 {
		return err
	}
	body := armcontainerservice.AgentPoolDeleteMachinesParameter{}
	for _, n := range names {
		body.MachineNames = append(body.MachineNames, ptr.To(n))
	}
	// deleteMachines is a POST: not retried here, since a retry after an
	// answer lost would name machines already going. The caller's next
	// call lists the machines again and sends only those left.
	once := d.retry
	once.MaxRetries = -1
	var raw *http.Response
	if _, err := cs.pools.BeginDeleteMachines(runtime.WithCaptureResponse(policy.WithRetryOptions(ctx, once), &raw), a.ResourceGroup, a.ClusterName, providerName, body, nil); err != nil {
		if poolMissing(err) {
			return provider.NotFoundError(platform, "agent pool", providerName)
		}
		return classify(err, "")
	}
	d.started(c, providerName, raw)
	return nil
}

// machineRef is one machine of a pool: its name and its resourceId (lower
// case, as ARM compares ids).
type machineRef struct{ name, id string }

// machines lists a pool's machines; a missing pool is a not-found error.
func (d *Driver) machines(ctx context.Context, cs *clients, a *kpool.AzureCluster, pool string) ([]machineRef, error) {
	var out []machineRef
	pager := cs.machines.NewListPager(a.ResourceGroup, a.ClusterName, pool, nil)
	pageCtx := policy.WithRetryOptions(ctx, d.retry)
	for first := true; pager.More(); first = false {
		if !first {
			pageCtx = policy.WithRetryOptions(ctx, d.listRetry)
		}
		page, err := pager.NextPage(pageCtx)
		if err != nil {
			if poolMissing(err) {
				return nil, provider.NotFoundError(platform, "agent pool", pool)
			}
			return nil, classify(err, "")
		}
		for _, m := range page.Value {
			if m == nil || m.Name == nil {
				continue
			}
			id := ""
			if m.Properties != nil {
				id = strings.ToLower(ptr.Deref(m.Properties.ResourceID, ""))
			}
			out = append(out, machineRef{name: *m.Name, id: id})
		}
	}
	return out, nil
}

// machineNames maps nodes to the names of the machines deleteMachines
// takes, each once, skipping the nodes gone; a node not of the pool is a
// validation error.
func machineNames(a *kpool.AzureCluster, pool string, machines []machineRef, nodes []provider.NodeRef) ([]string, error) {
	byID, byName, sets := map[string]string{}, map[string]string{}, map[string]bool{}
	for _, m := range machines {
		if m.id != "" {
			byID[m.id] = m.name
			if set, ok := scaleSetOf(m.id); ok {
				sets[set] = true
			}
		}
		byName[strings.ToLower(m.name)] = m.name
	}
	var out []string
	seen := map[string]bool{}
	for _, n := range nodes {
		name, gone, err := machineOf(a, pool, n, byID, byName, sets)
		switch {
		case err != nil:
			return nil, err
		case gone || seen[name]:
			continue
		}
		seen[name] = true
		out = append(out, name)
	}
	return out, nil
}

// machineOf is a node's machine name, or gone for a node of the pool's
// scale set that the pool no longer lists.
func machineOf(a *kpool.AzureCluster, pool string, n provider.NodeRef, byID, byName map[string]string, sets map[string]bool) (string, bool, error) {
	if n.ProviderID == "" {
		if name, ok := byName[strings.ToLower(n.Name)]; ok {
			return name, false, nil
		}
		if nodeNameOf(pool).MatchString(n.Name) {
			return "", true, nil
		}
		return "", false, notOfPool(pool, n)
	}
	id, ok := cutPrefixFold(n.ProviderID, "azure://")
	if !ok {
		return "", false, notOfPool(pool, n)
	}
	if name, ok := byID[strings.ToLower(id)]; ok {
		return name, false, nil
	}
	set, ok := scaleSetOf(id)
	if !ok || !scaleSetNameOf(pool).MatchString(set[strings.LastIndex(set, "/")+1:]) {
		return "", false, notOfPool(pool, n)
	}
	rid, err := arm.ParseResourceID(id)
	if err != nil || !strings.EqualFold(rid.SubscriptionID, a.SubscriptionID) || len(sets) > 0 && !sets[set] {
		return "", false, notOfPool(pool, n)
	}
	return "", true, nil
}

// scaleSetOf is the (lower-case) resource id of the scale set of a scale
// set instance's resource id, …/virtualMachineScaleSets/<name>.
func scaleSetOf(id string) (string, bool) {
	rid, err := arm.ParseResourceID(id)
	if err != nil || !strings.EqualFold(rid.ResourceType.String(), "Microsoft.Compute/virtualMachineScaleSets/virtualMachines") || rid.Parent == nil {
		return "", false
	}
	return strings.ToLower(rid.Parent.String()), true
}

// scaleSetNameOf matches the name of a pool's scale set as AKS names it,
// aks-<pool>-<number>-vmss; nodeNameOf its nodes' names, the scale set's
// computer name prefix and the instance id in base 36, six digits
// (learn.microsoft.com/azure/virtual-machine-scale-sets/virtual-machine-scale-sets-instance-ids).
func scaleSetNameOf(pool string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)^aks-` + regexp.QuoteMeta(pool) + `-[0-9]+-vmss$`)
}

func nodeNameOf(pool string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)^aks-` + regexp.QuoteMeta(pool) + `-[0-9]+-vmss[0-9a-z]{6}$`)
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return s, false
	}
	return s[len(prefix):], true
}

// notOfPool refuses a node that is not one of the pool's.
func notOfPool(pool string, n provider.NodeRef) error {
	return provider.ValidationError(platform, "nodes", "node %s (providerID %q) is not a machine of agent pool %s: nothing was removed", n.Name, n.ProviderID, pool)
}

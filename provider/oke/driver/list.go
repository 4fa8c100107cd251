package driver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	ce "github.com/oracle/oci-go-sdk/v65/containerengine"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// NodePoolList lists the cluster's node pools: ListNodePools, paged; a
// GetNodePool (which has the nodes a summary lacks) of only those the
// list's memory (provider.Refresh) says to read: new ones, those whose
// summary changed (its lifecycle state, size, spec or tags), those kpool
// wrote to since, those not settled at their last read, and
// provider.RefreshPerList of the settled ones, the longest unread first;
// and one read of the autoscaler add-on. The others are reported from
// their last read, so a pass at rest costs the same few calls whatever
// the number of pools. What a summary does not show of a settled pool (a
// node lost or replaced at the same size) is seen when its turn comes,
// within ceil(settled/RefreshPerList) passes.
func (d *Driver) NodePoolList(ctx context.Context, c *kpool.Cluster) ([]provider.Pool, error) {
	cn, err := d.client(c)
	if err != nil {
		return nil, err
	}
	sums, err := cn.list(ctx, "")
	if err != nil {
		return nil, err
	}
	listed := make([]provider.Listed, len(sums))
	for i, s := range sums {
		listed[i] = provider.Listed{Name: *s.Id, Fingerprint: fingerprint(s)}
	}
	pass := d.reads.Plan(cn.listKey(), listed)
	pools, err := d.getAll(ctx, cn, c, pass, sums)
	if err != nil {
		return nil, err
	}
	out := unique(pools)
	sort.Slice(out, func(i, j int) bool { return out[i].ProviderName < out[j].ProviderName })
	// The autoscaling bounds are the Cluster Autoscaler add-on's: one
	// read per list, whatever the number of pools.
	a, err := cn.readAutoscaler(ctx)
	if err != nil {
		return nil, err
	}
	observeBounds(out, a)
	return out, nil
}

// listGets is how many GetNodePool calls a list has in flight.
const listGets = 8

// listKey is what the list's memory knows a cluster by: its client's
// credential, region and endpoint, and its OCID.
func (cn *conn) listKey() string { return cn.key + " " + cn.oci.ClusterID }

// fingerprint is a summary's: it changes when anything the summary says
// of the pool does.
func fingerprint(s ce.NodePoolSummary) string {
	b, err := json.Marshal(s)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// getAll reports the listed pools: those the pass reads with GetNodePool,
// listGets at a time, the others from their last read. One whose read
// fails for a passing reason (after the SDK's retries) is reported
// Unknown, which the controllers wait on, rather than failing the whole
// list. Throttling and refusals still fail it.
func (d *Driver) getAll(ctx context.Context, cn *conn, c *kpool.Cluster, pass *provider.Pass[*ce.NodePool], sums []ce.NodePoolSummary) ([]*provider.Pool, error) {
	ids := make([]string, len(sums))
	for i := range sums {
		ids[i] = *sums[i].Id
	}
	return pass.ReadAll(ids, listGets, func(np *ce.NodePool) provider.Pool { return observe(c, *np) },
		func(i int) (*provider.Pool, error) { return d.getOne(ctx, cn, c, pass, sums[i]) })
}

// getOne reads a listed pool and keeps the read in the pass: nil when it
// was deleted since it was listed, Unknown when its read failed for a
// passing reason.
func (d *Driver) getOne(ctx context.Context, cn *conn, c *kpool.Cluster, pass *provider.Pass[*ce.NodePool], sum ce.NodePoolSummary) (*provider.Pool, error) {
	np, _, err := cn.get(ctx, *sum.Id)
	switch {
	case err != nil && provider.IsTransient(err) && ctx.Err() == nil:
		p := observe(c, summaryPool(sum))
		p.State, p.ProviderState, p.ReadyUnknown, p.StaleNodes = provider.StateUnknown, "", true, 0
		p.Nodes, p.ReadyNodes, p.NodesByZone = 0, 0, nil
		p.Message = "GetNodePool failed: " + err.Error()
		return &p, nil
	case err != nil:
		return nil, err
	case np == nil || np.LifecycleState == ce.NodePoolLifecycleStateDeleted:
		return nil, nil
	}
	p := observe(c, *np)
	d.explain(ctx, cn, &p, np)
	pass.Keep(*sum.Id, np, provider.Settled(&p))
	return &p, nil
}

// unique drops the pools a list did not report (gone since listed) and
// the second of a name: OKE does not make names unique, kpool names its
// pools, so a second pool of a name is reported on the first, never
// listed as another (one being deleted gives way to one that is not).
func unique(pools []*provider.Pool) []provider.Pool {
	byName := map[string]int{}
	var out []provider.Pool
	for _, p := range pools {
		if p == nil {
			continue
		}
		if i, ok := byName[p.ProviderName]; ok {
			first := &out[i]
			if first.State == provider.StateDeleting && p.State != provider.StateDeleting {
				p.Problems = append(p.Problems, first.Problems...)
				*first, p = *p, first
			}
			first.Problems = append(first.Problems, fmt.Sprintf("another OKE node pool is named %s (%s)", p.ProviderName, p.Extra["id"]))
			continue
		}
		byName[p.ProviderName] = len(out)
		out = append(out, *p)
	}
	return out
}

// summaryPool is a summary as a node pool without nodes.
func summaryPool(s ce.NodePoolSummary) ce.NodePool {
	return ce.NodePool{Id: s.Id, LifecycleState: s.LifecycleState, LifecycleDetails: s.LifecycleDetails, CompartmentId: s.CompartmentId,
		ClusterId: s.ClusterId, Name: s.Name, KubernetesVersion: s.KubernetesVersion, NodeImageId: s.NodeImageId, NodeShapeConfig: s.NodeShapeConfig,
		NodeSourceDetails: s.NodeSourceDetails, NodeShape: s.NodeShape, InitialNodeLabels: s.InitialNodeLabels, NodeConfigDetails: s.NodeConfigDetails,
		FreeformTags: s.FreeformTags, NodePoolCyclingDetails: s.NodePoolCyclingDetails, NodeEvictionNodePoolSettings: s.NodeEvictionNodePoolSettings}
}

// invalidate has the next list read a pool kpool wrote to (or may have:
// a write that failed may have been applied).
func (d *Driver) invalidate(cn *conn, id *string) {
	if id != nil {
		d.reads.Invalidate(cn.listKey(), *id)
	}
}

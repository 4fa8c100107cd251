package driver

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// NodePoolUpdate changes a node pool to the spec with one UpdateNodePool
// of what differs. OKE applies a new shape, image, shape config, boot
// volume, placement, preemptible setting, labels and version to the nodes
// it creates afterwards (observed as StaleNodes); size and tags change at
// once, and with the tags the owner's mark on a pool that has none (one
// another owner marked is refused: KindForeign). The placement labels stay
// as the pool has them; the pool label (initialLabels) is sent with every
// change of the labels, and added to a pool that lacks it. A pool whose create failed takes no update: it is
// deleted, and created again once gone.
func (d *Driver) NodePoolUpdate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	if err := provider.CheckSupported(profile.Capabilities(), s); err != nil {
		return nil, err
	}
	cn, err := d.client(c)
	if err != nil {
		return nil, err
	}
	np, etag, _, err := cn.byName(ctx, s.ProviderName)
	if err != nil {
		return nil, err
	}
	if np == nil {
		return nil, provider.NotFoundError(platform, "node pool", s.ProviderName)
	}
	// Whatever this call sends, the next list reads the pool again.
	defer d.invalidate(cn, np.Id)
	if p, busy, err := lifecycle(ctx, cn, c, np, s); busy {
		return p, err
	}
	if err := downgrade(np, s); err != nil {
		return nil, err
	}
	observed := observe(c, *np)
	if err := cn.syncBounds(ctx, *np.Id, s, &observed); err != nil {
		return nil, err
	}
	// The update carries the if-match etag of the pool read here: a mark
	// written meanwhile fails it, and the next call reads it.
	if s.Owner, err = provider.Remark(platform, s.ProviderName, observed.Owner, s.Owner); err != nil {
		return nil, err
	}
	s.Labels = provider.KeepPlacement(s.Labels, observed.Labels)
	in, changed, err := updateDetails(c, cn.oci, np, s)
	if err != nil {
		return nil, err
	}
	if !versionMatches(ptr.Deref(np.KubernetesVersion, ""), s.Version) {
		v, err := d.version(ctx, cn, s.Version)
		if err != nil {
			return nil, err
		}
		if v != nil && *v != ptr.Deref(np.KubernetesVersion, "") {
			in.KubernetesVersion, changed = v, true
		}
	}
	if upgradeUpdate(&in, observed.Upgrade, s.Upgrade, observed.StaleNodes+renewed(np, in)) {
		changed = true
	}
	if observed.Shortage != nil && (in.NodeConfigDetails == nil || in.NodeConfigDetails.Size == nil) {
		// Asked again: OKE launches the nodes that could not launch only
		// when the pool is updated, here with its size unchanged.
		if in.NodeConfigDetails == nil {
			in.NodeConfigDetails = &ce.UpdateNodePoolNodeConfigDetails{}
		}
		in.NodeConfigDetails.Size, changed = common.Int(count(observed.Count, s)), true
	}
	if !changed {
		return &observed, nil
	}
	req := ce.UpdateNodePoolRequest{NodePoolId: np.Id, UpdateNodePoolDetails: in}
	if etag != "" {
		req.IfMatch = common.String(etag)
	}
	resp, err := cn.cl.UpdateNodePool(provider.Detached(ctx), req)
	if err != nil {
		return nil, classify(err, resp.RawResponse, "")
	}
	next := apply(np, in)
	next.LifecycleState = ce.NodePoolLifecycleStateUpdating
	// The update starts from the nodes the pool has: the ones that could
	// not launch are dropped (its size asks for them again, or no more).
	next.Nodes = slices.DeleteFunc(slices.Clone(next.Nodes), func(n ce.Node) bool { return n.NodeError != nil })
	p := observe(c, next)
	p.Autoscaling, p.MinCount, p.MaxCount = observed.Autoscaling, observed.MinCount, observed.MaxCount
	if resp.OpcWorkRequestId != nil {
		p.Extra["workRequest"] = *resp.OpcWorkRequestId
	}
	return &p, nil
}

// count is the size an update asks for: the spec's, or with autoscaling
// (the autoscaler owns the count) the pool's own held within the bounds.
func count(have int, s provider.PoolSpec) int {
	if !s.Autoscaling {
		return s.Count
	}
	return min(max(have, s.MinCount), s.MaxCount)
}

// updateDetails is the UpdateNodePool that takes np to the spec, but its
// version: only what differs.
func updateDetails(c *kpool.Cluster, o *kpool.OCICluster, np *ce.NodePool, s provider.PoolSpec) (ce.UpdateNodePoolDetails, bool, error) {
	var in ce.UpdateNodePoolDetails
	p := observe(c, *np)
	ncd := &ce.UpdateNodePoolNodeConfigDetails{}
	changed, nodesChanged := false, false
	if want := count(p.Count, s); p.Count != want {
		ncd.Size, changed = common.Int(want), true
	}
	if strings.Join(p.Zones, ",") != strings.Join(s.Zones, ",") || p.Spot != s.Spot {
		pcs, err := placement(c, s)
		if err != nil {
			return in, false, err
		}
		ncd.PlacementConfigs, changed, nodesChanged = pcs, true, true
	}
	if !provider.SameLabels(p.Labels, s.Labels) {
		in.InitialNodeLabels, changed, nodesChanged = initialLabels(s), true, true
	} else if lacksPoolLabel(np) {
		// Only the pool label is missing: what new nodes are is unchanged
		// but for it, so no node is counted stale for it.
		in.InitialNodeLabels, changed = initialLabels(s), true
	}
	if !provider.SameMap(p.Tags, s.Tags) || p.Owner != s.Owner {
		in.FreeformTags, changed = poolTags(s), true
	}
	if s.MachineType != "" && p.MachineType != s.MachineType {
		in.NodeShape, changed, nodesChanged = common.String(s.MachineType), true, true
	}
	ocpus, memory, err := shapeConfig(s)
	if err != nil {
		return in, false, err
	}
	if (ocpus != nil && !provider.SameSetting(p.Settings["ocpus"], s.Settings["ocpus"])) ||
		(memory != nil && !provider.SameSetting(p.Settings["memoryInGBs"], s.Settings["memoryInGBs"])) ||
		(in.NodeShape != nil && (ocpus != nil || memory != nil)) {
		in.NodeShapeConfig, changed, nodesChanged = &ce.UpdateNodeShapeConfigDetails{Ocpus: ocpus, MemoryInGBs: memory}, true, true
	}
	if (s.Settings["imageId"] != "" && p.Settings["imageId"] != s.Settings["imageId"]) || (s.DiskSizeGB > 0 && p.DiskSizeGB != s.DiskSizeGB) {
		src, err := source(s)
		if err != nil {
			return in, false, err
		}
		in.NodeSourceDetails, changed, nodesChanged = src, true, true
	}
	tags := nodeTags(c, s)
	if have := np.NodeConfigDetails; nodesChanged || p.Mode != mode(s) || have == nil || have.FreeformTags[TagMode] != tags[TagMode] {
		if !nodesChanged && have != nil && have.FreeformTags[TagConfig] != "" {
			tags[TagConfig] = have.FreeformTags[TagConfig] // what new nodes get has not changed
		}
		if have == nil || !provider.SameMap(have.FreeformTags, tags) {
			merged := map[string]string{}
			if have != nil {
				merged = copyMap(have.FreeformTags)
			}
			for k, v := range tags {
				merged[k] = v
			}
			ncd.FreeformTags, changed = merged, true
		}
	}
	if ncd.Size != nil || ncd.PlacementConfigs != nil || ncd.FreeformTags != nil {
		in.NodeConfigDetails = ncd
	}
	return in, changed, nil
}

// lifecycle answers an update of a pool in a state that takes none (busy
// is true then): a failed pool is deleted, to be created again once gone;
// one being deleted is returned as it is; one whose work request runs is
// transient.
func lifecycle(ctx context.Context, cn *conn, c *kpool.Cluster, np *ce.NodePool, s provider.PoolSpec) (*provider.Pool, bool, error) {
	switch np.LifecycleState {
	case ce.NodePoolLifecycleStateFailed:
		if _, err := cn.cl.DeleteNodePool(provider.Detached(ctx), ce.DeleteNodePoolRequest{NodePoolId: np.Id}); err != nil && status(err) != http.StatusNotFound {
			return nil, true, classify(err, nil, "")
		}
		p := observe(c, *np)
		p.State, p.ProviderState = provider.StateDeleting, string(ce.NodePoolLifecycleStateDeleting)
		p.Message = fmt.Sprintf("FAILED (%s): deleting it to create it again", p.Message)
		return &p, true, nil
	case ce.NodePoolLifecycleStateDeleting:
		p := observe(c, *np)
		return &p, true, nil
	case ce.NodePoolLifecycleStateCreating, ce.NodePoolLifecycleStateUpdating:
		return nil, true, &provider.Error{Kind: provider.KindBusy, Provider: platform,
			Reason: fmt.Sprintf("node pool %s is %s: OKE takes no update until its work request ends", s.ProviderName, np.LifecycleState)}
	}
	return nil, false, nil
}

// apply applies an accepted update to the pool read before it, for the
// answer.
func apply(np *ce.NodePool, in ce.UpdateNodePoolDetails) ce.NodePool {
	next := *np
	ncd := ce.NodePoolNodeConfigDetails{}
	if np.NodeConfigDetails != nil {
		ncd = *np.NodeConfigDetails
	}
	if u := in.NodeConfigDetails; u != nil {
		if u.Size != nil {
			ncd.Size = u.Size
		}
		if u.PlacementConfigs != nil {
			ncd.PlacementConfigs = u.PlacementConfigs
		}
		if u.FreeformTags != nil {
			ncd.FreeformTags = u.FreeformTags
		}
	}
	next.NodeConfigDetails = &ncd
	if in.InitialNodeLabels != nil {
		next.InitialNodeLabels = in.InitialNodeLabels
	}
	if in.FreeformTags != nil {
		next.FreeformTags = in.FreeformTags
	}
	if in.NodeShape != nil {
		next.NodeShape = in.NodeShape
	}
	if sc := in.NodeShapeConfig; sc != nil {
		cfg := ce.NodeShapeConfig{}
		if np.NodeShapeConfig != nil {
			cfg = *np.NodeShapeConfig
		}
		if sc.Ocpus != nil {
			cfg.Ocpus = sc.Ocpus
		}
		if sc.MemoryInGBs != nil {
			cfg.MemoryInGBs = sc.MemoryInGBs
		}
		next.NodeShapeConfig = &cfg
	}
	if in.NodeSourceDetails != nil {
		next.NodeSourceDetails = in.NodeSourceDetails
	}
	if in.KubernetesVersion != nil {
		next.KubernetesVersion = in.KubernetesVersion
	}
	if in.NodePoolCyclingDetails != nil || in.NodeEvictionNodePoolSettings != nil {
		applyUpgrade(&next, in)
	}
	return next
}

// renewed is how many of the pool's nodes an update makes stale: all of
// them when it changes what new nodes get (their version, or the
// configuration the node tags stamp), none otherwise.
func renewed(np *ce.NodePool, in ce.UpdateNodePoolDetails) int {
	if in.KubernetesVersion != nil || (in.NodeConfigDetails != nil && in.NodeConfigDetails.FreeformTags != nil &&
		np.NodeConfigDetails != nil && in.NodeConfigDetails.FreeformTags[TagConfig] != np.NodeConfigDetails.FreeformTags[TagConfig]) {
		return len(np.Nodes)
	}
	return 0
}

// applyUpgrade applies an update's cycling and eviction settings (each
// member given replaces the pool's), for the answer.
func applyUpgrade(next *ce.NodePool, in ce.UpdateNodePoolDetails) {
	if u := in.NodePoolCyclingDetails; u != nil {
		cd := ptr.Deref(next.NodePoolCyclingDetails, ce.NodePoolCyclingDetails{})
		cd.MaximumSurge = cmp.Or(u.MaximumSurge, cd.MaximumSurge)
		cd.MaximumUnavailable = cmp.Or(u.MaximumUnavailable, cd.MaximumUnavailable)
		next.NodePoolCyclingDetails = &cd
	}
	if u := in.NodeEvictionNodePoolSettings; u != nil {
		ev := ptr.Deref(next.NodeEvictionNodePoolSettings, ce.NodeEvictionNodePoolSettings{})
		ev.EvictionGraceDuration = cmp.Or(u.EvictionGraceDuration, ev.EvictionGraceDuration)
		ev.IsForceDeleteAfterGraceDuration = cmp.Or(u.IsForceDeleteAfterGraceDuration, ev.IsForceDeleteAfterGraceDuration)
		next.NodeEvictionNodePoolSettings = &ev
	}
}

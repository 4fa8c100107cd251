package driver

import (
	"context"
	"fmt"
	"slices"

	container "google.golang.org/api/container/v1"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// NodePoolUpdate changes a node pool's mutable settings, one GKE operation
// per call (see changes): update (version, zones, labels, taints, resource
// labels and with them the owner's mark; machine type and disk roll the
// nodes), setAutoscaling, setSize, setManagement. The placement labels
// stay as the pool has them; with autoscaling on, the count stays the
// autoscaler's. An unmarked pool gets the spec's owner's mark; one another
// owner marked is refused (KindForeign).
func (d *Driver) NodePoolUpdate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	cs, g, err := d.client(ctx, c)
	if err != nil {
		return nil, err
	}
	np, err := get(ctx, cs, g, s.ProviderName)
	if err != nil {
		return nil, err
	}
	if np == nil {
		return nil, provider.NotFoundError(platform, "node pool", s.ProviderName)
	}
	p := observe(c, np)
	if np.Status == "ERROR" {
		return d.repair(ctx, cs, c, g, &p)
	}
	// The update step carries the etag of the pool read here: a mark
	// written meanwhile fails it, and the next call reads it.
	if s.Owner, err = provider.Remark(platform, s.ProviderName, p.Owner, s.Owner); err != nil {
		return nil, err
	}
	if err := provider.Refuse(profile, s, &p); err != nil {
		return nil, err
	}
	if err := d.count(ctx, cs, c, np, &p); err != nil {
		return nil, err
	}
	s.Labels = provider.KeepPlacement(s.Labels, p.Labels)
	steps := changes(&p, s)
	if len(steps) == 0 {
		return &p, nil
	}
	if p.State != provider.StateReady && p.State != provider.StateFailed {
		return nil, &provider.Error{Kind: provider.KindBusy, Provider: platform,
			Reason: fmt.Sprintf("node pool %s is %s (%s): GKE takes no other operation until it ends", s.ProviderName, p.ProviderState, p.State)}
	}
	op, err := d.step(ctx, cs, c, g, np, &p, s, steps[0])
	if err != nil {
		return nil, err
	}
	d.started(c, s.ProviderName, op)
	p.State, p.ProviderState, p.ReadyUnknown = provider.StateUpdating, "RECONCILING", true
	return &p, nil
}

// repair deletes a node pool whose create or delete failed: it takes no
// update, only a delete. Once it is gone, the pool is created again.
func (d *Driver) repair(ctx context.Context, cs *clients, c *kpool.Cluster, g *kpool.GCPCluster, p *provider.Pool) (*provider.Pool, error) {
	op, err := cs.gke.Projects.Locations.Clusters.NodePools.Delete(poolPath(g, p.ProviderName)).Context(ctx).Do()
	if err != nil {
		return nil, classify(err, "")
	}
	d.started(c, p.ProviderName, op)
	p.State, p.ProviderState = provider.StateDeleting, "STOPPING"
	p.Message = fmt.Sprintf("ERROR (%s): deleting it to create it again", p.Message)
	return p, nil
}

// step starts the GKE operation of one step of an update.
func (d *Driver) step(ctx context.Context, cs *clients, c *kpool.Cluster, g *kpool.GCPCluster, np *container.NodePool, p *provider.Pool,
	s provider.PoolSpec, step string) (*container.Operation, error) {
	name := poolPath(g, s.ProviderName)
	pools := cs.gke.Projects.Locations.Clusters.NodePools
	var op *container.Operation
	var err error
	switch step {
	case stepUpdate:
		var req *container.UpdateNodePoolRequest
		if req, err = d.updateRequest(ctx, cs, c, g, np, p, s); err != nil {
			return nil, err
		}
		op, err = pools.Update(name, req).Context(ctx).Do()
	case stepAutoscaling:
		a := autoscaling(s)
		if a == nil {
			a = &container.NodePoolAutoscaling{Enabled: false, ForceSendFields: []string{"Enabled"}}
		}
		op, err = pools.SetAutoscaling(name, &container.SetNodePoolAutoscalingRequest{Name: name, Autoscaling: a}).Context(ctx).Do()
	case stepSize:
		var per int64
		if per, err = perZone(s.Count, np.Locations); err != nil {
			return nil, err
		}
		op, err = pools.SetSize(name, &container.SetNodePoolSizeRequest{Name: name, NodeCount: per, ForceSendFields: []string{"NodeCount"}}).Context(ctx).Do()
	case stepManagement:
		auto := s.Version == ""
		op, err = pools.SetManagement(name, &container.SetNodePoolManagementRequest{Name: name,
			Management: &container.NodeManagement{AutoRepair: true, AutoUpgrade: auto, ForceSendFields: []string{"AutoRepair", "AutoUpgrade"}}}).Context(ctx).Do()
	}
	if err != nil {
		return nil, classify(err, "")
	}
	return op, nil
}

// updateRequest is the update step's request: the labels, taints and
// resource labels (the user's and the owner's mark) that differ, and the
// version, machine type, disk and zones that differ; sent with the etag of
// the pool it was made from. GKE's own GPU taint is never sent as the
// user's: GKE keeps it.
func (d *Driver) updateRequest(ctx context.Context, cs *clients, c *kpool.Cluster, g *kpool.GCPCluster, np *container.NodePool, p *provider.Pool,
	s provider.PoolSpec) (*container.UpdateNodePoolRequest, error) {
	req := &container.UpdateNodePoolRequest{Name: poolPath(g, s.ProviderName), Etag: np.Etag}
	if err := setSets(req, p, s); err != nil {
		return nil, err
	}
	if s.Version != "" && !versionMatches(p.Version, s.Version) {
		req.NodeVersion = s.Version
	}
	if s.MachineType != "" && s.MachineType != p.MachineType {
		req.MachineType = s.MachineType
	}
	if s.DiskSizeGB != 0 && s.DiskSizeGB != p.DiskSizeGB {
		req.DiskSizeGb = int64(s.DiskSizeGB)
	}
	if s.DiskType != "" && s.DiskType != p.DiskType {
		req.DiskType = s.DiskType
	}
	if len(s.Zones) > 0 && !slices.Equal(p.Zones, s.Zones) {
		zones, err := d.zonesFor(ctx, cs, c, g, s)
		if err != nil {
			return nil, err
		}
		// The per-zone count stays: the pool's count must still divide
		// over the new zones.
		if !s.Autoscaling {
			if _, err := perZone(s.Count, zones); err != nil {
				return nil, err
			}
		}
		req.Locations = zones
	}
	if upgradeDiffers(p, s) {
		var err error
		if req.UpgradeSettings, err = upgradeSettings(s.Upgrade, p.Upgrade); err != nil {
			return nil, err
		}
	}
	return req, nil
}

// setSets puts in req the labels, taints and resource labels that differ
// from the pool's. GKE takes an empty set as no set (UpdateNodePoolRequest:
// "If this field is not present, the labels will not be changed"; an
// empty one is answered "At least one of [...] must be specified"), so
// the last label, taint or resource label cannot be removed in place: that
// is refused, naming the field, rather than sent and silently ignored,
// which would leave the pool drifted for ever.
func setSets(req *container.UpdateNodePoolRequest, p *provider.Pool, s provider.PoolSpec) error {
	const emptied = "GKE's nodePools.update takes an empty set as no change, so a node pool's last %s cannot be removed in place; keep one, or replace the pool"
	if !provider.SameLabels(p.Labels, s.Labels) {
		if len(s.Labels) == 0 {
			return provider.ValidationError(platform, "spec.labels", emptied, "label")
		}
		req.Labels = &container.NodeLabels{Labels: s.Labels}
	}
	if !provider.SameTaints(userTaints(p.Taints, s), s.Taints) {
		if len(s.Taints) == 0 {
			return provider.ValidationError(platform, "spec.taints", emptied, "taint")
		}
		req.Taints = &container.NodeTaints{Taints: taints(s.Taints)}
	}
	want := resourceLabels(s)
	if !provider.SameMap(provider.TagKeys.Put(p.Tags, p.Owner), want) {
		if len(want) == 0 {
			return provider.ValidationError(platform, "spec.tags", emptied, "tag")
		}
		req.ResourceLabels = &container.ResourceLabels{Labels: want}
	}
	return nil
}

// userTaints are a pool's taints less those GKE adds itself
// (Profile.NodeTaints: its GPU taint) that the spec does not ask for.
func userTaints(got []kpool.Taint, s provider.PoolSpec) []kpool.Taint {
	var out []kpool.Taint
	added := profile.NodeTaints(s)
	for _, t := range got {
		if slices.Contains(added, t) && !slices.Contains(s.Taints, t) {
			continue
		}
		out = append(out, t)
	}
	return out
}

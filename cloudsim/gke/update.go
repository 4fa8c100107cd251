package gke

import (
	"slices"
	"strings"

	container "google.golang.org/api/container/v1"

	"github.com/kpool/kpool/cloudsim/sim"
)

// poolVerb answers the custom methods, nodePools/NP:verb: setSize,
// setAutoscaling, setManagement. A POST to the pool itself is no method
// of GKE's.
func (s *Server) poolVerb(req *sim.Request) *sim.Reply {
	_, verb, custom := strings.Cut(req.HTTP.PathValue("pool"), ":")
	if !custom {
		return methodNotFound(req)
	}
	set, ok := map[string]func(*sim.Request, *pool) *sim.Reply{
		"setSize": s.setSize, "setAutoscaling": s.setAutoscaling, "setManagement": s.setManagement,
	}[verb]
	if !ok {
		return errorReply(codeUnimplemented, "kpool cloudsim does not emulate nodePools.%s.", verb)
	}
	p, rep := s.find(req)
	if rep != nil {
		return rep
	}
	return set(req, p)
}

// started answers a call that started operation o.
func (s *Server) started(req *sim.Request, o *sim.Operation) *sim.Reply {
	return jsonReply(200, s.operation(req.BaseURL(), o, req.Now))
}

func (s *Server) setSize(req *sim.Request, p *pool) *sim.Reply {
	var body container.SetNodePoolSizeRequest
	if rep := decode(req, &body); rep != nil {
		return rep
	}
	if body.NodeCount < 0 || body.NodeCount > maxPerZone {
		return invalid("nodeCount", "node_count must be between 0 and %d per zone, got %d.", maxPerZone, body.NodeCount)
	}
	if rep := clusterBusy(p.cluster, p, false, false); rep != nil {
		return rep
	}
	if rep := s.checkQuota(p.cluster, p, int(body.NodeCount), p.np.Locations, p.np.Config.MachineType); rep != nil {
		return rep
	}
	p.setPerZone(int(body.NodeCount))
	return s.started(req, s.start(req, p, opSetSize, p.claim(p.np), 0, nil))
}

func (s *Server) setAutoscaling(req *sim.Request, p *pool) *sim.Reply {
	var body container.SetNodePoolAutoscalingRequest
	if rep := decode(req, &body); rep != nil {
		return rep
	}
	if body.Autoscaling == nil {
		return invalid("autoscaling", "autoscaling is required.")
	}
	if rep := checkAutoscaling("autoscaling", body.Autoscaling); rep != nil {
		return rep
	}
	if rep := clusterBusy(p.cluster, p, false, false); rep != nil {
		return rep
	}
	a := *body.Autoscaling
	// The autoscaler brings the pool into its new bounds.
	per := p.perZone
	if a.Enabled {
		lo, hi := int(a.MinNodeCount), int(a.MaxNodeCount)
		if a.TotalMaxNodeCount > 0 {
			n := max(len(p.np.Locations), 1)
			lo, hi = (int(a.TotalMinNodeCount)+n-1)/n, int(a.TotalMaxNodeCount)/n
		}
		per = min(max(per, lo), max(hi, lo))
	}
	if rep := s.checkQuota(p.cluster, p, per, p.np.Locations, p.np.Config.MachineType); rep != nil {
		return rep
	}
	if per != p.perZone {
		p.setPerZone(per)
	}
	return s.started(req, s.start(req, p, opUpdate, p.claim(p.np), 0, func() { p.np.Autoscaling = &a }))
}

func (s *Server) setManagement(req *sim.Request, p *pool) *sim.Reply {
	var body container.SetNodePoolManagementRequest
	if rep := decode(req, &body); rep != nil {
		return rep
	}
	if body.Management == nil {
		return invalid("management", "management is required.")
	}
	if rep := clusterBusy(p.cluster, p, false, false); rep != nil {
		return rep
	}
	m := *body.Management
	return s.started(req, s.start(req, p, opManagement, p.claim(p.np), 0, func() { p.np.Management = &m }))
}

func (s *Server) updatePool(req *sim.Request) *sim.Reply {
	p, rep := s.find(req)
	if rep != nil {
		return rep
	}
	var body container.UpdateNodePoolRequest
	if rep := decode(req, &body); rep != nil {
		return rep
	}
	if rep := specified(&body); rep != nil {
		return rep
	}
	if body.Etag != "" && body.Etag != p.etag {
		return errorReply(codeAborted, "Node pool %q has etag %q, not the %q of the request: it changed since it was read.", p.np.Name, p.etag, body.Etag)
	}
	next, kind, rep := updated(p, &body)
	if rep != nil {
		return rep
	}
	if body.MachineType != "" || len(body.Locations) > 0 {
		if rep := checkOffered(next.Config.MachineType, next.Locations); rep != nil {
			return rep
		}
	}
	if rep := clusterBusy(p.cluster, p, false, false); rep != nil {
		return rep
	}
	if rep := s.checkQuota(p.cluster, p, p.perZone, next.Locations, next.Config.MachineType); rep != nil {
		return rep
	}
	extra, to, short := 0, 0, map[string]int(nil)
	if kind == opUpgrade {
		extra = p.goalIn(p.np.Locations, p.np.Config) // surge upgrade: every node is replaced
		if short = p.claimUpgrade(next); len(short) == 0 {
			to = p.goalIn(next.Locations, next.Config)
		} else {
			to = extra
		}
	} else {
		to = p.claim(next)
	}
	o := s.start(req, p, kind, to, extra, func() { p.np = next })
	in := infoOf(o)
	in.version, in.replace, in.short = next.Version, extra, short
	if len(short) > 0 {
		in.replace = 0 // no new instance comes: none is replaced
	}
	if kind == opUpgrade {
		// The pool's instances are made from the upgrade's template now.
		in.apply = func() { p.np, p.template = next, o.ID }
	}
	return s.started(req, o)
}

// updated returns the node pool an update makes of p, and the operation
// it is: opUpgrade when its nodes are replaced (a new version, image,
// machine type or disk), else opUpdate.
func updated(p *pool, body *container.UpdateNodePoolRequest) (*container.NodePool, string, *sim.Reply) {
	c := p.cluster
	next := sim.CloneJSON(p.np)
	cfg := next.Config
	kind := opUpdate
	if body.NodeVersion != "" {
		v, rep := resolveVersion(c, "nodeVersion", body.NodeVersion)
		if rep != nil {
			return nil, "", rep
		}
		if v != next.Version {
			next.Version, kind = v, opUpgrade
		}
	}
	for _, ch := range []struct {
		changed bool
		apply   func()
	}{
		{body.ImageType != "" && body.ImageType != cfg.ImageType, func() { cfg.ImageType = body.ImageType }},
		{body.MachineType != "" && body.MachineType != cfg.MachineType, func() { cfg.MachineType = body.MachineType }},
		{body.DiskSizeGb != 0 && body.DiskSizeGb != cfg.DiskSizeGb, func() { cfg.DiskSizeGb = body.DiskSizeGb }},
		{body.DiskType != "" && body.DiskType != cfg.DiskType, func() { cfg.DiskType = body.DiskType }},
	} {
		if ch.changed {
			ch.apply()
			kind = opUpgrade
		}
	}
	if body.Accelerators != nil {
		return nil, "", invalid("accelerators", "The accelerators of node pool %q cannot be changed; create a new node pool.", p.np.Name)
	}
	if body.Locations != nil {
		if len(body.Locations) == 0 {
			return nil, "", invalid("locations", "A node pool needs at least one location.")
		}
		if rep := checkLocations(c, "locations", body.Locations); rep != nil {
			return nil, "", rep
		}
		next.Locations = slices.Clone(body.Locations)
	}
	// An empty set is no set: GKE takes labels, taints, resource labels
	// and tags only when they hold something (see specified).
	if body.Labels != nil && len(body.Labels.Labels) > 0 {
		if rep := checkLabelSize("labels", body.Labels.Labels); rep != nil {
			return nil, "", rep
		}
		cfg.Labels = body.Labels.Labels
	}
	if body.Taints != nil && len(body.Taints.Taints) > 0 {
		// The taints replace the user's; GKE keeps its own GPU taint.
		own := slices.ContainsFunc(cfg.Taints, isGPUTaint)
		cfg.Taints = body.Taints.Taints
		if own && !slices.ContainsFunc(cfg.Taints, isGPUTaint) {
			t := gpuTaint
			cfg.Taints = append(cfg.Taints, &t)
		}
	}
	if body.ResourceLabels != nil && len(body.ResourceLabels.Labels) > 0 {
		cfg.ResourceLabels = body.ResourceLabels.Labels
	}
	if body.Tags != nil && len(body.Tags.Tags) > 0 {
		cfg.Tags = body.Tags.Tags
	}
	if body.UpgradeSettings != nil {
		// The settings replace the pool's: GKE takes the message whole
		// (its int32 fields cannot tell 0 from unset).
		u, rep := upgradeOf("upgradeSettings", body.UpgradeSettings)
		if rep != nil {
			return nil, "", rep
		}
		next.UpgradeSettings = u
	}
	return next, kind, checkConfig("", cfg, next.Version)
}

// specified refuses an update that sets nothing, as GKE does: labels,
// taints, resource labels and tags count only when they hold something,
// so an empty set neither clears them nor makes the request one
// (UpdateNodePoolRequest: "If this field is not present, the labels will
// not be changed"; GKE's answer to an update whose labels are {},
// recorded in hashicorp/terraform-provider-google#15848: "400: At least
// one of [...] must be specified.").
func specified(b *container.UpdateNodePoolRequest) *sim.Reply {
	set := b.NodeVersion != "" || b.ImageType != "" || len(b.Locations) > 0 || b.MachineType != "" || b.DiskType != "" ||
		b.DiskSizeGb != 0 || b.Accelerators != nil ||
		b.Labels != nil && len(b.Labels.Labels) > 0 || b.Taints != nil && len(b.Taints.Taints) > 0 ||
		b.ResourceLabels != nil && len(b.ResourceLabels.Labels) > 0 || b.Tags != nil && len(b.Tags.Tags) > 0 ||
		b.WorkloadMetadataConfig != nil || b.UpgradeSettings != nil || b.KubeletConfig != nil || b.LinuxNodeConfig != nil ||
		b.NodeNetworkConfig != nil || b.GcfsConfig != nil || b.Gvnic != nil || b.ConfidentialNodes != nil ||
		b.LoggingConfig != nil || b.FastSocket != nil || b.WindowsNodeConfig != nil || b.ContainerdConfig != nil ||
		b.ResourceManagerTags != nil
	if set {
		return nil
	}
	return invalid("", "At least one of ['node_version', 'image_type', 'updated_node_pool', 'locations', 'workload_metadata_config', "+
		"'upgrade_settings', 'kubelet_config', 'linux_node_config', 'tags', 'taints', 'labels', 'node_network_config', 'gcfs_config', "+
		"'gvnic', 'confidential_nodes', 'logging_config', 'fast_socket', 'resource_labels', 'accelerators', 'windows_node_config', "+
		"'machine_type', 'disk_type', 'disk_size_gb', 'containerd_config', 'resource_manager_tags'] must be specified.")
}

package oke

import (
	"encoding/json"
	"strings"

	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/sim"
)

// validateUpdate checks UpdateNodePoolDetails against the pool and returns
// its configuration once changed. What the body leaves out keeps its
// value.
func (s *Server) validateUpdate(p *pool, in *ce.UpdateNodePoolDetails, body []byte) (ce.NodePool, *sim.Reply) {
	next := p.np
	ncd := *next.NodeConfigDetails
	next.NodeConfigDetails = &ncd
	if in.QuantityPerSubnet != nil || len(in.SubnetIds) > 0 {
		return next, invalid("quantityPerSubnet and subnetIds are not emulated by kpool cloudsim: give nodeConfigDetails.")
	}
	gave := listsGiven(body)
	for _, update := range []func() *sim.Reply{
		func() *sim.Reply { return updateIdentity(p, &next, in) },
		func() *sim.Reply { return updateShape(&next, in) },
		func() *sim.Reply { return updateSource(&next, in) },
		func() *sim.Reply { return updateMetadata(&next, in, gave) },
		func() *sim.Reply { return p.cluster.updateNodeConfig(&ncd, in.NodeConfigDetails, gave) },
		func() *sim.Reply { return updateCycling(&next, in) },
	} {
		if rep := update(); rep != nil {
			return next, rep
		}
	}
	// A new shape, or new placements, must be offered where the pool is.
	if in.NodeShape != nil || gave.placements {
		if rep := p.cluster.checkOffered(ptr.Deref(next.NodeShape, ""), ncd.PlacementConfigs); rep != nil {
			return next, rep
		}
	}
	if in.NodeMetadata != nil {
		next.NodeMetadata = in.NodeMetadata
	}
	if in.SshPublicKey != nil {
		next.SshPublicKey = in.SshPublicKey
	}
	return next, nil
}

// given are the lists an update's body gives: the SDK's decoders make
// empty lists of absent ones, so they are read from the body itself.
type given struct{ labels, placements, nsgs bool }

func listsGiven(body []byte) given {
	var top struct {
		InitialNodeLabels json.RawMessage `json:"initialNodeLabels"`
		NodeConfigDetails struct {
			PlacementConfigs json.RawMessage `json:"placementConfigs"`
			NsgIds           json.RawMessage `json:"nsgIds"`
		} `json:"nodeConfigDetails"`
	}
	_ = json.Unmarshal(body, &top)
	has := func(r json.RawMessage) bool { return len(r) > 0 && string(r) != "null" }
	return given{labels: has(top.InitialNodeLabels), placements: has(top.NodeConfigDetails.PlacementConfigs), nsgs: has(top.NodeConfigDetails.NsgIds)}
}

// updateIdentity applies an update's name and Kubernetes version.
func updateIdentity(p *pool, next *ce.NodePool, in *ce.UpdateNodePoolDetails) *sim.Reply {
	if in.Name != nil {
		if n := *in.Name; n == "" || len(n) > 255 || strings.TrimSpace(n) != n {
			return invalid("name must be 1-255 characters without leading or trailing spaces.")
		}
		next.Name = in.Name
	}
	if in.KubernetesVersion != nil {
		if rep := p.cluster.checkVersion(*in.KubernetesVersion, ptr.Deref(p.np.KubernetesVersion, "")); rep != nil {
			return rep
		}
		next.KubernetesVersion = in.KubernetesVersion
	}
	return nil
}

// updateShape applies an update's shape and shape configuration: a
// member the configuration leaves out keeps its value, a fixed shape has
// none.
func updateShape(next *ce.NodePool, in *ce.UpdateNodePoolDetails) *sim.Reply {
	if in.NodeShape != nil {
		next.NodeShape = in.NodeShape
		if !strings.HasSuffix(*in.NodeShape, ".Flex") && in.NodeShapeConfig == nil {
			next.NodeShapeConfig = nil
		}
	}
	if sc := in.NodeShapeConfig; sc != nil {
		cfg := &ce.NodeShapeConfig{Ocpus: sc.Ocpus, MemoryInGBs: sc.MemoryInGBs}
		if old := next.NodeShapeConfig; old != nil {
			if cfg.Ocpus == nil {
				cfg.Ocpus = old.Ocpus
			}
			if cfg.MemoryInGBs == nil {
				cfg.MemoryInGBs = old.MemoryInGBs
			}
		}
		next.NodeShapeConfig = cfg
	}
	if in.NodeShape != nil || in.NodeShapeConfig != nil {
		return checkShape(ptr.Deref(next.NodeShape, ""), next.NodeShapeConfig)
	}
	return nil
}

// updateSource applies an update's node source; a boot volume size it
// leaves out keeps its value.
func updateSource(next *ce.NodePool, in *ce.UpdateNodePoolDetails) *sim.Reply {
	if in.NodeSourceDetails == nil {
		return nil
	}
	if rep := checkSource(in.NodeSourceDetails); rep != nil {
		return rep
	}
	src := in.NodeSourceDetails.(ce.NodeSourceViaImageDetails)
	if old, ok := next.NodeSourceDetails.(ce.NodeSourceViaImageDetails); ok && src.BootVolumeSizeInGBs == nil {
		src.BootVolumeSizeInGBs = old.BootVolumeSizeInGBs
	}
	next.NodeSourceDetails = src
	return nil
}

// updateMetadata applies an update's initial node labels and free-form
// tags.
func updateMetadata(next *ce.NodePool, in *ce.UpdateNodePoolDetails, gave given) *sim.Reply {
	if gave.labels {
		if rep := checkLabels(in.InitialNodeLabels); rep != nil {
			return rep
		}
		next.InitialNodeLabels = in.InitialNodeLabels
	}
	if in.FreeformTags != nil {
		if rep := checkTags("freeformTags", in.FreeformTags); rep != nil {
			return rep
		}
		next.FreeformTags = in.FreeformTags
	}
	return nil
}

// updateNodeConfig applies an update's nodeConfigDetails to ncd and checks
// the size and placement they make.
func (c *cluster) updateNodeConfig(ncd *ce.NodePoolNodeConfigDetails, u *ce.UpdateNodePoolNodeConfigDetails, gave given) *sim.Reply {
	if u == nil {
		return nil
	}
	if u.Size != nil {
		ncd.Size = u.Size
	}
	if gave.placements {
		ncd.PlacementConfigs = u.PlacementConfigs
	}
	if u.FreeformTags != nil {
		if rep := checkTags("nodeConfigDetails.freeformTags", u.FreeformTags); rep != nil {
			return rep
		}
		ncd.FreeformTags = u.FreeformTags
	}
	if gave.nsgs {
		ncd.NsgIds = u.NsgIds
	}
	return c.checkPlacement(ncd.Size, ncd.PlacementConfigs)
}

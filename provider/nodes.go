package provider

import (
	"slices"

	"github.com/kpool/kpool"
)

// LabelTopologyZone is the well-known label every cloud sets on its nodes to
// their zone, in the cloud's own spelling (Profile.NodeZone).
const LabelTopologyZone = "topology.kubernetes.io/zone"

// WithTaint returns ts with t added unless it is there already: a profile's
// NodeTaints adds the provider's own taints to a pool's with it.
func WithTaint(ts []kpool.Taint, t kpool.Taint) []kpool.Taint {
	out := slices.Clone(ts)
	if !slices.Contains(out, t) {
		out = append(out, t)
	}
	return out
}

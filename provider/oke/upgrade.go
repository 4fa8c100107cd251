package oke

import (
	"strconv"
	"strings"
	"time"

	"github.com/kpool/kpool"
)

// MaxEvictionGrace is the longest evictionGraceDuration OKE takes (the
// API reference's NodeEvictionNodePoolSettings: "Default PT60M, Min PT0M,
// Max: PT60M"; "Notes on Cordoning and Draining Managed Nodes Before
// Termination"): a pool's drainTimeout is sent as it.
const MaxEvictionGrace = 60 * time.Minute

// validateStrategy checks spec.updateStrategy against what OKE takes of it
// (nodePoolCyclingDetails and nodeEvictionNodePoolSettings), so that a
// value OKE would refuse is refused at submit:
//   - drainTimeout is at most 60m (evictionGraceDuration: PT0M to PT60M);
//     kpool does not clamp it, which would end drains sooner than asked;
//   - maxSurge and maxUnavailable given as a number of nodes are at most
//     the pool's size (NodePoolCyclingDetails: "Ranges from 0 to Nodepool
//     size or 0% to 100%"): the spec's node count, or with autoscaling its
//     minimum, the smallest size the pool may have when OKE checks it; a
//     percentage fits any size. kpool's own rules already refuse a
//     percentage over 100% and a maxSurge of 0, so both are never 0 (which
//     OKE refuses: "Balancing Service Availability and Cost When Cycling
//     Managed Nodes in Node Pools").
func validateStrategy(fe *kpool.FieldErrors, s *kpool.NodePoolSpec) {
	u := s.UpdateStrategy
	if u == nil {
		return
	}
	const f = "spec.updateStrategy."
	switch d, err := time.ParseDuration(u.DrainTimeout); {
	case err != nil:
	case d > MaxEvictionGrace:
		fe.Add(f+"drainTimeout", "%s is more than OKE's 60m: OKE drains a node for its pool's evictionGraceDuration, PT0M to PT60M", d)
	case d%time.Second != 0:
		fe.Add(f+"drainTimeout", "%s is not a whole number of seconds, which OKE's evictionGraceDuration (ISO 8601, such as PT30M) is sent as", d)
	}
	size, what := s.Count(), "node count"
	if s.Autoscaling.On() {
		size, what = 0, "minimum node count (autoscaling.minNodes)"
		if s.Autoscaling.MinNodes != nil {
			size = *s.Autoscaling.MinNodes
		}
	}
	for _, v := range []struct{ field, value string }{{"maxSurge", u.MaxSurge}, {"maxUnavailable", u.MaxUnavailable}} {
		if v.value == "" || strings.HasSuffix(v.value, "%") {
			continue
		}
		if n, err := strconv.Atoi(v.value); err == nil && n > size {
			fe.Add(f+v.field, "%d nodes is more than the pool's %s (%d): OKE takes 0 to the node pool's size, or a percentage such as 25%%", n, what, size)
		}
	}
}

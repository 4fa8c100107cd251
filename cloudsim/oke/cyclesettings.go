package oke

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/sim"
)

// A node pool's cycling and eviction settings: nodePoolCyclingDetails
// (maximumSurge, maximumUnavailable, isNodeCyclingEnabled, cycleModes) and
// nodeEvictionNodePoolSettings (evictionGraceDuration,
// isForceDeleteAfterGraceDuration, isForceActionAfterGraceDuration) of
// CreateNodePoolDetails, UpdateNodePoolDetails and NodePool. The rules
// are the API reference's (the SDK's model, oci-go-sdk v65
// containerengine NodePoolCyclingDetails and NodeEvictionNodePoolSettings)
// and OKE's documentation, cited at each.

// Defaults when a pool gives none: maximumSurge 1 and maximumUnavailable
// 0 (NodePoolCyclingDetails: "Defaults to 1", "Defaults to 0"),
// evictionGraceDuration PT60M (NodeEvictionNodePoolSettings: "Default
// PT60M, Min PT0M, Max: PT60M").
const (
	defaultSurge       = "1"
	defaultUnavailable = "0"
	defaultGrace       = 60 * time.Minute
	maxGrace           = 60 * time.Minute
)

var (
	// intOrPercentRE: "OKE supports both integer and percentage input".
	intOrPercentRE = regexp.MustCompile(`^(\d{1,9})(%?)$`)
	// isoDurationRE: "Format ISO 8601 e.g PT30M", the time part.
	isoDurationRE = regexp.MustCompile(`^PT(?:(\d{1,6})H)?(?:(\d{1,6})M)?(?:(\d{1,8})S)?$`)
)

// checkCycling checks nodePoolCyclingDetails for a pool of size nodes:
// maximumSurge and maximumUnavailable are each a number of nodes from 0
// to the pool's size or a percentage from 0% to 100% (the model: "Ranges
// from 0 to Nodepool size or 0% to 100%"), not both 0 ("Balancing Service
// Availability and Cost When Cycling Managed Nodes in Node Pools": "You
// cannot specify 0 as the allowed number for both"); cycleModes other
// than INSTANCE_REPLACE (boot volume replacement) are not emulated.
func checkCycling(d *ce.NodePoolCyclingDetails, size int) *sim.Reply {
	if d == nil {
		return nil
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"maximumSurge", d.MaximumSurge}, {"maximumUnavailable", d.MaximumUnavailable}} {
		if f.v == nil {
			continue
		}
		m := intOrPercentRE.FindStringSubmatch(*f.v)
		if m == nil {
			return invalid("nodePoolCyclingDetails.%s %q must be a number of nodes or a percentage, such as 1 or 25%%.", f.name, *f.v)
		}
		n, _ := strconv.Atoi(m[1])
		switch {
		case m[2] == "%" && n > 100:
			return invalid("nodePoolCyclingDetails.%s %s must be between 0%% and 100%%.", f.name, *f.v)
		case m[2] == "" && n > size:
			return invalid("nodePoolCyclingDetails.%s %s must be between 0 and the node pool's size (%d).", f.name, *f.v, size)
		}
	}
	if isZero(ptr.Deref(d.MaximumSurge, defaultSurge)) && isZero(ptr.Deref(d.MaximumUnavailable, defaultUnavailable)) {
		return invalid("nodePoolCyclingDetails.maximumSurge and maximumUnavailable cannot both be 0.")
	}
	for _, m := range d.CycleModes {
		if m != ce.CycleModeInstanceReplace {
			return invalid("nodePoolCyclingDetails.cycleModes %s is not emulated by kpool cloudsim: only INSTANCE_REPLACE.", m)
		}
	}
	return nil
}

func isZero(v string) bool { return strings.TrimSuffix(v, "%") == "0" }

// checkEviction checks nodeEvictionNodePoolSettings: evictionGraceDuration
// is an ISO 8601 duration from PT0M to PT60M (the model: "Min PT0M, Max:
// PT60M. Format ISO 8601 e.g PT30M").
func checkEviction(e *ce.NodeEvictionNodePoolSettings) *sim.Reply {
	if e == nil || e.EvictionGraceDuration == nil {
		return nil
	}
	d, ok := parseISODuration(*e.EvictionGraceDuration)
	switch {
	case !ok:
		return invalid("nodeEvictionNodePoolSettings.evictionGraceDuration %q is not an ISO 8601 duration such as PT30M.", *e.EvictionGraceDuration)
	case d > maxGrace:
		return invalid("nodeEvictionNodePoolSettings.evictionGraceDuration %s must be between PT0M and PT60M.", *e.EvictionGraceDuration)
	}
	return nil
}

// parseISODuration reads an ISO 8601 duration of hours, minutes and
// seconds (PT1H, PT30M, PT90S, PT1H30M).
func parseISODuration(v string) (time.Duration, bool) {
	m := isoDurationRE.FindStringSubmatch(v)
	if m == nil || v == "PT" {
		return 0, false
	}
	var d time.Duration
	for i, unit := range []time.Duration{time.Hour, time.Minute, time.Second} {
		if m[i+1] != "" {
			n, _ := strconv.Atoi(m[i+1])
			d += time.Duration(n) * unit
		}
	}
	return d, true
}

// mergeCycling applies an update's nodePoolCyclingDetails to the pool's:
// each member given replaces the pool's.
func mergeCycling(have, in *ce.NodePoolCyclingDetails) *ce.NodePoolCyclingDetails {
	if in == nil {
		return have
	}
	out := ce.NodePoolCyclingDetails{}
	if have != nil {
		out = *have
	}
	if in.MaximumSurge != nil {
		out.MaximumSurge = in.MaximumSurge
	}
	if in.MaximumUnavailable != nil {
		out.MaximumUnavailable = in.MaximumUnavailable
	}
	if in.IsNodeCyclingEnabled != nil {
		out.IsNodeCyclingEnabled = in.IsNodeCyclingEnabled
	}
	if in.CycleModes != nil {
		out.CycleModes = in.CycleModes
	}
	return &out
}

// mergeEviction applies an update's nodeEvictionNodePoolSettings.
func mergeEviction(have, in *ce.NodeEvictionNodePoolSettings) *ce.NodeEvictionNodePoolSettings {
	if in == nil {
		return have
	}
	out := ce.NodeEvictionNodePoolSettings{}
	if have != nil {
		out = *have
	}
	if in.EvictionGraceDuration != nil {
		out.EvictionGraceDuration = in.EvictionGraceDuration
	}
	if in.IsForceDeleteAfterGraceDuration != nil {
		out.IsForceDeleteAfterGraceDuration = in.IsForceDeleteAfterGraceDuration
	}
	if in.IsForceActionAfterGraceDuration != nil {
		out.IsForceActionAfterGraceDuration = in.IsForceActionAfterGraceDuration
	}
	return &out
}

// updateCycling checks and applies an update's cycling and eviction
// settings to next (whose size is the update's).
func updateCycling(next *ce.NodePool, in *ce.UpdateNodePoolDetails) *sim.Reply {
	if rep := checkCycling(in.NodePoolCyclingDetails, ptr.Deref(next.NodeConfigDetails.Size, 0)); rep != nil {
		return rep
	}
	if rep := checkEviction(in.NodeEvictionNodePoolSettings); rep != nil {
		return rep
	}
	next.NodePoolCyclingDetails = mergeCycling(next.NodePoolCyclingDetails, in.NodePoolCyclingDetails)
	next.NodeEvictionNodePoolSettings = mergeEviction(next.NodeEvictionNodePoolSettings, in.NodeEvictionNodePoolSettings)
	return nil
}

// scaledNodes is a number or a percentage of size nodes: a percentage
// rounded up for the surge and down for the unavailable nodes, as
// Kubernetes rounds a rolling update's maxSurge and maxUnavailable (OKE's
// documentation gives no rounding).
func scaledNodes(v string, size int, up bool) int {
	m := intOrPercentRE.FindStringSubmatch(v)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	if m[2] == "" {
		return n
	}
	if up {
		return (n*size + 99) / 100
	}
	return n * size / 100
}

package driver

import (
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/provider"
)

// A pool's update strategy (provider.Upgrade) is OKE's node pool cycling
// and eviction settings (oci-go-sdk v65 containerengine):
//
//	MaxSurge        nodePoolCyclingDetails.maximumSurge ("1", "33%")
//	MaxUnavailable  nodePoolCyclingDetails.maximumUnavailable
//	Cycle           nodePoolCyclingDetails.isNodeCyclingEnabled (an update only)
//	DrainTimeout    nodeEvictionNodePoolSettings.evictionGraceDuration (ISO 8601: PT30M)
//	Force           nodeEvictionNodePoolSettings.isForceDeleteAfterGraceDuration
//
// A setting the spec leaves unset is not sent: the pool keeps OKE's
// default (surge 1, unavailable 0, grace PT60M, no force) or what it had.
// Soak has no OKE setting: OKE terminates a drained node at once.

// cyclingDetails is the nodePoolCyclingDetails of an upgrade (nil: none
// to send); cycle turns node cycling on.
func cyclingDetails(u *provider.Upgrade, cycle bool) *ce.NodePoolCyclingDetails {
	if u == nil || (u.MaxSurge == "" && u.MaxUnavailable == "" && !cycle) {
		return nil
	}
	d := &ce.NodePoolCyclingDetails{}
	if u.MaxSurge != "" {
		d.MaximumSurge = common.String(u.MaxSurge)
	}
	if u.MaxUnavailable != "" {
		d.MaximumUnavailable = common.String(u.MaxUnavailable)
	}
	if cycle {
		d.IsNodeCyclingEnabled = common.Bool(true)
	}
	return d
}

// evictionSettings is the nodeEvictionNodePoolSettings of an upgrade (nil:
// none to send).
func evictionSettings(u *provider.Upgrade) *ce.NodeEvictionNodePoolSettings {
	if u == nil || (u.DrainTimeout == 0 && !u.Force) {
		return nil
	}
	e := &ce.NodeEvictionNodePoolSettings{IsForceDeleteAfterGraceDuration: common.Bool(u.Force)}
	if u.DrainTimeout > 0 {
		e.EvictionGraceDuration = common.String(isoDuration(u.DrainTimeout))
	}
	return e
}

// isoDuration is a duration as ISO 8601 gives it: PT30M, PT1H, PT90S
// (whole seconds; the profile keeps drain timeouts to 1m-60m).
func isoDuration(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("PT%dH", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("PT%dM", d/time.Minute)
	}
	return fmt.Sprintf("PT%dS", d/time.Second)
}

var isoRE = regexp.MustCompile(`^PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?$`)

// parseISODuration reads an ISO 8601 duration of hours, minutes and
// seconds; false for another form.
func parseISODuration(v string) (time.Duration, bool) {
	m := isoRE.FindStringSubmatch(v)
	if m == nil || v == "PT" {
		return 0, false
	}
	var d time.Duration
	for i, unit := range []time.Duration{time.Hour, time.Minute, time.Second} {
		if m[i+1] != "" {
			f, err := strconv.ParseFloat(m[i+1], 64)
			if err != nil {
				return 0, false
			}
			d += time.Duration(f * float64(unit))
		}
	}
	return d, true
}

// observeUpgrade reads a node pool's cycling and eviction settings (nil
// when it has neither); isNodeCyclingEnabled is not read back (Cycle is
// what an update asks, not a setting).
func observeUpgrade(np ce.NodePool) *provider.Upgrade {
	cd, ev := np.NodePoolCyclingDetails, np.NodeEvictionNodePoolSettings
	if cd == nil && ev == nil {
		return nil
	}
	u := &provider.Upgrade{}
	if cd != nil {
		u.MaxSurge, u.MaxUnavailable = ptr.Deref(cd.MaximumSurge, ""), ptr.Deref(cd.MaximumUnavailable, "")
	}
	if ev != nil {
		u.DrainTimeout, _ = parseISODuration(ptr.Deref(ev.EvictionGraceDuration, ""))
		u.Force = ptr.Deref(ev.IsForceDeleteAfterGraceDuration, false)
	}
	return u
}

// upgradeUpdate puts in an update the settings that differ from the
// pool's (have, as observed), and node cycling when the spec asks for it
// and the pool has nodes to cycle; changed reports whether it put any.
func upgradeUpdate(in *ce.UpdateNodePoolDetails, have *provider.Upgrade, want *provider.Upgrade, stale int) (changed bool) {
	if want == nil {
		return false
	}
	h := ptr.Deref(have, provider.Upgrade{})
	cycle := want.Cycle && stale > 0
	if cycle || (want.MaxSurge != "" && want.MaxSurge != h.MaxSurge) || (want.MaxUnavailable != "" && want.MaxUnavailable != h.MaxUnavailable) {
		in.NodePoolCyclingDetails = cyclingDetails(want, cycle)
		changed = true
	}
	if (want.DrainTimeout > 0 && want.DrainTimeout != h.DrainTimeout) || want.Force != h.Force {
		in.NodeEvictionNodePoolSettings = evictionSettings(want)
		if in.NodeEvictionNodePoolSettings == nil { // force turned off, no timeout set
			in.NodeEvictionNodePoolSettings = &ce.NodeEvictionNodePoolSettings{IsForceDeleteAfterGraceDuration: common.Bool(false)}
		}
		changed = true
	}
	return changed
}

package gke

import (
	"strconv"
	"strings"

	"github.com/kpool/kpool"
)

// validateUpgrade checks spec.updateStrategy against what GKE's
// NodePool.UpgradeSettings takes (the driver sends it as SURGE with
// maxSurge and maxUnavailable; kpool carries out the soak, the drain
// timeout and onStuck itself):
//
//   - maxSurge and maxUnavailable are int32 node counts (REST reference,
//     NodePool.UpgradeSettings; container-api.json "format": "int32"): a
//     percentage is refused. A count worked out from the pool's size
//     would go stale as the pool scales (the autoscaler, a resize) and
//     never read back as the spec gives it, so drift would never settle.
//   - They must not both be 0 (GKE's rule as the Terraform provider
//     documents upgrade_settings: "max_surge and max_unavailable must not
//     be negative and at least one of them must be greater than zero";
//     the REST reference: "(maxUnavailable + maxSurge) determines the
//     level of parallelism"). Unset, maxSurge is kpool's and GKE's default
//     1 and maxUnavailable 0 (node-pool-upgrade-strategies).
func validateUpgrade(fe *kpool.FieldErrors, u *kpool.UpdateStrategy) {
	if u == nil {
		return
	}
	const f = "spec.updateStrategy."
	surge, surgeOK := nodeCount(fe, f+"maxSurge", u.MaxSurge, 1)
	unavailable, unavailableOK := nodeCount(fe, f+"maxUnavailable", u.MaxUnavailable, 0)
	if surgeOK && unavailableOK && surge == 0 && unavailable == 0 {
		fe.Add(f+"maxSurge", "GKE takes maxSurge and maxUnavailable of 0 together as no upgrade at all: give one of them at least 1 (NodePool.UpgradeSettings)")
	}
}

// nodeCount reads a node count of the strategy (def when unset); a
// percentage is refused, and a value kpool's own rules refuse is left to
// them (ok false).
func nodeCount(fe *kpool.FieldErrors, field, v string, def int) (n int, ok bool) {
	if v == "" {
		return def, true
	}
	if pct, isPct := strings.CutSuffix(v, "%"); isPct {
		if _, err := strconv.Atoi(pct); err == nil {
			fe.Add(field, "%q: GKE's upgradeSettings take a number of nodes, not a percentage (NodePool.UpgradeSettings is int32); give a count such as 1", v)
		}
		return 0, false
	}
	n, err := strconv.Atoi(v)
	return n, err == nil && n >= 0
}

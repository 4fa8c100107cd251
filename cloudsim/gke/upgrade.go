package gke

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	container "google.golang.org/api/container/v1"

	"github.com/kpool/kpool/cloudsim/sim"
)

// A node pool's upgrade settings (NodePool.upgradeSettings, and
// UpdateNodePoolRequest.upgradeSettings): checked as GKE checks them,
// stored and returned. The emulator's upgrades replace one node at a time
// whatever maxSurge says (README.md, "Not reproduced").

// Update strategies (NodePoolUpdateStrategy, container-api.json).
const (
	strategyUnspecified = "NODE_POOL_UPDATE_STRATEGY_UNSPECIFIED"
	strategySurge       = "SURGE"
	strategyBlueGreen   = "BLUE_GREEN"
)

// maxWaitForDrain bounds AutoscaledRolloutPolicy.waitForDrainDuration
// (container-api.json: "The value can be set between 0 and 7 days,
// inclusive").
const maxWaitForDrain = 7 * 24 * time.Hour

// durationRE is a google.protobuf.Duration in the proto3 JSON mapping
// (https://protobuf.dev/programming-guides/json/: seconds with up to nine
// fractional digits and the suffix "s", such as "3s" or "1.5s").
var durationRE = regexp.MustCompile(`^-?\d+(\.\d{1,9})?s$`)

// defaultUpgrade are the upgrade settings GKE gives a node pool created
// without: surge upgrades, maxSurge 1, maxUnavailable 0
// (node-pool-upgrade-strategies: "Surge upgrades are the default upgrade
// strategy"; NodePoolUpdateStrategy: "GKE internally defaults the update
// strategy to SURGE for unspecified strategies").
func defaultUpgrade() *container.UpgradeSettings {
	return &container.UpgradeSettings{MaxSurge: 1, Strategy: strategySurge}
}

// upgradeOf returns the upgrade settings a request gives, as the pool
// keeps them (an unspecified strategy is SURGE), or GKE's defaults for
// none; field is the settings' JSON path.
func upgradeOf(field string, u *container.UpgradeSettings) (*container.UpgradeSettings, *sim.Reply) {
	if u == nil {
		return defaultUpgrade(), nil
	}
	if rep := checkUpgrade(field, u); rep != nil {
		return nil, rep
	}
	out := sim.CloneJSON(u)
	if out.Strategy == "" || out.Strategy == strategyUnspecified {
		out.Strategy = strategySurge
	}
	return out, nil
}

// checkUpgrade checks an UpgradeSettings:
//   - maxSurge and maxUnavailable are node counts (int32, container-api.json),
//     neither negative, and a surge upgrade needs one of them above 0
//     ("(maxUnavailable + maxSurge) determines the level of parallelism";
//     GKE's rule as hashicorp/terraform-provider-google documents
//     upgrade_settings: "max_surge and max_unavailable must not be
//     negative and at least one of them must be greater than zero");
//   - blueGreenSettings: see checkBlueGreen.
func checkUpgrade(field string, u *container.UpgradeSettings) *sim.Reply {
	switch {
	case u.MaxSurge < 0:
		return invalid(field+".maxSurge", "max_surge must not be negative, got %d.", u.MaxSurge)
	case u.MaxUnavailable < 0:
		return invalid(field+".maxUnavailable", "max_unavailable must not be negative, got %d.", u.MaxUnavailable)
	}
	surge := u.Strategy == "" || u.Strategy == strategyUnspecified || u.Strategy == strategySurge
	if surge && u.MaxSurge == 0 && u.MaxUnavailable == 0 {
		return invalid(field, "max_surge and max_unavailable must not both be 0: a surge upgrade would upgrade no node at a time.")
	}
	return checkBlueGreen(field+".blueGreenSettings", u.BlueGreenSettings)
}

// checkBlueGreen checks a BlueGreenSettings (cluster_service.proto and
// container-api.json): one rollout policy (oneof rollout_policy), one
// batch size (oneof update_batch_size), batchPercentage in (0.0, 1.0],
// waitForDrainDuration 0 to 7 days, durations as the JSON mapping writes
// them.
func checkBlueGreen(field string, b *container.BlueGreenSettings) *sim.Reply {
	if b == nil {
		return nil
	}
	if b.StandardRolloutPolicy != nil && b.AutoscaledRolloutPolicy != nil {
		return invalid(field, "Only one of standard_rollout_policy and autoscaled_rollout_policy may be set (oneof rollout_policy).")
	}
	if rep := checkDuration(field+".nodePoolSoakDuration", b.NodePoolSoakDuration, 0); rep != nil {
		return rep
	}
	if p := b.StandardRolloutPolicy; p != nil {
		sf := field + ".standardRolloutPolicy"
		switch {
		case p.BatchPercentage != 0 && p.BatchNodeCount != 0:
			return invalid(sf, "Only one of batch_percentage and batch_node_count may be set (oneof update_batch_size).")
		case p.BatchPercentage < 0 || p.BatchPercentage > 1:
			return invalid(sf+".batchPercentage", "batch_percentage must be in (0.0, 1.0], got %v.", p.BatchPercentage)
		case p.BatchNodeCount < 0:
			return invalid(sf+".batchNodeCount", "batch_node_count must not be negative, got %d.", p.BatchNodeCount)
		}
		if rep := checkDuration(sf+".batchSoakDuration", p.BatchSoakDuration, 0); rep != nil {
			return rep
		}
	}
	if p := b.AutoscaledRolloutPolicy; p != nil {
		return checkDuration(field+".autoscaledRolloutPolicy.waitForDrainDuration", p.WaitForDrainDuration, maxWaitForDrain)
	}
	return nil
}

// checkDuration checks a google-duration field: the JSON mapping's form,
// not negative, at most most when most is not 0.
func checkDuration(field, v string, most time.Duration) *sim.Reply {
	if v == "" {
		return nil
	}
	if !durationRE.MatchString(v) {
		return invalid(field, "Invalid value at '%s' (type.googleapis.com/google.protobuf.Duration), %q: give seconds such as \"3600s\".", field, v)
	}
	secs, _ := strconv.ParseFloat(strings.TrimSuffix(v, "s"), 64)
	switch {
	case secs < 0:
		return invalid(field, "%s must not be negative, got %s.", field, v)
	case most > 0 && secs > most.Seconds():
		return invalid(field, "%s must be between 0 and %s, got %s.", field, most, v)
	}
	return nil
}

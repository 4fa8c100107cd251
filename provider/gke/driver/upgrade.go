package driver

import (
	"strconv"

	container "google.golang.org/api/container/v1"

	"github.com/kpool/kpool/provider"
)

// A pool's update strategy as GKE's upgrade settings take it
// (NodePool.upgradeSettings; nodePools.update's upgradeSettings): always
// SURGE, with maxSurge and maxUnavailable as node counts. The rest of
// provider.Upgrade has no place there and kpool carries it out itself:
//
//   - Soak: BLUE_GREEN's soaks (standardRolloutPolicy.batchSoakDuration,
//     nodePoolSoakDuration) come with a whole green pool, a surge of every
//     node whatever maxSurge says, so they do not map faithfully; GKE's
//     surge upgrades do not soak, kpool's own replacements do.
//   - DrainTimeout, Force: surge upgrades have no drain timeout in
//     upgradeSettings (NodePool.nodeDrainConfig.pdbTimeoutDuration, after
//     which GKE evicts past the budgets, would fit onStuck: Force only; not
//     sent).
//
// A percentage is refused at submit (gke.Profile): GKE's fields are int32
// node counts, and a count worked out from the pool's size would go stale
// as the pool scales and never read back as the spec says it.

// Update strategies (NodePoolUpdateStrategy).
const (
	strategySurge     = "SURGE"
	strategyBlueGreen = "BLUE_GREEN"
)

// GKE's defaults for a node pool created without upgrade settings
// (node-pool-upgrade-strategies: maxSurge 1, maxUnavailable 0).
const (
	defaultSurge       = 1
	defaultUnavailable = 0
)

// surgeSet reports whether a spec sets maxSurge or maxUnavailable, the
// only settings the driver sends.
func surgeSet(u *provider.Upgrade) bool {
	return u != nil && (u.MaxSurge != "" || u.MaxUnavailable != "")
}

// upgradeSettings are the upgrade settings a spec asks for: what it sets,
// on top of the pool's (have; nil: GKE's defaults), since GKE takes the
// message whole. Nil when the spec sets neither maxSurge nor
// maxUnavailable.
func upgradeSettings(u, have *provider.Upgrade) (*container.UpgradeSettings, error) {
	if !surgeSet(u) {
		return nil, nil
	}
	surge, unavailable := int64(defaultSurge), int64(defaultUnavailable)
	if have != nil {
		surge, unavailable = count(have.MaxSurge, surge), count(have.MaxUnavailable, unavailable)
	}
	var err error
	if u.MaxSurge != "" {
		if surge, err = nodes("maxSurge", u.MaxSurge); err != nil {
			return nil, err
		}
	}
	if u.MaxUnavailable != "" {
		if unavailable, err = nodes("maxUnavailable", u.MaxUnavailable); err != nil {
			return nil, err
		}
	}
	return &container.UpgradeSettings{Strategy: strategySurge, MaxSurge: surge, MaxUnavailable: unavailable,
		ForceSendFields: []string{"MaxSurge", "MaxUnavailable"}}, nil
}

// nodes reads a node count of the spec; a percentage (which the profile
// refuses at submit) is refused here too, naming the field.
func nodes(field, v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 0 {
		return 0, provider.ValidationError(platform, "spec.updateStrategy."+field,
			"GKE takes %s as a number of nodes (NodePool.UpgradeSettings, int32), not %q", field, v)
	}
	return n, nil
}

// count is a reported count, or def when there is none.
func count(v string, def int64) int64 {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n
	}
	return def
}

// upgradeDiffers reports whether the pool's upgrade settings are not what
// the spec sets: another maxSurge or maxUnavailable, or another strategy
// than SURGE.
func upgradeDiffers(p *provider.Pool, s provider.PoolSpec) bool {
	u := s.Upgrade
	if !surgeSet(u) {
		return false
	}
	if p.Upgrade == nil || p.Extra["upgradeStrategy"] != strategySurge {
		return true
	}
	return u.MaxSurge != "" && u.MaxSurge != p.Upgrade.MaxSurge || u.MaxUnavailable != "" && u.MaxUnavailable != p.Upgrade.MaxUnavailable
}

// observeUpgrade reads a pool's upgrade settings back: SURGE's counts, so
// that a change behind kpool's back is seen (provider.Compare). A
// BLUE_GREEN pool reports a surge of 100%: it makes a green node for every
// node (node-pool-upgrade-strategies, blue-green upgrades), whatever its
// maxSurge says, and its maxUnavailable does not apply (its batches do).
func observeUpgrade(p *provider.Pool, u *container.UpgradeSettings) {
	if u == nil {
		return
	}
	strategy := u.Strategy
	if strategy == "" || strategy == "NODE_POOL_UPDATE_STRATEGY_UNSPECIFIED" {
		strategy = strategySurge // GKE's default (NodePoolUpdateStrategy)
	}
	p.Extra["upgradeStrategy"] = strategy
	switch strategy {
	case strategySurge:
		p.Upgrade = &provider.Upgrade{MaxSurge: strconv.FormatInt(u.MaxSurge, 10), MaxUnavailable: strconv.FormatInt(u.MaxUnavailable, 10)}
	case strategyBlueGreen:
		p.Upgrade = &provider.Upgrade{MaxSurge: "100%"}
	default:
		// SHORT_LIVED (flex-start pools): no surge to speak of.
		p.Upgrade = &provider.Upgrade{}
	}
}

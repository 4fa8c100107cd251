package driver

import (
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/kpool/kpool/provider"
)

// defaultUnavailable is EKS's maxUnavailable when a node group is given
// none: one node (managed-node-update-behavior.html), the least it takes.
const defaultUnavailable = 1

// updateConfigOf is the node group's updateConfig the spec's strategy
// asks for: maxUnavailable as a number of nodes or
// maxUnavailablePercentage (NodegroupUpdateConfig). nil when the strategy
// sets none, or sets 0, which EKS does not take (the profile's
// validateUpgrade): a create sends nothing, and the node group has
// EKS's default.
func updateConfigOf(u *provider.Upgrade) *types.NodegroupUpdateConfig {
	if u == nil {
		return nil
	}
	num, pct := strings.CutSuffix(u.MaxUnavailable, "%")
	n, err := strconv.Atoi(num)
	switch {
	case err != nil || n <= 0:
		return nil
	case pct:
		return &types.NodegroupUpdateConfig{MaxUnavailablePercentage: aws.Int32(int32(n))}
	}
	return &types.NodegroupUpdateConfig{MaxUnavailable: aws.Int32(int32(n))}
}

// wantedUpdateConfig is what an update makes a node group's updateConfig:
// updateConfigOf, or, for a strategy of maxUnavailable 0, EKS's default
// (a node group set to more behind kpool's back is put back to it).
func wantedUpdateConfig(u *provider.Upgrade) *types.NodegroupUpdateConfig {
	if uc := updateConfigOf(u); uc != nil || u == nil || u.MaxUnavailable == "" {
		return uc
	}
	return &types.NodegroupUpdateConfig{MaxUnavailable: aws.Int32(defaultUnavailable)}
}

// sameUpdateConfig reports whether a node group's updateConfig (nil:
// EKS's default) already is want.
func sameUpdateConfig(have, want *types.NodegroupUpdateConfig) bool {
	if have == nil {
		have = &types.NodegroupUpdateConfig{MaxUnavailable: aws.Int32(defaultUnavailable)}
	}
	same := func(a, b *int32) bool { return (a == nil) == (b == nil) && aws.ToInt32(a) == aws.ToInt32(b) }
	return same(have.MaxUnavailable, want.MaxUnavailable) && same(have.MaxUnavailablePercentage, want.MaxUnavailablePercentage)
}

// observedUpgrade reads a node group's updateConfig back as the
// strategy's maxUnavailable ("3", "25%"). EKS's default of one node reads
// as not reported: it is what a strategy of 0 (which EKS does not take)
// and of 1 both lead to, so neither is drift; a node group set to one
// node behind kpool's back is not seen.
func observedUpgrade(uc *types.NodegroupUpdateConfig) *provider.Upgrade {
	switch {
	case uc == nil:
		return nil
	case uc.MaxUnavailablePercentage != nil:
		return &provider.Upgrade{MaxUnavailable: strconv.Itoa(int(*uc.MaxUnavailablePercentage)) + "%"}
	case uc.MaxUnavailable != nil && *uc.MaxUnavailable != defaultUnavailable:
		return &provider.Upgrade{MaxUnavailable: strconv.Itoa(int(*uc.MaxUnavailable))}
	}
	return nil
}

// force is UpdateNodegroupVersion's force flag: the strategy's onStuck
// Force ("Force the update if any Pod on the existing node group can't be
// drained due to a Pod disruption budget issue", UpdateNodegroupVersion).
func force(s provider.PoolSpec) bool { return s.Upgrade != nil && s.Upgrade.Force }

package aks

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/sim"
)

// Limits are the quotas of the emulator's subscriptions and AKS's limits
// of a cluster (learn.microsoft.com/azure/aks/quotas-skus-regions).
type Limits struct {
	// Pools is the number of agent pools a cluster may have; 0 is AKS's
	// 100 ("Maximum node pools per cluster").
	Pools int
	// FamilyVCPUs is a subscription's vCPU quota for each VM family in
	// each region (Compute's "standardDSv5Family" quota); 0 is no quota.
	// The nodes of every running pool of the family in the region count.
	FamilyVCPUs int
}

// defaultPools is AKS's limit of agent pools per cluster.
const defaultPools = 100

// vmSizeRE reads the base of an Azure VM size, Standard_<base>[_v<n>]:
// family letters, vCPUs (constrained vCPUs after a dash), features, as
// in D4as or E8-4ds.
var vmSizeRE = regexp.MustCompile(`(?i)^([a-z]+)(\d+)(?:-\d+)?([a-z]*)$`)

// vmFamily returns a VM size's quota family (standardDASv5Family for
// Standard_D4as_v5) and its vCPUs; ok is false for a size it cannot read,
// which no quota counts.
func vmFamily(size string) (family string, vcpus int, ok bool) {
	name, ok := cutPrefixFold(size, "Standard_")
	parts := strings.Split(name, "_")
	m := vmSizeRE.FindStringSubmatch(parts[0])
	if !ok || m == nil {
		return "", 0, false
	}
	version := ""
	if last := parts[len(parts)-1]; len(parts) > 1 && strings.HasPrefix(strings.ToLower(last), "v") {
		version = strings.ToLower(last)
	}
	n, err := strconv.Atoi(m[2])
	if err != nil {
		return "", 0, false
	}
	return "standard" + strings.ToUpper(m[1]+m[3]) + version + "Family", n, true
}

// quota answers what AKS answers to a write that would go over a limit:
// a new agent pool beyond the cluster's limit, or nodes beyond the
// subscription's vCPU quota of their VM family in the region
// (ErrCode_InsufficientVCPUQuota, as AKS words it). surge is the nodes an
// upgrade adds while it replaces the others, which "would also consume
// vcpu quota". A write that does not raise the usage passes even when it
// is over.
func (s *Server) quota(c *cluster, existing *pool, next *props, surge int) *sim.Reply {
	if limit := cmpOr(s.limits.Pools, defaultPools); existing == nil && len(c.pools) >= limit {
		return errorReply(http.StatusBadRequest, "OperationNotAllowed",
			"Managed cluster '%s' already has the maximum of %d agent pools: the agent pool count quota is reached. See https://aka.ms/aks-quotas-skus-regions.", c.name, limit)
	}
	family, vcpus, ok := vmFamily(ptr.Deref(next.VMSize, ""))
	if s.limits.FamilyVCPUs <= 0 || !ok {
		return nil
	}
	used := 0 // by the family in the region, but for this pool
	for _, other := range s.clusters {
		if !strings.EqualFold(other.subscription, c.subscription) || other.location != c.location {
			continue
		}
		for _, p := range other.pools {
			if f, n, ok := vmFamily(ptr.Deref(p.props.VMSize, "")); ok && f == family && p != existing {
				used += n * nodesOf(p.props)
			}
		}
	}
	had := 0
	if existing != nil {
		had = vcpus * nodesOf(existing.props)
	}
	want := vcpus * (nodesOf(next) + surge)
	if want <= had || used+want <= s.limits.FamilyVCPUs {
		return nil
	}
	return errorReply(http.StatusBadRequest, "ErrCode_InsufficientVCPUQuota",
		"Insufficient vcpu quota requested %d, remaining %d for family %s for region %s. Surge nodes would also consume vcpu quota. See https://aka.ms/aks/insufficientcpuquota.",
		want-had, max(s.limits.FamilyVCPUs-used-had, 0), family, c.location)
}

// surgeNodes is how many nodes an upgrade of a pool of count nodes adds
// at a time: upgradeSettings.maxSurge, a number or a percentage of the
// count rounded up; 1 when unset
// (learn.microsoft.com/azure/aks/upgrade-aks-node-pools-rolling).
func surgeNodes(p *props) int {
	v := ""
	if p.UpgradeSettings != nil {
		v = strings.TrimSpace(ptr.Deref(p.UpgradeSettings.MaxSurge, ""))
	}
	count := nodesOf(p)
	if pct, ok := strings.CutSuffix(v, "%"); ok {
		if n, err := strconv.Atoi(pct); err == nil && n > 0 {
			return (count*n + 99) / 100
		}
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return n
	}
	return 1
}

// cmpOr is v, or def when v is not above 0.
func cmpOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// cutPrefixFold is strings.CutPrefix without case.
func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return s, false
	}
	return s[len(prefix):], true
}

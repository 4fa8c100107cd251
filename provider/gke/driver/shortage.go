package driver

import (
	"regexp"
	"slices"
	"strings"

	container "google.golang.org/api/container/v1"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// stockCode is a stockout code in GKE's words for instances a zone had
// no capacity for: the pool's statusMessage ("Current errors:
// [ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS]: Instance '…' creation
// failed", hashicorp/terraform-provider-google#3304) or its operation's
// error ("[GCE_STOCKOUT]", akka/akka-core#32992), the codes GKE's
// troubleshooting page lists
// (https://cloud.google.com/kubernetes-engine/docs/troubleshooting/node-pools).
var stockCode = regexp.MustCompile(`\b(ZONE_RESOURCE_POOL_EXHAUSTED(?:_WITH_DETAILS)?|GCE_STOCKOUT|STOCKOUT)\b`)

// stockZone is the zone Compute Engine names as short: "The zone
// 'projects/P/zones/Z' does not have enough resources available to
// fulfill the request" (https://cloud.google.com/compute/docs/troubleshooting/troubleshooting-resource-availability).
var stockZone = regexp.MustCompile(`zone '(?:projects/[^/']+/)?zones/([a-z0-9-]+)' does not have enough resources`)

// noResources is Compute Engine's stockout message, which GKE may pass on
// without a code.
const noResources = "does not have enough resources available"

// stockoutCode is the stockout code msg carries ("" for none):
// the first bracketed or bare code, else ZONE_RESOURCE_POOL_EXHAUSTED for
// Compute Engine's words alone.
func stockoutCode(msg string) string {
	if m := stockCode.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	if strings.Contains(msg, noResources) {
		return "ZONE_RESOURCE_POOL_EXHAUSTED"
	}
	return ""
}

// shortage is a failed pool's shortage as its statusMessage (or its last
// operation's error) and conditions say it: the stockout code, the
// message's first line and the logical zones it names (nil when it names
// none). Nil when they speak of no stockout.
func shortage(c *kpool.Cluster, msg string, conds []*container.StatusCondition) *provider.Shortage {
	code := stockoutCode(msg)
	for _, cond := range conds {
		if code == "" && cond != nil && cond.Code == "GCE_STOCKOUT" {
			code = cond.Code
			if msg == "" {
				msg = cond.Message
			}
		}
	}
	if code == "" {
		return nil
	}
	s := &provider.Shortage{Code: code, Message: provider.FirstLine(msg)}
	for _, m := range stockZone.FindAllStringSubmatch(msg, -1) {
		if z := logical(c, m[1]); !slices.Contains(s.Zones, z) {
			s.Zones = append(s.Zones, z)
		}
	}
	slices.Sort(s.Zones)
	return s
}

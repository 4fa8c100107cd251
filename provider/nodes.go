package provider

import (
	"strings"

	"github.com/kpool/kpool"
)

// LabelTopologyZone is the well-known label every cloud sets on its nodes to
// their zone, in the cloud's own spelling.
const LabelTopologyZone = "topology.kubernetes.io/zone"

// NodeZone returns the value of LabelTopologyZone on cluster c's nodes in a
// logical zone: AKS "<location>-1", EKS "us-west-2a", GKE "us-central1-a",
// OKE the shortened availability domain name such as "UK-LONDON-1-AD-1".
func NodeZone(c *kpool.Cluster, logical string) (string, error) {
	z, err := ProviderZone(c, logical)
	if err != nil {
		return "", err
	}
	switch c.Spec.Platform.Type {
	case kpool.PlatformAzure:
		return strings.ToLower(c.Spec.Region()) + "-" + z, nil
	case kpool.PlatformOCI:
		return shortAD(z, c.Spec.Region()), nil
	}
	return z, nil
}

// shortAD is the shortened availability domain name that OKE puts on nodes:
// the full name without its tenancy prefix ("Uocm:PHX-AD-1" is "PHX-AD-1"),
// or, for a bare "AD-N", the region's identifier upper-cased before it, with
// the two exceptions Oracle documents (Ashburn and Phoenix).
func shortAD(ad, region string) string {
	if _, after, ok := strings.Cut(ad, ":"); ok {
		return after
	}
	if !strings.HasPrefix(strings.ToUpper(ad), "AD-") {
		return ad
	}
	prefix := strings.ToUpper(region)
	switch region {
	case "us-ashburn-1":
		prefix = "US-ASHBURN"
	case "us-phoenix-1":
		prefix = "PHX"
	}
	return prefix + "-" + strings.ToUpper(ad)
}

// Taints providers put on nodes of their own accord.
var (
	// AKS taints spot nodes (and labels them with the same pair).
	aksSpotTaint = kpool.Taint{Key: "kubernetes.azure.com/scalesetpriority", Value: "spot", Effect: kpool.EffectNoSchedule}
	// GKE taints nodes with GPUs in clusters that have nodes without.
	gkeGPUTaint = kpool.Taint{Key: "nvidia.com/gpu", Value: "present", Effect: kpool.EffectNoSchedule}
)

// NodeTaints returns the taints on a pool's nodes: the spec's (d.Taints)
// and those the provider adds itself, which pods must tolerate too.
func NodeTaints(t kpool.PlatformType, d PoolSpec) []kpool.Taint {
	out := append([]kpool.Taint(nil), d.Taints...)
	add := func(x kpool.Taint) {
		for _, t := range out {
			if t == x {
				return
			}
		}
		out = append(out, x)
	}
	switch {
	case t == kpool.PlatformAzure && d.Spot:
		add(aksSpotTaint)
	case t == kpool.PlatformGCP && len(d.Accelerators) > 0:
		add(gkeGPUTaint)
	}
	return out
}

package driver

import (
	"fmt"
	"slices"
	"strings"

	container "google.golang.org/api/container/v1"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// Steps of an update, in the order the driver takes them: one GKE
// operation per NodePoolUpdate call, since GKE refuses a second operation
// on a pool while one runs (FAILED_PRECONDITION); the controllers call
// again once the pool is idle, and the next step goes.
const (
	stepUpdate      = "update"
	stepAutoscaling = "setAutoscaling"
	stepSize        = "setSize"
	stepManagement  = "setManagement"
)

// perZone converts kpool's pool-wide node count into GKE's per-zone one:
// a count that does not divide evenly over the zones is refused.
func perZone(count int, zones []string) (int64, error) {
	n := len(zones)
	if n == 0 {
		n = 1
	}
	if count%n != 0 {
		return 0, provider.ValidationError(platform, "spec.nodeCount",
			"GKE keeps the same number of nodes in each zone of a node pool: %d nodes do not divide evenly over %d zones (%s); give a multiple of %d",
			count, n, strings.Join(zones, ", "), n)
	}
	return int64(count / n), nil
}

// nodePool maps a neutral spec to the node pool a create sends.
func nodePool(s provider.PoolSpec, zones []string) (*container.NodePool, error) {
	var per int64
	if s.Autoscaling {
		// The autoscaler's bounds are total ones; its first count is
		// rounded up per zone and then the autoscaler's.
		n := max(len(zones), 1)
		per = int64((s.Count + n - 1) / n)
	} else {
		var err error
		if per, err = perZone(s.Count, zones); err != nil {
			return nil, err
		}
	}
	np := &container.NodePool{
		Name: s.ProviderName, InitialNodeCount: per, Locations: zones, Version: s.Version,
		Config: &container.NodeConfig{
			MachineType: s.MachineType, DiskSizeGb: int64(s.DiskSizeGB), DiskType: s.DiskType, Spot: s.Spot,
			Labels: maps(s.Labels), Taints: taints(s.Taints), ResourceLabels: resourceLabels(s),
		},
		// A pinned version is kpool's to change: GKE must not upgrade it.
		Management:  &container.NodeManagement{AutoRepair: true, AutoUpgrade: s.Version == ""},
		Autoscaling: autoscaling(s),
	}
	for _, a := range s.Accelerators {
		np.Config.Accelerators = append(np.Config.Accelerators, &container.AcceleratorConfig{AcceleratorType: a.Type, AcceleratorCount: int64(a.Count)})
	}
	// The spec's surge, on top of GKE's defaults (none: GKE's own).
	var err error
	if np.UpgradeSettings, err = upgradeSettings(s.Upgrade, nil); err != nil {
		return nil, err
	}
	return np, nil
}

// autoscaling is a spec's autoscaler: kpool's bounds are the pool's, so
// GKE's total bounds (which need no even split); nil when off.
func autoscaling(s provider.PoolSpec) *container.NodePoolAutoscaling {
	if !s.Autoscaling {
		return nil
	}
	return &container.NodePoolAutoscaling{Enabled: true, TotalMinNodeCount: int64(s.MinCount), TotalMaxNodeCount: int64(s.MaxCount),
		LocationPolicy: "BALANCED", ForceSendFields: []string{"TotalMinNodeCount"}}
}

func maps(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// effects are kpool's taint effects as GKE names them.
var effects = map[string]string{kpool.EffectNoSchedule: "NO_SCHEDULE", kpool.EffectPreferNoSchedule: "PREFER_NO_SCHEDULE", kpool.EffectNoExecute: "NO_EXECUTE"}

func taints(ts []kpool.Taint) []*container.NodeTaint {
	out := []*container.NodeTaint{}
	for _, t := range ts {
		e, ok := effects[t.Effect]
		if !ok {
			e = t.Effect
		}
		out = append(out, &container.NodeTaint{Key: t.Key, Value: t.Value, Effect: e})
	}
	return out
}

// resourceLabels are a node pool's resource labels (NodeConfig's
// resourceLabels, which GKE puts on the pool's Compute Engine resources):
// the user's tags and the owner's mark. Google Cloud labels are at most 64,
// keys of 1-63 lowercase letters, digits, '_' or '-' starting with a
// letter, values of at most 63 of them
// (https://cloud.google.com/compute/docs/labeling-resources#requirements).
func resourceLabels(s provider.PoolSpec) map[string]string {
	return provider.TagKeys.Put(s.Tags, s.Owner)
}

// adopt answers a create for a node pool that exists (provider.Adopt),
// comparing its management too, which no neutral field carries: GKE
// upgrades a pool whose version is not pinned, and only that one.
func adopt(p *provider.Pool, s provider.PoolSpec) (*provider.Pool, error) {
	var also []provider.Difference
	if want := fmt.Sprint(s.Version == ""); p.Extra["autoUpgrade"] != want {
		also = append(also, provider.Difference{Field: provider.FieldVersion, Want: "autoUpgrade " + want, Got: "autoUpgrade " + p.Extra["autoUpgrade"],
			Path: "spec.kubernetesVersion"})
	}
	return provider.Adopt(profile, s, p, also...)
}

// changes lists the steps that bring a pool to a spec.
func changes(p *provider.Pool, s provider.PoolSpec) []string {
	var out []string
	if s.MachineType != "" && p.MachineType != s.MachineType ||
		s.DiskSizeGB != 0 && p.DiskSizeGB != s.DiskSizeGB || s.DiskType != "" && p.DiskType != s.DiskType ||
		s.Version != "" && !versionMatches(p.Version, s.Version) ||
		len(s.Zones) > 0 && !slices.Equal(p.Zones, s.Zones) ||
		!provider.SameLabels(p.Labels, s.Labels) || !provider.SameTaints(p.Taints, profile.NodeTaints(s)) || !provider.SameMap(p.Tags, s.Tags) ||
		p.Owner != s.Owner || upgradeDiffers(p, s) {
		out = append(out, stepUpdate)
	}
	if p.Autoscaling != s.Autoscaling || s.Autoscaling && (p.MinCount != s.MinCount || p.MaxCount != s.MaxCount) {
		out = append(out, stepAutoscaling)
	}
	if !s.Autoscaling && p.Count != s.Count {
		out = append(out, stepSize)
	}
	if auto := s.Version == ""; p.Extra["autoUpgrade"] != fmt.Sprint(auto) {
		out = append(out, stepManagement)
	}
	return out
}

// versionMatches reports whether a pool's version (1.30.5, the -gke.N
// build cut) is the one asked for (1.30, 1.30.5).
func versionMatches(got, want string) bool {
	return got == want || strings.HasPrefix(got, want+".")
}

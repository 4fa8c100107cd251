package driver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/aks"
)

// adopt answers a create for a pool that exists: refused when another
// owner marked it (KindForeign), returned as it is when it matches, a
// validation error when a field only a new pool can change differs,
// ErrAlreadyExists when an update would do.
func adopt(ap *armcontainerservice.AgentPool, s provider.PoolSpec) (*provider.Pool, error) {
	p := observe(ap)
	if provider.Foreign(&p, s.Owner) {
		return nil, provider.ForeignError(platform, p.ProviderName, p.Owner)
	}
	if err := immutable(ap, s); err != nil {
		return nil, err
	}
	want := properties(s)
	got := ap.Properties
	if got == nil {
		got = &armcontainerservice.ManagedClusterAgentPoolProfileProperties{}
	}
	switch {
	case deref(got.EnableAutoScaling) != deref(want.EnableAutoScaling),
		deref(got.MinCount) != deref(want.MinCount) || deref(got.MaxCount) != deref(want.MaxCount),
		!deref(want.EnableAutoScaling) && deref(got.Count) != deref(want.Count),
		!provider.SameLabels(p.Labels, s.Labels, aks.SpotTaint.Key), !provider.SameTaints(p.Taints, profile.NodeTaints(s)),
		!provider.SameMap(p.Tags, s.Tags), p.Mode != s.Mode,
		s.Version != "" && p.Version != s.Version:
		return nil, &provider.Error{Kind: provider.KindAlreadyExists, Provider: platform,
			Reason: "agent pool " + s.ProviderName + " exists with other mutable settings; update it"}
	}
	return &p, nil
}

// immutable refuses a spec that differs from an existing pool in a field
// AKS fixes at creation.
func immutable(ap *armcontainerservice.AgentPool, s provider.PoolSpec) error {
	got := ap.Properties
	if got == nil {
		return nil
	}
	want := properties(s)
	type check struct {
		field     string
		old, next string
	}
	checks := []check{
		{"spec.platform.azure.vmSize", deref(got.VMSize), deref(want.VMSize)},
		{"spec.zones", strings.Join(zonesOf(got.AvailabilityZones), ","), strings.Join(zonesOf(want.AvailabilityZones), ",")},
		{"spec.platform.azure.spotInstances", string(derefP(got.ScaleSetPriority, armcontainerservice.ScaleSetPriorityRegular)), string(derefP(want.ScaleSetPriority, armcontainerservice.ScaleSetPriorityRegular))},
	}
	if want.OSDiskSizeGB != nil {
		checks = append(checks, check{"spec.platform.azure.osDiskSizeGB", fmt.Sprint(deref(got.OSDiskSizeGB)), fmt.Sprint(deref(want.OSDiskSizeGB))})
	}
	if want.OSDiskType != nil {
		checks = append(checks, check{"spec.platform.azure.osDiskType", string(derefP(got.OSDiskType, armcontainerservice.OSDiskTypeManaged)), string(*want.OSDiskType)})
	}
	for _, ch := range checks {
		if !strings.EqualFold(ch.old, ch.next) {
			return provider.ValidationError(platform, ch.field, "agent pool %s has %q and AKS cannot change it to %q in place; create a new pool", deref(ap.Name), ch.old, ch.next)
		}
	}
	return nil
}

// properties maps a neutral spec, and its owner's mark, to AKS agent-pool
// properties.
func properties(s provider.PoolSpec) *armcontainerservice.ManagedClusterAgentPoolProfileProperties {
	p := &armcontainerservice.ManagedClusterAgentPoolProfileProperties{
		Type:       to(armcontainerservice.AgentPoolTypeVirtualMachineScaleSets),
		OSType:     to(armcontainerservice.OSTypeLinux),
		VMSize:     to(s.MachineType),
		Count:      to(int32(s.Count)),
		Mode:       to(armcontainerservice.AgentPoolModeUser),
		NodeLabels: map[string]*string{},
		NodeTaints: []*string{},
		Tags:       map[string]*string{},
	}
	if s.Mode == kpool.ModeSystem {
		p.Mode = to(armcontainerservice.AgentPoolModeSystem)
	}
	p.EnableAutoScaling = to(s.Autoscaling)
	if s.Autoscaling {
		p.MinCount, p.MaxCount = to(int32(s.MinCount)), to(int32(s.MaxCount))
	}
	if s.DiskSizeGB > 0 {
		p.OSDiskSizeGB = to(int32(s.DiskSizeGB))
	}
	if s.DiskType != "" {
		p.OSDiskType = to(armcontainerservice.OSDiskType(profile.DiskType(s.DiskType)))
	}
	for _, z := range s.Zones {
		p.AvailabilityZones = append(p.AvailabilityZones, to(z))
	}
	for k, v := range s.Labels {
		p.NodeLabels[k] = to(v)
	}
	for _, t := range profile.NodeTaints(s) {
		p.NodeTaints = append(p.NodeTaints, to(taintString(t)))
	}
	// The owner's mark is two of the agent pool's tags ("the tags to be
	// persisted on the agent pool virtual machine scale set": AKS REST API,
	// Agent Pools - Create Or Update, properties.tags), which ARM allows 50
	// of, names of 1-512 characters without < > % & \ ? /, values of at
	// most 256 (https://learn.microsoft.com/azure/azure-resource-manager/management/tag-resources#limitations).
	for k, v := range provider.TagKeys.Put(s.Tags, s.Owner) {
		p.Tags[k] = to(v)
	}
	if s.Spot {
		p.ScaleSetPriority = to(armcontainerservice.ScaleSetPrioritySpot)
		p.ScaleSetEvictionPolicy = to(armcontainerservice.ScaleSetEvictionPolicyDelete)
		p.SpotMaxPrice = to(float32(-1)) // pay up to the on-demand price
		p.NodeLabels[aks.SpotTaint.Key] = to(aks.SpotTaint.Value)
	}
	if s.Version != "" {
		p.OrchestratorVersion = to(s.Version)
	}
	return p
}

func taintString(t kpool.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + t.Effect
	}
	return t.Key + "=" + t.Value + ":" + t.Effect
}

func parseTaint(s string) (kpool.Taint, bool) {
	kv, effect, ok := strings.Cut(s, ":")
	if !ok {
		return kpool.Taint{}, false
	}
	k, v, _ := strings.Cut(kv, "=")
	return kpool.Taint{Key: k, Value: v, Effect: effect}, true
}

func zonesOf(zs []*string) []string {
	var out []string
	for _, z := range zs {
		if z != nil {
			out = append(out, *z)
		}
	}
	sort.Strings(out)
	return out
}

func to[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func derefP[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// accepted returns the pool as the accepted PUT's answer shows it; the
// operation goes on at AKS and NodePoolList follows it.
func accepted(raw *http.Response, s provider.PoolSpec) (*provider.Pool, error) {
	var ap armcontainerservice.AgentPool
	if raw != nil {
		if body, err := runtime.Payload(raw); err == nil && len(body) > 0 && json.Unmarshal(body, &ap) == nil && ap.Properties != nil {
			p := observe(&ap)
			return &p, nil
		}
	}
	// No body to read: report what was asked for, in progress.
	p := provider.Pool{PoolSpec: s, State: provider.StateCreating, ProviderState: "Accepted", ReadyUnknown: true}
	return &p, nil
}

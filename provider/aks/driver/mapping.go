package driver

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/aks"
)

// properties maps a neutral spec, and its owner's mark, to AKS agent-pool
// properties.
func properties(s provider.PoolSpec) *armcontainerservice.ManagedClusterAgentPoolProfileProperties {
	p := &armcontainerservice.ManagedClusterAgentPoolProfileProperties{
		Type:       ptr.To(armcontainerservice.AgentPoolTypeVirtualMachineScaleSets),
		OSType:     ptr.To(armcontainerservice.OSTypeLinux),
		VMSize:     ptr.To(s.MachineType),
		Count:      ptr.To(int32(s.Count)),
		Mode:       ptr.To(armcontainerservice.AgentPoolModeUser),
		NodeLabels: map[string]*string{},
		NodeTaints: []*string{},
		Tags:       map[string]*string{},
	}
	if s.Mode == kpool.ModeSystem {
		p.Mode = ptr.To(armcontainerservice.AgentPoolModeSystem)
	}
	p.EnableAutoScaling = ptr.To(s.Autoscaling)
	if s.Autoscaling {
		p.MinCount, p.MaxCount = ptr.To(int32(s.MinCount)), ptr.To(int32(s.MaxCount))
	}
	if s.DiskSizeGB > 0 {
		p.OSDiskSizeGB = ptr.To(int32(s.DiskSizeGB))
	}
	if s.DiskType != "" {
		p.OSDiskType = ptr.To(armcontainerservice.OSDiskType(profile.DiskType(s.DiskType)))
	}
	for _, z := range s.Zones {
		p.AvailabilityZones = append(p.AvailabilityZones, ptr.To(z))
	}
	for k, v := range s.Labels {
		p.NodeLabels[k] = ptr.To(v)
	}
	for _, t := range profile.NodeTaints(s) {
		p.NodeTaints = append(p.NodeTaints, ptr.To(taintString(t)))
	}
	// The owner's mark is two of the agent pool's tags ("the tags to be
	// persisted on the agent pool virtual machine scale set": AKS REST API,
	// Agent Pools - Create Or Update, properties.tags), which ARM allows 50
	// of, names of 1-512 characters without < > % & \ ? /, values of at
	// most 256 (https://learn.microsoft.com/azure/azure-resource-manager/management/tag-resources#limitations).
	for k, v := range provider.TagKeys.Put(s.Tags, s.Owner) {
		p.Tags[k] = ptr.To(v)
	}
	if s.Spot {
		p.ScaleSetPriority = ptr.To(armcontainerservice.ScaleSetPrioritySpot)
		p.ScaleSetEvictionPolicy = ptr.To(armcontainerservice.ScaleSetEvictionPolicyDelete)
		p.SpotMaxPrice = ptr.To(float32(-1)) // pay up to the on-demand price
		p.NodeLabels[aks.SpotTaint.Key] = ptr.To(aks.SpotTaint.Value)
	}
	if s.Version != "" {
		p.OrchestratorVersion = ptr.To(s.Version)
	}
	p.UpgradeSettings = upgradeSettings(nil, s.Upgrade)
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

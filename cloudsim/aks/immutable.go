package aks

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/sim"
)

// immutableChange answers 400 PropertyChangeNotAllowed ("Changing property
// 'properties.vmSize' is not allowed.", target the property, as AKS words
// it for an agent pool's properties) for the first property
// AKS fixes at creation that a PUT on an existing pool changes. A property
// the request leaves out, or sends with the pool's value, is no change.
func immutableChange(old, in *props) *sim.Reply {
	fold := func(a, b string) bool { return strings.EqualFold(a, b) }
	str := func(in, old *string) bool { return in != nil && !fold(*in, ptr.Deref(old, "")) }
	flag := func(in, old *bool) bool { return in != nil && *in != ptr.Deref(old, false) }
	checks := []struct {
		prop    string
		changed bool
	}{
		{"vmSize", str(in.VMSize, old.VMSize)},
		{"availabilityZones", in.AvailabilityZones != nil && !sameSet(in.AvailabilityZones, old.AvailabilityZones)},
		{"osDiskSizeGB", ptr.Deref(in.OSDiskSizeGB, 0) != 0 && *in.OSDiskSizeGB != ptr.Deref(old.OSDiskSizeGB, 0)},
		{"osDiskType", in.OSDiskType != nil && !fold(string(*in.OSDiskType), string(ptr.Deref(old.OSDiskType, "")))},
		{"scaleSetPriority", in.ScaleSetPriority != nil && !fold(string(*in.ScaleSetPriority), string(orDefault(old.ScaleSetPriority, armcontainerservice.ScaleSetPriorityRegular)))},
		{"scaleSetEvictionPolicy", in.ScaleSetEvictionPolicy != nil && !fold(string(*in.ScaleSetEvictionPolicy), string(ptr.Deref(old.ScaleSetEvictionPolicy, "")))},
		{"spotMaxPrice", in.SpotMaxPrice != nil && (old.SpotMaxPrice == nil || *in.SpotMaxPrice != *old.SpotMaxPrice)},
		{"osType", in.OSType != nil && !fold(string(*in.OSType), string(orDefault(old.OSType, armcontainerservice.OSTypeLinux)))},
		{"osSKU", in.OSSKU != nil && !fold(string(*in.OSSKU), string(ptr.Deref(old.OSSKU, ""))) && !(migratable(*in.OSSKU) && migratable(ptr.Deref(old.OSSKU, "")))},
		{"maxPods", in.MaxPods != nil && *in.MaxPods != ptr.Deref(old.MaxPods, 0)},
		{"vnetSubnetID", str(in.VnetSubnetID, old.VnetSubnetID)},
		{"podSubnetID", str(in.PodSubnetID, old.PodSubnetID)},
		{"enableNodePublicIP", flag(in.EnableNodePublicIP, old.EnableNodePublicIP)},
		{"nodePublicIPPrefixID", str(in.NodePublicIPPrefixID, old.NodePublicIPPrefixID)},
		{"enableEncryptionAtHost", flag(in.EnableEncryptionAtHost, old.EnableEncryptionAtHost)},
		{"enableUltraSSD", flag(in.EnableUltraSSD, old.EnableUltraSSD)},
		{"kubeletDiskType", in.KubeletDiskType != nil && !fold(string(*in.KubeletDiskType), string(orDefault(old.KubeletDiskType, armcontainerservice.KubeletDiskTypeOS)))},
		{"kubeletConfig", in.KubeletConfig != nil && !sameJSON(in.KubeletConfig, old.KubeletConfig)},
		{"linuxOSConfig", in.LinuxOSConfig != nil && !sameJSON(in.LinuxOSConfig, old.LinuxOSConfig)},
		{"gpuInstanceProfile", in.GpuInstanceProfile != nil && !fold(string(*in.GpuInstanceProfile), string(ptr.Deref(old.GpuInstanceProfile, "")))},
		{"hostGroupID", str(in.HostGroupID, old.HostGroupID)},
		{"proximityPlacementGroupID", str(in.ProximityPlacementGroupID, old.ProximityPlacementGroupID)},
		{"capacityReservationGroupID", str(in.CapacityReservationGroupID, old.CapacityReservationGroupID)},
		{"enableFIPS", flag(in.EnableFIPS, old.EnableFIPS)},
		{"windowsProfile", in.WindowsProfile != nil && !sameJSON(in.WindowsProfile, old.WindowsProfile)},
		{"creationData", in.CreationData != nil && !sameJSON(in.CreationData, old.CreationData)},
		{"type", in.Type != nil && !fold(string(*in.Type), string(orDefault(old.Type, armcontainerservice.AgentPoolTypeVirtualMachineScaleSets)))},
	}
	for _, ch := range checks {
		if ch.changed {
			return targetedError(http.StatusBadRequest, "PropertyChangeNotAllowed", "properties."+ch.prop, "Changing property 'properties.%s' is not allowed.", ch.prop)
		}
	}
	return nil
}

// migratable reports whether a pool can move to or from the OS SKU in
// place: between Ubuntu and Azure Linux AKS migrates the nodes (a reimage
// of every node), any other change needs a new pool.
func migratable(sku armcontainerservice.OSSKU) bool {
	return strings.EqualFold(string(sku), string(armcontainerservice.OSSKUUbuntu)) ||
		strings.EqualFold(string(sku), string(armcontainerservice.OSSKUAzureLinux))
}

// sameJSON reports whether two values have the same JSON; a nil old is
// the same as an empty in ({}).
func sameJSON[T any](in, old *T) bool {
	a, _ := json.Marshal(in)
	if old == nil {
		return string(a) == "{}"
	}
	b, _ := json.Marshal(old)
	return string(a) == string(b)
}

// systemPoolsLeft answers 400 OperationNotAllowed when a PUT (next set)
// or a DELETE (next nil) of pool p would leave its cluster with no pool in
// System mode: "A cluster must have at least one System agent pool at all
// times" (the model's AgentPoolMode). AKS's message, as Rancher's AKS
// end-to-end tests (rancher/hosted-providers-e2e) record it, starts
// "There has to be at least one system agent pool".
func systemPoolsLeft(c *cluster, p *pool, next *props) *sim.Reply {
	if p == nil || ptr.Deref(p.props.Mode, "") != armcontainerservice.AgentPoolModeSystem {
		return nil
	}
	if next != nil && ptr.Deref(next.Mode, "") == armcontainerservice.AgentPoolModeSystem {
		return nil
	}
	for _, other := range c.pools {
		if other != p && ptr.Deref(other.props.Mode, "") == armcontainerservice.AgentPoolModeSystem {
			return nil
		}
	}
	what, target := "changing its mode to User", "properties.mode"
	if next == nil {
		what, target = "deleting it", ""
	}
	return targetedError(http.StatusBadRequest, "OperationNotAllowed", target,
		"There has to be at least one system agent pool. Agent pool '%s' is the last System agent pool of managed cluster '%s': %s is not allowed.",
		p.name, c.name, what)
}

package aks

import (
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/sim"
)

// What AKS puts on spot pools itself.
const (
	spotLabelKey   = "kubernetes.azure.com/scalesetpriority"
	spotLabelValue = "spot"
	spotTaint      = spotLabelKey + "=" + spotLabelValue + ":NoSchedule"
	reservedPrefix = "kubernetes.azure.com/"
)

var (
	linuxName   = regexp.MustCompile(`^[a-z][a-z0-9]{0,11}$`)
	windowsName = regexp.MustCompile(`^[a-z][a-z0-9]{0,5}$`)
	versionRE   = regexp.MustCompile(`^(\d+)\.(\d+)(?:\.(\d+))?$`)
)

// desired returns the properties a PUT leads to: for a create, the
// request with AKS's defaults; for an update, the existing pool with every
// property the request carries replaced (a property the request leaves out
// keeps its value). It answers AKS's 400s for what AKS refuses.
func (s *Server) desired(c *cluster, name string, existing *pool, req *props) (*props, *sim.Reply) {
	in := sim.CloneJSON(req)
	// Read-only properties in a request are ignored, as ARM does.
	in.ProvisioningState, in.ETag, in.CurrentOrchestratorVersion, in.NodeImageVersion = nil, nil, nil, nil
	if ptr.Deref(in.OrchestratorVersion, "") == "" {
		// An empty version is none: the cluster's on a create (Microsoft's
		// own examples send ""), the pool's own on an update.
		in.OrchestratorVersion = nil
	}
	in.PowerState = nil // a start or a stop: applyPower

	var next *props
	if existing == nil {
		re, what := linuxName, "1-12 lowercase letters and digits, starting with a letter"
		if strings.EqualFold(string(ptr.Deref(in.OSType, "")), string(armcontainerservice.OSTypeWindows)) {
			re, what = windowsName, "1-6 lowercase letters and digits, starting with a letter, for a Windows pool"
		}
		if !re.MatchString(name) {
			return nil, targetedError(http.StatusBadRequest, "InvalidParameter", "name",
				"Agent pool name '%s' is invalid: it must be %s.", name, what)
		}
		if strings.TrimSpace(ptr.Deref(in.VMSize, "")) == "" {
			return nil, invalid("vmSize", "a VM size is required to create an agent pool")
		}
		next = in
		if rep := defaults(c, next); rep != nil {
			return nil, rep
		}
	} else {
		old := existing.props
		if rep := immutableChange(old, in); rep != nil {
			return nil, rep
		}
		next = sim.CloneJSON(old)
		overlay(next, in)
		if in.EnableAutoScaling != nil && !*in.EnableAutoScaling {
			// Turning the autoscaler off drops its bounds unless they are sent.
			if in.MinCount == nil {
				next.MinCount = nil
			}
			if in.MaxCount == nil {
				next.MaxCount = nil
			}
		}
		if ptr.Deref(in.OSDiskSizeGB, 0) == 0 {
			next.OSDiskSizeGB = old.OSDiskSizeGB
		}
		if in.OrchestratorVersion != nil {
			v, rep := resolveVersion(c, *in.OrchestratorVersion)
			if rep != nil {
				return nil, rep
			}
			if cur := ptr.Deref(old.CurrentOrchestratorVersion, ""); cur != "" && compareVersions(v, cur) < 0 {
				return nil, invalid("orchestratorVersion", "downgrading an agent pool from %s to %s is not supported", cur, v)
			}
			next.CurrentOrchestratorVersion = ptr.To(v)
		}
	}
	if rep := validate(next); rep != nil {
		return nil, rep
	}
	if existing == nil {
		if rep := offered(c, name, next); rep != nil {
			return nil, rep
		}
	}
	if ptr.Deref(next.ScaleSetPriority, "") == armcontainerservice.ScaleSetPrioritySpot {
		if next.NodeLabels == nil {
			next.NodeLabels = map[string]*string{}
		}
		next.NodeLabels[spotLabelKey] = ptr.To(spotLabelValue)
		if !slices.ContainsFunc(next.NodeTaints, func(t *string) bool { return ptr.Deref(t, "") == spotTaint }) {
			next.NodeTaints = append(next.NodeTaints, ptr.To(spotTaint))
		}
	}
	return next, nil
}

// defaults fills in what AKS fills in on create.
func defaults(c *cluster, p *props) *sim.Reply {
	if p.EnableAutoScaling == nil {
		p.EnableAutoScaling = ptr.To(false)
	}
	if p.Count == nil {
		p.Count = ptr.To(int32(1))
		if *p.EnableAutoScaling && p.MinCount != nil {
			p.Count = ptr.To(*p.MinCount)
		}
	}
	if p.OSType == nil {
		p.OSType = ptr.To(armcontainerservice.OSTypeLinux)
	}
	if p.OSSKU == nil {
		p.OSSKU = ptr.To(armcontainerservice.OSSKUUbuntu)
		if *p.OSType == armcontainerservice.OSTypeWindows {
			p.OSSKU = ptr.To(armcontainerservice.OSSKUWindows2022)
		}
	}
	if ptr.Deref(p.OSDiskSizeGB, 0) == 0 {
		p.OSDiskSizeGB = ptr.To(int32(128))
	}
	if p.OSDiskType == nil {
		p.OSDiskType = ptr.To(armcontainerservice.OSDiskTypeManaged)
	}
	if p.KubeletDiskType == nil {
		p.KubeletDiskType = ptr.To(armcontainerservice.KubeletDiskTypeOS)
	}
	if p.Type == nil {
		p.Type = ptr.To(armcontainerservice.AgentPoolTypeVirtualMachineScaleSets)
	}
	if p.Mode == nil {
		p.Mode = ptr.To(armcontainerservice.AgentPoolModeUser)
	}
	if p.ScaleSetPriority == nil {
		p.ScaleSetPriority = ptr.To(armcontainerservice.ScaleSetPriorityRegular)
	}
	spot := *p.ScaleSetPriority == armcontainerservice.ScaleSetPrioritySpot
	if spot {
		if p.ScaleSetEvictionPolicy == nil {
			p.ScaleSetEvictionPolicy = ptr.To(armcontainerservice.ScaleSetEvictionPolicyDelete)
		}
		if p.SpotMaxPrice == nil {
			p.SpotMaxPrice = ptr.To(float32(-1))
		}
	}
	if p.MaxPods == nil {
		p.MaxPods = ptr.To(int32(110))
	}
	if p.EnableNodePublicIP == nil {
		p.EnableNodePublicIP = ptr.To(false)
	}
	if p.EnableFIPS == nil {
		p.EnableFIPS = ptr.To(false)
	}
	if !spot {
		// "If not specified, the default is 10%" (maxSurge), also when
		// other upgradeSettings are given.
		if p.UpgradeSettings == nil {
			p.UpgradeSettings = &armcontainerservice.AgentPoolUpgradeSettings{}
		}
		if p.UpgradeSettings.MaxSurge == nil {
			p.UpgradeSettings.MaxSurge = ptr.To("10%")
		}
	}
	v := c.version
	if p.OrchestratorVersion == nil {
		p.OrchestratorVersion = ptr.To(c.version)
	} else {
		var rep *sim.Reply
		if v, rep = resolveVersion(c, *p.OrchestratorVersion); rep != nil {
			return rep
		}
	}
	p.CurrentOrchestratorVersion = ptr.To(v)
	p.NodeImageVersion = ptr.To(nodeImage(*p.OSSKU))
	p.PowerState = &armcontainerservice.PowerState{Code: ptr.To(armcontainerservice.CodeRunning)}
	return nil
}

func nodeImage(sku armcontainerservice.OSSKU) string {
	switch sku {
	case armcontainerservice.OSSKUAzureLinux, armcontainerservice.OSSKUCBLMariner:
		return "AKSAzureLinux-V2gen2-202502.09.0"
	case armcontainerservice.OSSKUWindows2019:
		return "AKSWindows-2019-containerd-17763.6893.250210"
	case armcontainerservice.OSSKUWindows2022:
		return "AKSWindows-2022-containerd-20348.3207.250210"
	}
	return "AKSUbuntu-2204gen2containerd-202502.09.0"
}

// overlay sets every property src carries on dst.
func overlay(dst, src *props) {
	dv, sv := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem()
	for i := 0; i < sv.NumField(); i++ {
		if f := sv.Field(i); !f.IsNil() {
			dv.Field(i).Set(f)
		}
	}
}

// validate answers InvalidParameter for properties AKS refuses.
func validate(p *props) *sim.Reply {
	for _, check := range []func(*props) *sim.Reply{checkEnums, checkScaling, checkPlacement, checkMetadata, checkTags, checkUpgrade} {
		if rep := check(p); rep != nil {
			return rep
		}
	}
	return nil
}

// checkEnums checks the enumerated properties, and the OS, mode and spot
// combinations AKS refuses.
func checkEnums(p *props) *sim.Reply {
	for _, e := range []struct {
		prop  string
		value *string
		allow []string
	}{
		{"mode", (*string)(p.Mode), strs(armcontainerservice.PossibleAgentPoolModeValues())},
		{"osType", (*string)(p.OSType), strs(armcontainerservice.PossibleOSTypeValues())},
		{"osSKU", (*string)(p.OSSKU), strs(armcontainerservice.PossibleOSSKUValues())},
		{"osDiskType", (*string)(p.OSDiskType), strs(armcontainerservice.PossibleOSDiskTypeValues())},
		{"kubeletDiskType", (*string)(p.KubeletDiskType), strs(armcontainerservice.PossibleKubeletDiskTypeValues())},
		{"type", (*string)(p.Type), strs(armcontainerservice.PossibleAgentPoolTypeValues())},
		{"scaleSetPriority", (*string)(p.ScaleSetPriority), strs(armcontainerservice.PossibleScaleSetPriorityValues())},
		{"scaleSetEvictionPolicy", (*string)(p.ScaleSetEvictionPolicy), strs(armcontainerservice.PossibleScaleSetEvictionPolicyValues())},
	} {
		if rep := enum(e.prop, e.value, e.allow); rep != nil {
			return rep
		}
	}
	windows := ptr.Deref(p.OSType, "") == armcontainerservice.OSTypeWindows
	sku := ptr.Deref(p.OSSKU, "")
	if windowsSKU := strings.HasPrefix(string(sku), "Windows"); sku != "" && windowsSKU != windows {
		return invalid("osSKU", "%s is not an OS SKU for %s agent pools", sku, orDefault(p.OSType, armcontainerservice.OSTypeLinux))
	}
	system := ptr.Deref(p.Mode, "") == armcontainerservice.AgentPoolModeSystem
	switch {
	case system && windows:
		return invalid("mode", "a Windows agent pool cannot be a System pool")
	case system && ptr.Deref(p.ScaleSetPriority, "") == armcontainerservice.ScaleSetPrioritySpot:
		return invalid("mode", "a spot agent pool cannot be a System pool")
	}
	return nil
}

// checkScaling checks the count and the autoscaler's bounds.
func checkScaling(p *props) *sim.Reply {
	count := ptr.Deref(p.Count, 0)
	if count < 0 || count > 1000 {
		return invalid("count", "%d is outside the allowed range 0 to 1000", count)
	}
	system := ptr.Deref(p.Mode, "") == armcontainerservice.AgentPoolModeSystem
	if !ptr.Deref(p.EnableAutoScaling, false) {
		switch {
		case system && count == 0:
			return invalid("count", "a System agent pool needs at least 1 node")
		case p.MinCount != nil:
			return invalid("minCount", "it must not be set when enableAutoScaling is false")
		case p.MaxCount != nil:
			return invalid("maxCount", "it must not be set when enableAutoScaling is false")
		}
		return nil
	}
	switch {
	case p.MinCount == nil:
		return invalid("minCount", "it is required when enableAutoScaling is true")
	case p.MaxCount == nil:
		return invalid("maxCount", "it is required when enableAutoScaling is true")
	case *p.MinCount < 0 || *p.MinCount > 1000:
		return invalid("minCount", "%d is outside the allowed range 0 to 1000", *p.MinCount)
	case *p.MaxCount < 0 || *p.MaxCount > 1000:
		return invalid("maxCount", "%d is outside the allowed range 0 to 1000", *p.MaxCount)
	case system && *p.MinCount == 0:
		return invalid("minCount", "a System agent pool needs at least 1 node")
	case *p.MinCount > *p.MaxCount:
		return invalid("minCount", "%d is greater than the maximum node count %d", *p.MinCount, *p.MaxCount)
	case count < *p.MinCount || count > *p.MaxCount:
		return invalid("count", "%d is outside the autoscaler's range %d to %d", count, *p.MinCount, *p.MaxCount)
	}
	return nil
}

// checkPlacement checks zones, disk, pods and the spot settings.
func checkPlacement(p *props) *sim.Reply {
	seen := map[string]bool{}
	for _, z := range p.AvailabilityZones {
		zone := ptr.Deref(z, "")
		if zone != "1" && zone != "2" && zone != "3" {
			return invalid("availabilityZones", "zone %q is not one of 1, 2, 3", zone)
		}
		if seen[zone] {
			return invalid("availabilityZones", "zone %q is listed twice", zone)
		}
		seen[zone] = true
	}
	if len(p.AvailabilityZones) > 0 && ptr.Deref(p.Type, "") != armcontainerservice.AgentPoolTypeVirtualMachineScaleSets {
		return invalid("availabilityZones", "zones need an agent pool of type VirtualMachineScaleSets")
	}
	if d := ptr.Deref(p.OSDiskSizeGB, 0); d != 0 && (d < 30 || d > 2048) {
		return invalid("osDiskSizeGB", "%d is outside the allowed range 30 to 2048", d)
	}
	if m := ptr.Deref(p.MaxPods, 0); p.MaxPods != nil && (m < 10 || m > 250) {
		return invalid("maxPods", "%d is outside the allowed range 10 to 250", m)
	}
	if ptr.Deref(p.ScaleSetPriority, "") != armcontainerservice.ScaleSetPrioritySpot {
		if p.ScaleSetEvictionPolicy != nil {
			return invalid("scaleSetEvictionPolicy", "it can only be set when scaleSetPriority is Spot")
		}
		if p.SpotMaxPrice != nil {
			return invalid("spotMaxPrice", "it can only be set when scaleSetPriority is Spot")
		}
	} else if price := ptr.Deref(p.SpotMaxPrice, 0); p.SpotMaxPrice != nil && price != -1 && price <= 0 {
		return invalid("spotMaxPrice", "%g is neither -1 nor a price above 0", price)
	}
	return nil
}

func enum[T ~string](prop string, v *T, allowed []T) *sim.Reply {
	if v == nil || slices.Contains(allowed, *v) {
		return nil
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	return invalid(prop, "%q is not one of %s", string(*v), strings.Join(names, ", "))
}

func orDefault[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// sameSet compares zone lists as sets; nil and empty are the same.
func sameSet(a, b []*string) bool {
	set := func(l []*string) map[string]bool {
		m := map[string]bool{}
		for _, s := range l {
			m[ptr.Deref(s, "")] = true
		}
		return m
	}
	return reflect.DeepEqual(set(a), set(b))
}

package driver

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// observe maps a node pool to the neutral observed pool. Its zones are the
// logical zones of its placement availability domains (AD-N is zone N);
// a pool placed in every domain of the cluster without the node-zone label
// is how kpool creates a pool in no zone, and is reported so. The version
// is the minor one ("1.31"), as kpool specs give it; the full one is in
// Extra["kubernetesVersion"]. Its labels are its initialNodeLabels without
// the pool label the driver adds (initialLabels).
func observe(c *kpool.Cluster, np ce.NodePool) provider.Pool {
	p := provider.Pool{
		PoolSpec: provider.PoolSpec{
			ProviderName: ptr.Deref(np.Name, ""),
			MachineType:  ptr.Deref(np.NodeShape, ""),
			Labels:       map[string]string{},
			Version:      minor(ptr.Deref(np.KubernetesVersion, "")),
			Mode:         kpool.ModeUser,
			Settings:     map[string]string{},
		},
		ProviderState: string(np.LifecycleState),
		Message:       ptr.Deref(np.LifecycleDetails, ""),
		Extra:         map[string]string{},
	}
	for _, kv := range np.InitialNodeLabels {
		if k := ptr.Deref(kv.Key, ""); k != poolLabel { // the driver's, not the user's (initialLabels)
			p.Labels[k] = ptr.Deref(kv.Value, "")
		}
	}
	p.Name = p.Labels[provider.LabelPool]
	p.Tags, p.Owner = provider.TagKeys.Take(np.FreeformTags)
	p.Upgrade = observeUpgrade(np)
	observeSource(np, &p)
	stampNow := ""
	placed := map[string]bool{}
	if ncd := np.NodeConfigDetails; ncd != nil {
		p.Count = ptr.Deref(ncd.Size, 0)
		if m := ncd.FreeformTags[TagMode]; m != "" {
			p.Mode = m
		}
		stampNow = ncd.FreeformTags[TagConfig]
		for _, pc := range ncd.PlacementConfigs {
			ad := ptr.Deref(pc.AvailabilityDomain, "")
			placed[ad] = true
			if pc.PreemptibleNodeConfig != nil {
				p.Spot = true
			}
			if l, err := profile.LogicalZone(c, ad); err == nil {
				p.Zones = append(p.Zones, l)
			} else {
				p.Extra["unmappedDomains"] = strings.TrimPrefix(p.Extra["unmappedDomains"]+","+ad, ",")
			}
		}
	}
	sort.Strings(p.Zones)
	if o := c.Spec.Platform.OCI; o != nil && len(p.Zones) > 0 && p.Extra["unmappedDomains"] == "" && len(placed) == len(o.Subnets) && p.Labels[provider.LabelZone] == "" {
		all := true
		for ad := range o.Subnets {
			all = all && placed[ad]
		}
		if all {
			p.Extra["zones"] = strings.Join(p.Zones, ",")
			p.Zones = nil
		}
	}
	p.State = state(np.LifecycleState)
	p.ReadyUnknown = np.Nodes == nil && p.State != provider.StateReady
	observeNodes(c, np, &p, placed, stampNow)
	if np.Nodes == nil && p.State == provider.StateReady {
		p.Nodes, p.ReadyNodes = p.Count, p.Count
	}
	for k, v := range map[string]*string{"id": np.Id, "kubernetesVersion": np.KubernetesVersion, "compartmentId": np.CompartmentId} {
		if v != nil && *v != "" {
			p.Extra[k] = *v
		}
	}
	p.Problems = provider.CheckContract(&p)
	return p
}

// observeSource reads a node pool's image, boot volume and shape size into
// its settings.
func observeSource(np ce.NodePool, p *provider.Pool) {
	if src, ok := np.NodeSourceDetails.(ce.NodeSourceViaImageDetails); ok {
		p.Settings["imageId"] = ptr.Deref(src.ImageId, "")
		p.DiskSizeGB = int(ptr.Deref(src.BootVolumeSizeInGBs, 0))
	} else if np.NodeImageId != nil {
		p.Settings["imageId"] = *np.NodeImageId
	}
	if sc := np.NodeShapeConfig; sc != nil {
		if sc.Ocpus != nil {
			p.Settings["ocpus"] = strconv.FormatFloat(float64(*sc.Ocpus), 'f', -1, 32)
		}
		if sc.MemoryInGBs != nil {
			p.Settings["memoryInGBs"] = strconv.FormatFloat(float64(*sc.MemoryInGBs), 'f', -1, 32)
		}
	}
}

// observeNodes counts a node pool's nodes: all, ready, by zone, and those
// still on an earlier configuration (created before the pool's last change
// of its version, placement or stamped configuration: OKE changes new
// nodes only). A node that could not launch (its nodeError) is no node:
// when it says the host capacity ran out, the pool has a Shortage.
func observeNodes(c *kpool.Cluster, np ce.NodePool, p *provider.Pool, placed map[string]bool, stampNow string) {
	for _, n := range np.Nodes {
		switch {
		case n.NodeError != nil:
			observeShortage(c, n, p)
			continue
		case n.LifecycleState == ce.NodeLifecycleStateDeleted, n.LifecycleState == ce.NodeLifecycleStateDeleting:
			continue
		}
		p.Nodes++
		if n.LifecycleState == ce.NodeLifecycleStateActive {
			p.ReadyNodes++
		}
		ad := ptr.Deref(n.AvailabilityDomain, "")
		if l, err := profile.LogicalZone(c, ad); err == nil {
			if p.NodesByZone == nil {
				p.NodesByZone = map[string]int{}
			}
			p.NodesByZone[l]++
		}
		// New-nodes-only: a node created before the pool's last change
		// keeps the version, placement and (stamped) configuration it was
		// created with.
		if ptr.Deref(n.KubernetesVersion, "") != ptr.Deref(np.KubernetesVersion, "") || (len(placed) > 0 && !placed[ad]) ||
			(stampNow != "" && n.FreeformTags[TagConfig] != stampNow) {
			p.StaleNodes++
		}
	}
}

// state maps a node pool's lifecycle state to the neutral state.
// NEEDS_ATTENTION is Failed: the pool runs, not as asked (its
// lifecycleDetails say why), and an update heals it.
func state(s ce.NodePoolLifecycleStateEnum) provider.State {
	return provider.StateOf(string(s), states)
}

var states = provider.States{Ready: "ACTIVE", Creating: "CREATING", Updating: "UPDATING", Deleting: "DELETING DELETED",
	Failed: "FAILED NEEDS_ATTENTION"}.Map()

// outOfCapacity reports whether a node's error is Compute's answer when
// an availability domain has no host for the shape: 500 InternalError
// "Out of host capacity." (OCI's API errors; cluster-autoscaler's OCI
// provider reads a node's error so: oci_manager.go GetNodePoolNodes).
func outOfCapacity(e *ce.NodeError) bool {
	return e != nil && ptr.Deref(e.Code, "") == "InternalError" && strings.Contains(ptr.Deref(e.Message, ""), "Out of host capacity")
}

// observeShortage adds a node that could not launch for want of host
// capacity to the pool's Shortage: OCI's code and message, and the
// node's availability domain as a logical zone.
func observeShortage(c *kpool.Cluster, n ce.Node, p *provider.Pool) {
	if !outOfCapacity(n.NodeError) {
		return
	}
	if p.Shortage == nil {
		p.Shortage = &provider.Shortage{Code: ptr.Deref(n.NodeError.Code, ""), Message: provider.FirstLine(ptr.Deref(n.NodeError.Message, ""))}
	}
	z, err := profile.LogicalZone(c, ptr.Deref(n.AvailabilityDomain, ""))
	if err == nil && !slices.Contains(p.Shortage.Zones, z) {
		p.Shortage.Zones = append(p.Shortage.Zones, z)
		slices.Sort(p.Shortage.Zones)
	}
}

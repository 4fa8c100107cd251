package driver

import (
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// observe maps a node group to the neutral observed pool. Its zones are
// those of its subnets in the cluster's zone -> subnet map: AWS names
// zones differently in every account, so a subnet the map lacks gives no
// zone (and is listed in Extra), never a guess.
func observe(c *kpool.Cluster, ng *types.Nodegroup) provider.Pool {
	p := provider.Pool{
		PoolSpec: provider.PoolSpec{
			ProviderName: aws.ToString(ng.NodegroupName),
			MachineType:  strings.Join(ng.InstanceTypes, ","),
			DiskSizeGB:   int(aws.ToInt32(ng.DiskSize)),
			Spot:         ng.CapacityType == types.CapacityTypesSpot,
			Labels:       copyMap(ng.Labels),
			Version:      aws.ToString(ng.Version),
			Mode:         kpool.ModeUser,
			Upgrade:      observedUpgrade(ng.UpdateConfig),
		},
		ProviderState: string(ng.Status),
		Extra:         map[string]string{},
	}
	if sc := ng.ScalingConfig; sc != nil {
		lo, hi, n := int(aws.ToInt32(sc.MinSize)), int(aws.ToInt32(sc.MaxSize)), int(aws.ToInt32(sc.DesiredSize))
		p.Count = n
		// EKS has no autoscaling switch: bounds that differ are the
		// Cluster Autoscaler's, except 0..1 at 0, kpool's pool of no nodes.
		if lo != hi && !(lo == 0 && hi == 1 && n == 0) {
			p.Autoscaling, p.MinCount, p.MaxCount = true, lo, hi
		}
	}
	p.Name = p.Labels[provider.LabelPool]
	p.Tags, p.Owner = provider.TagKeys.Take(ng.Tags)
	for _, t := range ng.Taints {
		p.Taints = append(p.Taints, kpool.Taint{Key: aws.ToString(t.Key), Value: aws.ToString(t.Value), Effect: kpoolEffect(t.Effect)})
	}
	observeZones(c, ng, &p)
	p.Nodes = p.Count
	p.State = state(ng.Status)
	p.Message = healthIssues(ng)
	if p.State == provider.StateFailed {
		// While an update runs, the issue of the shortfall it may cure
		// is still there: it is the pool's once the update has ended.
		p.Shortage = shortageOf(c, ng)
	}
	if p.State == provider.StateReady {
		p.ReadyNodes = p.Count
		// EKS reports no per-zone counts; its Auto Scaling group balances
		// the nodes across the subnets' zones.
		zones := p.Zones
		if len(zones) == 0 && p.Extra["zones"] != "" {
			zones = strings.Split(p.Extra["zones"], ",")
		}
		p.NodesByZone = provider.SpreadCount(p.Count, zones)
	} else {
		// EKS gives the target size at once and never how many nodes are
		// up while an update runs, or after one failed.
		p.ReadyUnknown = true
	}
	for k, v := range map[string]*string{"arn": ng.NodegroupArn, "releaseVersion": ng.ReleaseVersion, "nodeRole": ng.NodeRole} {
		if v != nil {
			p.Extra[k] = *v
		}
	}
	if ng.AmiType != "" {
		p.Extra["amiType"] = string(ng.AmiType)
	}
	p.Extra["subnets"] = strings.Join(ng.Subnets, ",")
	p.Problems = provider.CheckContract(&p)
	return p
}

// observeZones sets a node group's logical zones from its subnets: those
// in the cluster's zone -> subnet map, the others listed in Extra.
func observeZones(c *kpool.Cluster, ng *types.Nodegroup, p *provider.Pool) {
	byID := map[string]string{}
	if a := c.Spec.Platform.AWS; a != nil {
		for z, id := range a.Subnets {
			byID[id] = z
		}
	}
	var unmapped []string
	for _, id := range ng.Subnets {
		z, ok := byID[id]
		if !ok {
			unmapped = append(unmapped, id)
			continue
		}
		if l, err := profile.LogicalZone(c, z); err == nil {
			p.Zones = append(p.Zones, l)
		}
	}
	sort.Strings(p.Zones)
	if len(unmapped) > 0 {
		p.Extra["unmappedSubnets"] = strings.Join(unmapped, ",")
	}
	// A pool in every zone of the cluster is how kpool creates a pool in
	// no zone: report it as such, so that it is not seen to drift.
	if a := c.Spec.Platform.AWS; a != nil && len(unmapped) == 0 && len(p.Zones) == len(a.Subnets) && len(p.Zones) > 1 && p.Labels[provider.LabelZone] == "" && len(ng.Subnets) == len(a.Subnets) {
		p.Extra["zones"] = strings.Join(p.Zones, ",")
		p.Zones = nil
	}
}

// healthIssues are a node group's health issues, in one line.
func healthIssues(ng *types.Nodegroup) string {
	var issues []string
	if ng.Health != nil {
		for _, is := range ng.Health.Issues {
			s := string(is.Code) + ": " + aws.ToString(is.Message)
			if len(is.ResourceIds) > 0 {
				s += " (" + strings.Join(is.ResourceIds, ", ") + ")"
			}
			issues = append(issues, s)
		}
	}
	return strings.Join(issues, "; ")
}

// state maps a node group's status to the neutral state. DEGRADED is
// Failed: the node group runs, but not as asked (its health issues say
// why), and the controllers apply the spec again.
func state(s types.NodegroupStatus) provider.State { return provider.StateOf(string(s), states) }

var states = provider.States{Ready: "ACTIVE", Creating: "CREATING", Updating: "UPDATING", Deleting: "DELETING",
	Failed: "CREATE_FAILED DELETE_FAILED DEGRADED"}.Map()

func kpoolEffect(e types.TaintEffect) string {
	for k, v := range effects {
		if v == e {
			return k
		}
	}
	return string(e)
}

package aks

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/kube"
)

// A pool's machines are the instances of its scale set: vms are their
// instance ids, oldest first, and nextVM the id the next new one takes
// (a scale set numbers its instances upwards; learn.microsoft.com/azure/
// virtual-machine-scale-sets/virtual-machine-scale-sets-instance-ids).

// poolLabel is the label AKS puts on each node with its agent pool's name.
const poolLabel = "kubernetes.azure.com/agentpool"

// fresh returns the ids n new instances would take.
func (p *pool) fresh(n int) []int {
	out := make([]int, 0, max(n, 0))
	for i := range max(n, 0) {
		out = append(out, p.nextVM+i)
	}
	return out
}

// setReady makes n the pool's node count and its instances as many: the
// newest go on a scale-down, new ones are added on a scale-up; a stopped
// pool keeps its (deallocated) instances, which come back on a start.
func (p *pool) setReady(n int) {
	p.ready = n
	stopped := powerOf(p.props) == armcontainerservice.CodeStopped
	switch {
	case n < len(p.vms) && !stopped:
		p.vms = p.vms[:n]
	case n > len(p.vms):
		add := p.fresh(n - len(p.vms))
		p.vms = append(p.vms, add...)
		p.nextVM += len(add)
	}
}

// machine is one node of a pool at a moment: its instance, whether its
// kubelet is Ready, and the version and node image it runs.
type machine struct {
	id             int
	ready          bool
	version, image string
}

// reimaging reports whether an operation kind reimages every node in
// place, with surge nodes meanwhile (a version or node image upgrade).
func reimaging(kind string) bool { return kind == stateUpgrading || kind == stateNodeImage }

// machinesAt are the pool's nodes at now. Idle: its instances, Ready
// (none while stopped). A create, scale, start, stop or delete moves them
// one at a time from the operation's start count to its end count (the
// engine's Nodes), a new one Ready once the engine counts it built
// (NodesReady). An upgrade adds its surge nodes on the new version for
// the whole operation, and reimages the others one after the other: each
// in turn is NotReady, then runs the new version and image
// (learn.microsoft.com/azure/aks/how-does-upgrade-happen).
func (p *pool) machinesAt(now time.Time) []machine {
	version := ptr.Deref(p.props.CurrentOrchestratorVersion, p.cluster.version)
	image := ptr.Deref(p.props.NodeImageVersion, "")
	if p.op == nil {
		var out []machine
		if powerOf(p.props) != armcontainerservice.CodeStopped {
			for _, id := range p.vms[:min(p.ready, len(p.vms))] {
				out = append(out, machine{id: id, ready: true, version: version, image: image})
			}
		}
		return out
	}
	o := p.op
	if reimaging(o.Kind) {
		return p.reimagedAt(now, version, image)
	}
	ids := append(append([]int(nil), p.vms...), p.fresh(max(o.From, o.To)-len(p.vms))...)
	n, built := o.Nodes(now), o.NodesReady(now)
	out := make([]machine, 0, n)
	for i, id := range ids[:min(n, len(ids))] {
		out = append(out, machine{id: id, ready: i < o.From || i < built, version: version, image: image})
	}
	return out
}

// reimagedAt are the nodes of a pool in an upgrade at now: see machinesAt.
func (p *pool) reimagedAt(now time.Time, version, image string) []machine {
	o, in := p.op, infoOf(p.op)
	newVersion, newImage := cmpOrString(in.newVersion, version), cmpOrString(in.newImage, image)
	old := p.vms[:min(p.ready, len(p.vms))]
	done := len(old)
	if span := o.End.Sub(o.Start); span > 0 && now.Before(o.End) {
		done = int(int64(len(old)) * int64(now.Sub(o.Start)) / int64(span))
	}
	if in.shortage != nil {
		done = -1 // its surge could not be had (capacity.go): no node is reimaged
	}
	out := make([]machine, 0, len(old)+in.surge)
	for i, id := range old {
		m := machine{id: id, ready: i != done, version: version, image: image}
		if i < done {
			m.version, m.image = newVersion, newImage
		}
		out = append(out, m)
	}
	for _, id := range p.fresh(in.surge) {
		out = append(out, machine{id: id, ready: true, version: newVersion, image: newImage})
	}
	return out
}

// surge is how many surge nodes an upgrade of the pool adds: maxSurge,
// no more than the nodes it upgrades.
func (p *pool) surge() int { return min(surgeNodes(p.props), p.ready) }

func cmpOrString(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

// nodeResourceGroup is the resource group AKS keeps a cluster's nodes in
// (the managed cluster's nodeResourceGroup).
func (c *cluster) nodeResourceGroup() string {
	return "MC_" + c.resourceGroup + "_" + c.name + "_" + c.location
}

// nodeSpec is the Node of machine m of pool p as AKS registers it: the
// scale set instance's computer name, AKS's labels (README "Nodes"), the
// pool's own labels and taints, and the instance as the provider id.
func (p *pool) nodeSpec(m machine) kube.NodeSpec {
	c := p.cluster
	labels := map[string]string{
		poolLabel: p.name, "agentpool": p.name,
		"kubernetes.azure.com/mode":                strings.ToLower(string(ptr.Deref(p.props.Mode, armcontainerservice.AgentPoolModeUser))),
		"kubernetes.azure.com/role":                "agent",
		"kubernetes.azure.com/cluster":             c.nodeResourceGroup(),
		"kubernetes.azure.com/node-image-version":  m.image,
		"kubernetes.azure.com/os-sku":              string(ptr.Deref(p.props.OSSKU, armcontainerservice.OSSKUUbuntu)),
		"node.kubernetes.io/instance-type":         ptr.Deref(p.props.VMSize, ""),
		"beta.kubernetes.io/instance-type":         ptr.Deref(p.props.VMSize, ""),
		"topology.kubernetes.io/region":            c.location,
		"failure-domain.beta.kubernetes.io/region": c.location,
	}
	zone := "0"
	if z := p.zoneOf(m.id); z != "" {
		zone = c.location + "-" + z
	}
	labels["topology.kubernetes.io/zone"], labels["failure-domain.beta.kubernetes.io/zone"] = zone, zone
	if ptr.Deref(p.props.ScaleSetPriority, "") == armcontainerservice.ScaleSetPrioritySpot {
		labels[spotLabelKey] = spotLabelValue
	}
	for k, v := range p.props.NodeLabels {
		labels[k] = ptr.Deref(v, "")
	}
	var taints []corev1.Taint
	for _, t := range p.props.NodeTaints {
		if tt, ok := parseTaint(ptr.Deref(t, "")); ok {
			taints = append(taints, tt)
		}
	}
	return kube.NodeSpec{Name: machineName(p, m.id), Labels: labels, Taints: taints, Ready: m.ready,
		KubeletVersion: "v" + m.version,
		ProviderID:     "azure://" + vmResourceID(p, strings.ToLower(c.nodeResourceGroup()), m.id)}
}

// parseTaint reads an AKS nodeTaints entry, key[=value]:Effect.
func parseTaint(s string) (corev1.Taint, bool) {
	kv, effect, ok := strings.Cut(s, ":")
	if !ok {
		return corev1.Taint{}, false
	}
	k, v, _ := strings.Cut(kv, "=")
	return corev1.Taint{Key: k, Value: v, Effect: corev1.TaintEffect(effect)}, true
}

// syncNodes brings the emulated Kubernetes API of every cluster to its
// pools at now: a pool whose nodes differ from those last handed to it is
// synced (kube.Propagate: AKS applies a pool's label and taint changes to
// its nodes), and a pool gone has its nodes removed. s's engine lock is
// held; the kube API has its own.
func (s *Server) syncNodes(now time.Time) {
	for _, c := range s.clusters {
		id := c.kubeID()
		seen := map[string]bool{}
		for _, p := range c.pools {
			seen[p.name] = true
			var specs []kube.NodeSpec
			for _, m := range p.machinesAt(now) {
				specs = append(specs, p.nodeSpec(m))
			}
			key := fmt.Sprint(specs)
			if c.synced[p.name] == key {
				continue
			}
			if c.synced == nil {
				c.synced = map[string]string{}
			}
			c.synced[p.name] = key
			s.kube.SyncNodes(id, poolLabel, p.name, specs, kube.Propagate)
		}
		for _, name := range sortedKeys(c.synced) {
			if !seen[name] {
				delete(c.synced, name)
				s.kube.SyncNodes(id, poolLabel, name, nil, kube.Propagate)
			}
		}
	}
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

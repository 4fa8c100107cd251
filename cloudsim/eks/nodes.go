package eks

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/kube"
)

// LabelNodegroup is the label EKS puts on a managed node group's nodes
// with the node group's name (the EKS user guide, managed-node-groups.html:
// "Amazon EKS adds Kubernetes labels to managed node group instances …
// prefixed with eks.amazonaws.com").
const LabelNodegroup = "eks.amazonaws.com/nodegroup"

// kubeID is the cluster's id in the emulated Kubernetes API (its server
// URL's last segment): region and name, which no EKS cluster name's
// letters, digits, - and _ can make ambiguous.
func (c *cluster) kubeID() string { return c.region + "." + c.name }

// syncKube brings every node group's instances up to now and hands the
// node groups whose nodes changed to the clusters' Kubernetes APIs; a
// node group gone (deleted) loses its nodes. Under the engine's lock (the
// Kubernetes API has its own).
func (s *Server) syncKube(now time.Time) {
	for _, c := range s.clusters {
		for _, g := range c.sortedNodegroups() {
			g.advance(now)
			if u := g.running(); u == nil || u.typ != typeConfig {
				// A config update's labels and taints reach the
				// nodes when it ends.
				g.shown = appliedOf(&g.ng)
			}
			specs := g.nodeSpecs()
			if sum := fingerprint(specs); c.synced[g.name] != sum {
				s.kube.SyncNodes(c.kubeID(), LabelNodegroup, g.name, specs, kube.Propagate)
				c.synced[g.name] = sum
			}
		}
		for name := range c.synced {
			if _, ok := c.nodegroups[name]; !ok {
				s.kube.SyncNodes(c.kubeID(), LabelNodegroup, name, nil, kube.Propagate)
				delete(c.synced, name)
			}
		}
	}
}

// shown are the labels and taints a node group's nodes carry.
type shown struct {
	labels map[string]string
	taints []taint
}

func appliedOf(ng *Nodegroup) shown {
	return shown{labels: maps.Clone(ng.Labels), taints: slices.Clone(ng.Taints)}
}

// fingerprint sums what SyncNodes would be given, to call it only on a
// change.
func fingerprint(specs []kube.NodeSpec) string {
	h := sha256.New()
	for _, n := range specs {
		fmt.Fprintf(h, "%s|%v|%v|%v|%s|%s|%s\n", n.Name, sortedPairs(n.Labels), n.Taints, n.Ready, n.KubeletVersion, n.ProviderID, n.InternalIP)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func sortedPairs(m map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+"="+m[k])
	}
	return out
}

// nodeSpecs are g's nodes as EKS makes them: the node group's labels and
// taints (as last applied) and the labels EKS, the kubelet and the AWS
// cloud provider put on each.
func (g *nodegroup) nodeSpecs() []kube.NodeSpec {
	c := g.cluster
	var out []kube.NodeSpec
	for _, in := range g.instances {
		labels := maps.Clone(g.shown.labels)
		if labels == nil {
			labels = map[string]string{}
		}
		maps.Copy(labels, map[string]string{
			LabelNodegroup:                             g.name,
			"eks.amazonaws.com/nodegroup-image":        amiID(c.region, g.ng.AmiType, in.launch.release),
			"eks.amazonaws.com/capacityType":           g.ng.CapacityType,
			"node.kubernetes.io/instance-type":         in.instanceType,
			"beta.kubernetes.io/instance-type":         in.instanceType,
			"topology.kubernetes.io/region":            c.region,
			"topology.kubernetes.io/zone":              in.zone,
			"failure-domain.beta.kubernetes.io/region": c.region,
			"failure-domain.beta.kubernetes.io/zone":   in.zone,
			"topology.k8s.aws/zone-id":                 zoneIDOf(c.region, in.zone),
			"k8s.io/cloud-provider-aws":                digest(c.arn())[:32],
		})
		if lt := g.ng.LaunchTemplate; lt != nil {
			labels["eks.amazonaws.com/sourceLaunchTemplateId"] = ptr.Deref(lt.ID, "")
			labels["eks.amazonaws.com/sourceLaunchTemplateVersion"] = in.launch.template
		}
		out = append(out, kube.NodeSpec{Name: in.name, Labels: labels, Taints: nodeTaints(g.shown.taints), Ready: true,
			KubeletVersion: kubeletVersion(in.launch.release), ProviderID: "aws:///" + in.zone + "/" + in.id, InternalIP: in.ip})
	}
	return out
}

// nodeTaints are a node group's taints as the nodes carry them: EKS's
// effects (NO_SCHEDULE, NO_EXECUTE, PREFER_NO_SCHEDULE) in Kubernetes'
// words (the EKS user guide, node-taints-managed-node-groups.html).
func nodeTaints(ts []taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range ts {
		e := map[string]corev1.TaintEffect{"NO_SCHEDULE": corev1.TaintEffectNoSchedule, "NO_EXECUTE": corev1.TaintEffectNoExecute,
			"PREFER_NO_SCHEDULE": corev1.TaintEffectPreferNoSchedule}[t.Effect]
		out = append(out, corev1.Taint{Key: ptr.Deref(t.Key, ""), Value: ptr.Deref(t.Value, ""), Effect: e})
	}
	return out
}

// kubeletVersion is the kubelet of an EKS optimized AMI release
// (1.31.4-20250123): v1.31.4-eks- and 7 hex digits of the build, as EKS's
// nodes report it (v1.31.4-eks-aeac579).
func kubeletVersion(release string) string {
	v, _, _ := strings.Cut(release, "-")
	return "v" + v + "-eks-" + digest(release)[:7]
}

// amiID is the image of an AMI type's release in a region, ami- and 17
// hex digits.
func amiID(region, amiType, release string) string {
	return "ami-" + digest(region + "/" + amiType + "/" + release)[:17]
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

package kube

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// The scheduler's filter failures, as kube-scheduler words them
// (pkg/scheduler/framework/plugins: nodeunschedulable's
// ErrReasonUnschedulable, tainttoleration's "node(s) had untolerated taint
// {%s: %s}", nodeaffinity's ErrReasonPod), and its message when no node
// fits (framework.FitError, with the preemption note it adds when
// preemption cannot help: no priorities or resources are modelled here).
const (
	reasonUnschedulable = "node(s) were unschedulable"
	reasonAffinity      = "node(s) didn't match Pod's node affinity/selector"
	// A node being deleted (deletionTimestamp set: only SetNode can set
	// it here, deletes being immediate) is passed over as the node gone it
	// is about to be; the words are this package's.
	reasonDeleting = "node(s) were being deleted"
	noNodes        = "no nodes available to schedule pods"
)

// schedule binds each pending pod the default scheduler owns (spec.nodeName
// empty, phase Pending, spec.schedulerName empty or default-scheduler, not
// being deleted) to a node, as kube-scheduler does (kubernetes.io/docs/
// concepts/scheduling-eviction/kube-scheduler: filtering, then scoring).
// Filtering keeps the nodes that are not cordoned (NodeUnschedulable, unless
// the pod tolerates node.kubernetes.io/unschedulable), whose NoSchedule and
// NoExecute taints the pod tolerates (TaintToleration; a node not Ready
// counts as tainted node.kubernetes.io/not-ready, or unreachable without
// the condition, as the node lifecycle controller taints it), and whose
// labels match the pod's nodeSelector and required node affinity
// (NodeAffinity); NodeResourcesFit, ports, volumes, inter-pod affinity and
// topology constraints are not modelled. Scoring prefers the node with the
// fewest pods of the pod's controller (the default topology spreading),
// then the fewest pods, then the first name. A pod no node takes stays
// Pending with PodScheduled False, reason Unschedulable, the scheduler's
// message; it is tried again after the next write. a.mu is held.
func (a *API) schedule(c *cluster) {
	nodes := sortedObjs(c, nodeRes)
	count, owned := map[string]int{}, map[types.UID]map[string]int{}
	var queue []*corev1.Pod
	for _, o := range sortedObjs(c, podRes) {
		p := o.(*corev1.Pod)
		if p.Spec.NodeName == "" {
			if p.Status.Phase == corev1.PodPending && p.DeletionTimestamp == nil &&
				(p.Spec.SchedulerName == "" || p.Spec.SchedulerName == corev1.DefaultSchedulerName) {
				queue = append(queue, p)
			}
			continue
		}
		count[p.Spec.NodeName]++
		if ref := metav1.GetControllerOf(p); ref != nil {
			if owned[ref.UID] == nil {
				owned[ref.UID] = map[string]int{}
			}
			owned[ref.UID][p.Spec.NodeName]++
		}
	}
	for _, p := range queue {
		var best *corev1.Node
		var ref types.UID
		if r := metav1.GetControllerOf(p); r != nil {
			ref = r.UID
		}
		reasons := map[string]int{}
		for _, o := range nodes {
			n := o.(*corev1.Node)
			if why := fits(p, n); why != "" {
				reasons[why]++
				continue
			}
			if best == nil || better(n.Name, best.Name, owned[ref], count) {
				best = n
			}
		}
		if best == nil {
			a.unschedulable(c, p, fitError(len(nodes), reasons))
			continue
		}
		a.bind(c, p, best)
		count[best.Name]++
		if ref != "" {
			if owned[ref] == nil {
				owned[ref] = map[string]int{}
			}
			owned[ref][best.Name]++
		}
	}
}

// better reports whether node x scores above node y: fewer pods of the
// same controller, then fewer pods, then the name.
func better(x, y string, owned, count map[string]int) bool {
	if owned[x] != owned[y] {
		return owned[x] < owned[y]
	}
	if count[x] != count[y] {
		return count[x] < count[y]
	}
	return x < y
}

// fits is the first reason node n cannot take pod p ("" when it can),
// in the default filter plugins' order: NodeUnschedulable,
// TaintToleration, NodeAffinity.
func fits(p *corev1.Pod, n *corev1.Node) string {
	if n.DeletionTimestamp != nil {
		return reasonDeleting
	}
	cordon := corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}
	if n.Spec.Unschedulable && !corev1helpers.TolerationsTolerateTaint(klog.Background(), p.Spec.Tolerations, &cordon, false) {
		return reasonUnschedulable
	}
	taints := slices.Clone(n.Spec.Taints)
	switch readyStatus(n) {
	case corev1.ConditionTrue:
	case corev1.ConditionFalse:
		taints = append(taints, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule})
	default:
		taints = append(taints, corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule})
	}
	hard := func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}
	if t, bad := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), taints, p.Spec.Tolerations, hard, false); bad {
		return fmt.Sprintf("node(s) had untolerated taint {%s: %s}", t.Key, t.Value)
	}
	if ok, err := nodeaffinity.GetRequiredNodeAffinity(p).Match(n); !ok || err != nil {
		return reasonAffinity
	}
	return ""
}

// readyStatus is the status of a node's Ready condition (Unknown without
// one).
func readyStatus(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}

// fitError is the scheduler's message when no node fits (FitError.Error):
// "0/N nodes are available: " and the reasons' counts, sorted, then the
// preemption note; with no nodes, "no nodes available to schedule pods".
func fitError(nodes int, reasons map[string]int) string {
	if nodes == 0 {
		return noNodes
	}
	var parts []string
	for why, n := range reasons {
		parts = append(parts, fmt.Sprintf("%d %s", n, why))
	}
	slices.Sort(parts)
	return fmt.Sprintf("0/%d nodes are available: %s. preemption: 0/%d nodes are available: %d Preemption is not helpful for scheduling.",
		nodes, strings.Join(parts, ", "), nodes, nodes)
}

// unschedulable records why a pod was not placed, as the scheduler does
// (its PodScheduled condition False, reason Unschedulable), unless it says
// so already. a.mu is held.
func (a *API) unschedulable(c *cluster, p *corev1.Pod, msg string) {
	cond := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: msg, LastTransitionTime: metav1.Now()}
	for _, old := range p.Status.Conditions {
		if old.Type == corev1.PodScheduled && old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message {
			return
		}
	}
	q := p.DeepCopy()
	setPodCondition(&q.Status.Conditions, cond)
	q.ResourceVersion = ""
	_, _ = a.updateObj(c, podRes, q, false)
}

// setPodCondition sets a condition of a pod's status, keeping its
// transition time when its status stays.
func setPodCondition(conds *[]corev1.PodCondition, c corev1.PodCondition) {
	for i := range *conds {
		if (*conds)[i].Type == c.Type {
			if (*conds)[i].Status == c.Status {
				c.LastTransitionTime = (*conds)[i].LastTransitionTime
			}
			(*conds)[i] = c
			return
		}
	}
	*conds = append(*conds, c)
}

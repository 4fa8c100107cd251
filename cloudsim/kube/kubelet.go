package kube

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// bind places a pod on a node and starts it, in one write: the scheduler
// binds it (pods/binding sets spec.nodeName, PodScheduled True) and the
// node's kubelet then starts its containers and reports the pod Running,
// Initialized, ContainersReady and Ready (kubernetes.io/docs/concepts/
// workloads/pods/pod-lifecycle: "Pod conditions"), each container running
// and ready. Here that is immediate: no image pull, no probes. A pod with
// readiness gates is Ready only when their conditions are True (pod-
// lifecycle, "Pod readiness"): a client sets them through the status
// subresource, and kubelet below follows. a.mu is held.
func (a *API) bind(c *cluster, p *corev1.Pod, n *corev1.Node) {
	q := p.DeepCopy()
	now := metav1.Now()
	q.Spec.NodeName = n.Name
	q.Status.Phase, q.Status.StartTime = corev1.PodRunning, &now
	for _, addr := range n.Status.Addresses {
		if addr.Type == corev1.NodeInternalIP && q.Status.HostIP == "" {
			q.Status.HostIP = addr.Address
			q.Status.HostIPs = []corev1.HostIP{{IP: addr.Address}}
		}
	}
	for _, t := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		setPodCondition(&q.Status.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	gatesReady(q)
	q.Status.ContainerStatuses = nil
	for _, ct := range q.Spec.Containers {
		q.Status.ContainerStatuses = append(q.Status.ContainerStatuses, corev1.ContainerStatus{Name: ct.Name, Image: ct.Image, Ready: true,
			Started: ptr(true), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}})
	}
	q.ResourceVersion = ""
	_, _ = a.updateObj(c, podRes, q, false)
}

// gatesReady sets a running pod's Ready condition from its containers and
// readiness gates, as the kubelet's status manager does
// (GeneratePodReadyCondition: Ready when ContainersReady is and every
// gate's condition is True; else reason ReadinessGatesNotReady). It
// reports whether it changed the condition.
func gatesReady(p *corev1.Pod) bool {
	ready := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}
	has := func(t corev1.PodConditionType) bool {
		return slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == t && c.Status == corev1.ConditionTrue })
	}
	if !has(corev1.ContainersReady) {
		ready.Status, ready.Reason = corev1.ConditionFalse, "ContainersNotReady"
	}
	for _, g := range p.Spec.ReadinessGates {
		if ready.Status == corev1.ConditionTrue && !has(g.ConditionType) {
			ready.Status, ready.Reason = corev1.ConditionFalse, "ReadinessGatesNotReady"
			ready.Message = fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist or is not True.", g.ConditionType)
		}
	}
	for _, old := range p.Status.Conditions {
		if old.Type == corev1.PodReady && old.Status == ready.Status && old.Reason == ready.Reason && old.Message == ready.Message {
			return false
		}
	}
	setPodCondition(&p.Status.Conditions, ready)
	return true
}

// kubelet keeps the Ready condition of the running pods that have
// readiness gates in step with their gates' conditions, as each node's
// kubelet does when a client writes them. Other pods' readiness is what
// the scheduler's binding (bind) or SetPodReady made it. a.mu is held.
func (a *API) kubelet(c *cluster) {
	for _, o := range sortedObjs(c, podRes) {
		p := o.(*corev1.Pod)
		if p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning || len(p.Spec.ReadinessGates) == 0 {
			continue
		}
		q := p.DeepCopy()
		if gatesReady(q) {
			q.ResourceVersion = ""
			_, _ = a.updateObj(c, podRes, q, false)
		}
	}
}

package kube

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
)

// settle runs a cluster's controllers after a write, as
// kube-controller-manager and kube-scheduler would soon after it: here
// synchronously, inside the API's lock, in a fixed order, until none of
// them has anything left to do (no write in a round). The pod GC deletes
// the pods of nodes gone and the garbage collector those of Deployments
// gone; the Deployment controller keeps each Deployment's replicas; the
// scheduler binds the pods it can (and the emulated kubelet starts them);
// the Deployment controller writes the Deployments' status. Every write
// of theirs is an event the watches see. A write made while settling does
// not settle again (the loop goes on instead). a.mu is held.
func (a *API) settle(c *cluster) {
	if c.settling {
		return
	}
	c.settling = true
	defer func() { c.settling = false }()
	for range 64 { // a bound no real convergence comes near
		before := a.rv
		a.collect(c)
		for _, d := range sortedObjs(c, depRes) {
			a.syncReplicas(c, d.(*appsv1.Deployment))
		}
		a.schedule(c)
		a.kubelet(c)
		for _, d := range sortedObjs(c, depRes) {
			a.syncStatus(c, d.(*appsv1.Deployment))
		}
		if a.rv == before {
			return
		}
	}
}

// sortedObjs are the stored objects of a resource by namespace and name:
// the controllers visit them in this order, so that a run is
// deterministic. a.mu is held.
func sortedObjs(c *cluster, r *resource) []object {
	out := make([]object, 0, len(c.objects(r)))
	for _, o := range c.objects(r) {
		out = append(out, o)
	}
	slices.SortFunc(out, func(x, y object) int { return strings.Compare(key(x), key(y)) })
	return out
}

// collect deletes the pods of the nodes deleted since it last ran, as the
// pod garbage collector deletes orphaned pods (kube-controller-manager's
// podgc, "gcOrphaned": pods bound to a node that no longer exists; its
// quarantine before deleting them is not modelled), and the pods whose
// controller is a Deployment deleted since, as the garbage collector
// deletes the dependents of a deleted owner (background propagation,
// kubernetes.io/docs/concepts/architecture/garbage-collection). A node
// made again under the same name before it runs keeps its pods. a.mu is
// held.
func (a *API) collect(c *cluster) {
	nodes, owners := c.goneNodes, c.goneOwners
	c.goneNodes, c.goneOwners = nil, nil
	for _, o := range sortedObjs(c, podRes) {
		p := o.(*corev1.Pod)
		_, nodeBack := c.objects(nodeRes)["/"+p.Spec.NodeName]
		orphan := p.Spec.NodeName != "" && !nodeBack && slices.Contains(nodes, p.Spec.NodeName)
		if ref := metav1.GetControllerOf(p); orphan || (ref != nil && slices.Contains(owners, ref.UID)) {
			_, _ = a.deleteObj(c, podRes, p.Namespace, p.Name)
		}
	}
}

// replicas is a Deployment's spec.replicas, 1 when not set (the API
// server's default for apps/v1).
func replicas(d *appsv1.Deployment) int {
	if d.Spec.Replicas == nil {
		return 1
	}
	return int(*d.Spec.Replicas)
}

// ownedPods are a Deployment's active pods: those whose controller
// reference is the Deployment, not terminated (Succeeded, Failed) and not
// being deleted (the ReplicaSet controller's FilterActivePods). Pods are
// not adopted by selector. a.mu is held.
func ownedPods(c *cluster, uid types.UID) []*corev1.Pod {
	var out []*corev1.Pod
	for _, o := range sortedObjs(c, podRes) {
		p := o.(*corev1.Pod)
		ref := metav1.GetControllerOf(p)
		if ref == nil || ref.UID != uid || p.DeletionTimestamp != nil ||
			p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		out = append(out, p)
	}
	return out
}

// syncReplicas makes a Deployment's active pods its replicas, as the
// deployment and ReplicaSet controllers do between them (no ReplicaSet
// objects here: the pods are the Deployment's own): missing pods are
// made from the template, extra ones deleted, those the scheduler has not
// placed first, then those not Ready, then the newest (the ReplicaSet
// controller's ActivePods ordering for scale-down). A template change
// does not roll the existing pods (no rollout is modelled); new pods take
// the new template. a.mu is held.
func (a *API) syncReplicas(c *cluster, d *appsv1.Deployment) {
	pods := ownedPods(c, d.UID)
	want := replicas(d)
	for i := len(pods); i < want; i++ {
		_, _ = a.createObj(c, podRes, newPod(c, d))
	}
	if len(pods) <= want {
		return
	}
	slices.SortStableFunc(pods, func(x, y *corev1.Pod) int {
		if (x.Spec.NodeName == "") != (y.Spec.NodeName == "") {
			return boolOrder(x.Spec.NodeName == "")
		}
		if podReady(x) != podReady(y) {
			return boolOrder(!podReady(x))
		}
		return y.CreationTimestamp.Time.Compare(x.CreationTimestamp.Time)
	})
	for _, p := range pods[:len(pods)-want] {
		_, _ = a.deleteObj(c, podRes, p.Namespace, p.Name)
	}
}

// boolOrder sorts true first.
func boolOrder(first bool) int {
	if first {
		return -1
	}
	return 1
}

// newPod is a pod of a Deployment's template: its labels (with the
// template's pod-template-hash, as the Deployment controller labels its
// ReplicaSets' pods), annotations and spec (the default scheduler when it
// names none, as the API server defaults it), Pending, controlled by the
// Deployment (an ownerReference with controller: true), named
// <deployment>-<5 characters> from apimachinery's util/rand alphabet (as
// generateName makes names). a.mu is held.
func newPod(c *cluster, d *appsv1.Deployment) *corev1.Pod {
	t := d.Spec.Template.DeepCopy()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Labels: t.Labels, Annotations: t.Annotations,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
		Spec: t.Spec, Status: corev1.PodStatus{Phase: corev1.PodPending}}
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = templateHash(d)
	if p.Spec.SchedulerName == "" {
		p.Spec.SchedulerName = corev1.DefaultSchedulerName
	}
	for {
		p.Name = d.Name + "-" + utilrand.String(5)
		if _, taken := c.objects(podRes)[key(p)]; !taken {
			return p
		}
	}
}

// templateHash is the pod-template-hash of a Deployment's template: a
// 32-bit FNV-1a of it, in apimachinery's SafeEncodeString alphabet (the
// Deployment controller's ComputeHash hashes the template likewise).
func templateHash(d *appsv1.Deployment) string {
	h := fnv.New32a()
	b, _ := json.Marshal(d.Spec.Template)
	_, _ = h.Write(b)
	return utilrand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// syncStatus writes a Deployment's status from its pods when it changed,
// as the deployment controller does (syncRolloutStatus): replicas (its
// active pods), updatedReplicas (those of its current template),
// readyReplicas, availableReplicas (Ready ones: minReadySeconds is not
// modelled), unavailableReplicas (replicas wanted less available, not
// below 0), observedGeneration, and the Available condition
// (MinimumReplicasAvailable while available >= replicas -
// maxUnavailable, else MinimumReplicasUnavailable). a.mu is held.
func (a *API) syncStatus(c *cluster, d *appsv1.Deployment) {
	pods := ownedPods(c, d.UID)
	want, hash := replicas(d), templateHash(d)
	st := appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: int32(len(pods))} //nolint:gosec // a count of pods
	for _, p := range pods {
		if p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] == hash {
			st.UpdatedReplicas++
		}
		if podReady(p) {
			st.ReadyReplicas++
			st.AvailableReplicas++
		}
	}
	st.UnavailableReplicas = max(int32(want)-st.AvailableReplicas, 0) //nolint:gosec // replicas are int32
	cond := appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue,
		Reason: "MinimumReplicasAvailable", Message: "Deployment has minimum availability."}
	if int(st.AvailableReplicas) < want-maxUnavailable(d, want) {
		cond.Status, cond.Reason, cond.Message = corev1.ConditionFalse, "MinimumReplicasUnavailable", "Deployment does not have minimum availability."
	}
	now := metav1.Now()
	cond.LastUpdateTime, cond.LastTransitionTime = now, now
	for _, old := range d.Status.Conditions {
		if old.Type == cond.Type && old.Status == cond.Status && old.Reason == cond.Reason {
			cond.LastUpdateTime, cond.LastTransitionTime = old.LastUpdateTime, old.LastTransitionTime
		}
	}
	st.Conditions = []appsv1.DeploymentCondition{cond}
	if equality.Semantic.DeepEqual(st, d.Status) {
		return
	}
	stored := d.DeepCopy()
	stored.Status, stored.ResourceVersion = st, ""
	_, _ = a.updateObj(c, depRes, stored, false)
}

// maxUnavailable is a Deployment's rolling update maxUnavailable of want
// replicas (25% by default, a percentage rounded down, as the
// deployment controller's MaxUnavailable resolves it); 0 for Recreate.
func maxUnavailable(d *appsv1.Deployment, want int) int {
	if d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		return 0
	}
	v := intstr.FromString("25%")
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil && ru.MaxUnavailable != nil {
		v = *ru.MaxUnavailable
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, want, false)
	if err != nil {
		return 0
	}
	return min(n, want)
}

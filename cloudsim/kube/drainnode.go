package kube

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// mirrorAnnotation marks a static pod's mirror in the API server
// (corev1.MirrorPodAnnotationKey), which kubectl drain never evicts.
const mirrorAnnotation = "kubernetes.io/config.mirror"

// DrainNode is what a cloud does to a node it is about to remove (OKE's
// cordon and drain, GKE's and AKS's upgrade drains): it cordons the node
// (spec.unschedulable, as kubectl cordon sets it) and evicts each of its
// pods with the eviction subresource's rules (evictLocked: a pod whose
// PodDisruptionBudget allows no disruption stays), as kubectl drain does
// (k8s.io/kubectl/pkg/drain): DaemonSet pods and mirror pods are skipped
// (--ignore-daemonsets; a mirror pod cannot be deleted through the API),
// and pods already gone are done. With force, a pod its budget keeps is
// deleted all the same (a cloud's force delete after its grace period).
// left is how many pods still run on the node (not counting the skipped
// ones); err is a NotFound for a node the cluster lacks. Calling it again
// retries the pods left, so a caller drives a drain by calling it until
// left is 0.
func (a *API) DrainNode(cluster, node string, force bool) (left int, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.cluster(cluster)
	o, ok := c.objects(nodeRes)["/"+node]
	if !ok {
		return 0, apierrors.NewNotFound(nodeRes.gr, node)
	}
	if n := o.(*corev1.Node); !n.Spec.Unschedulable {
		cordoned := n.DeepCopy()
		cordoned.Spec.Unschedulable = true
		cordoned.ResourceVersion = ""
		if _, err := a.updateObj(c, nodeRes, cordoned, true); err != nil {
			return 0, err
		}
	}
	for _, p := range a.drainable(c, node) {
		if err := a.evictLocked(c, p.Namespace, p.Name); err != nil && !apierrors.IsNotFound(err) {
			if !force {
				left++
				continue
			}
			if _, err := a.deleteObj(c, podRes, p.Namespace, p.Name); err != nil && !apierrors.IsNotFound(err) {
				left++
			}
		}
	}
	return left, nil
}

// drainable are the pods bound to a node that a drain evicts, by
// namespace and name: not those a DaemonSet owns, nor mirror pods.
// a.mu is held.
func (a *API) drainable(c *cluster, node string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, o := range c.objects(podRes) {
		p := o.(*corev1.Pod)
		if p.Spec.NodeName != node {
			continue
		}
		if _, mirror := p.Annotations[mirrorAnnotation]; mirror {
			continue
		}
		if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind == "DaemonSet" {
			continue
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(x, y *corev1.Pod) int {
		return cmp.Or(cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Name, y.Name))
	})
	return out
}

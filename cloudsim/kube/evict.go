package kube

import (
	"fmt"
	"math"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// pdbStatus computes a PodDisruptionBudget's status from its pods, as the
// disruption controller (kubernetes pkg/controller/disruption) keeps it:
// expected pods are the matching ones (the controller takes its pods'
// controllers' scale: here the pods present), currentHealthy those Ready
// and not being deleted, desiredHealthy minAvailable (a percentage of
// the expected pods, rounded up) or expected minus maxUnavailable
// (likewise), and disruptionsAllowed currentHealthy - desiredHealthy, not
// below 0. The pods it evicted and that no new matching pod has replaced
// yet (status.disruptedPods, which the eviction registry writes) count as
// expected and not healthy: the controller's scale would still count them.
// a.mu is held.
func (a *API) pdbStatus(c *cluster, o object) {
	pdb := o.(*policyv1.PodDisruptionBudget)
	disrupted := pdb.Status.DisruptedPods
	expected, healthy := int32(len(disrupted)), int32(0) //nolint:gosec // a map of pods
	for _, p := range a.pdbPods(c, pdb) {
		expected++
		if podReady(p) {
			healthy++
		}
	}
	var desired int32
	switch {
	case pdb.Spec.MinAvailable != nil:
		desired = scaled(pdb.Spec.MinAvailable, expected)
	case pdb.Spec.MaxUnavailable != nil:
		desired = max(expected-scaled(pdb.Spec.MaxUnavailable, expected), 0)
	}
	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, ExpectedPods: expected, DisruptedPods: disrupted,
		CurrentHealthy: healthy, DesiredHealthy: desired, DisruptionsAllowed: max(healthy-desired, 0),
		Conditions: []metav1.Condition{{Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionTrue,
			Reason: policyv1.SufficientPodsReason, ObservedGeneration: pdb.Generation, LastTransitionTime: pdb.CreationTimestamp}}}
	if healthy <= desired {
		pdb.Status.Conditions[0].Status, pdb.Status.Conditions[0].Reason = metav1.ConditionFalse, policyv1.InsufficientPodsReason
	}
}

// scaled is an int-or-percent of n, percentages rounded up (the
// controller's intstr.GetScaledValueFromIntOrPercent with roundUp).
func scaled(v *intstr.IntOrString, n int32) int32 {
	if v.Type == intstr.Int {
		return v.IntVal
	}
	s, err := intstr.GetScaledValueFromIntOrPercent(v, int(n), true)
	if err != nil || s > math.MaxInt32 {
		return n
	}
	return int32(s) //nolint:gosec // bounded above
}

// pdbPods are the pods of a PDB's namespace its selector matches (an
// empty selector matches all of them, in policy/v1). a.mu is held.
func (a *API) pdbPods(c *cluster, pdb *policyv1.PodDisruptionBudget) []*corev1.Pod {
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		return nil
	}
	if pdb.Spec.Selector == nil {
		sel = labels.Everything()
	}
	var out []*corev1.Pod
	for _, o := range c.objects(podRes) {
		if p := o.(*corev1.Pod); p.Namespace == pdb.Namespace && sel.Matches(labels.Set(p.Labels)) {
			out = append(out, p)
		}
	}
	return out
}

func podReady(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// evict answers POST …/pods/{name}/eviction with the rules of the API
// server's eviction registry (pkg/registry/core/pod/storage/eviction.go).
func (a *API) evict(w http.ResponseWriter, r *http.Request, c *cluster, ns, name string) {
	body, err := readBody(r)
	if err != nil {
		writeStatus(w, err)
		return
	}
	// The subresource takes a policy/v1 Eviction or, as kubectl up to 1.21
	// sends it, a policy/v1beta1 one (kubernetes PR 100724).
	var ev policyv1.Eviction
	if err := decodeAs(r.Header.Get("Content-Type"), body, policyv1.SchemeGroupVersion.WithKind("Eviction"), &ev); err != nil {
		var old policyv1beta1.Eviction
		if decodeAs(r.Header.Get("Content-Type"), body, policyv1beta1.SchemeGroupVersion.WithKind("Eviction"), &old) != nil {
			writeStatus(w, err)
			return
		}
		ev.ObjectMeta = old.ObjectMeta
	}
	if ev.Name != "" && ev.Name != name {
		writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("name in URL does not match name in Eviction object: %s", ev.Name)))
		return
	}
	a.mu.Lock()
	err = a.evictLocked(c, ns, name)
	a.mu.Unlock()
	if err != nil {
		writeStatus(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess, Code: http.StatusCreated})
}

// evictLocked deletes a pod unless that would break its budget:
//   - a pod that is Succeeded, Failed or Pending is deleted whatever its
//     budgets (canIgnorePDB);
//   - more than one budget on the pod is 500 ("This pod has more than one
//     PodDisruptionBudget, which the eviction subresource does not support.");
//   - a pod not Ready whose budget is met (currentHealthy >= desiredHealthy)
//     is deleted (the default unhealthyPodEvictionPolicy IfHealthyBudget;
//     AlwaysAllow deletes it whatever the budget);
//   - a budget with no disruption allowed is 429 TooManyRequests, "Cannot
//     evict pod as it would violate the pod's disruption budget.", with a
//     DisruptionBudget cause.
//
// The controllers then run (settle): a Deployment's pod evicted is
// replaced and scheduled before it returns. a.mu is held.
func (a *API) evictLocked(c *cluster, ns, name string) error {
	defer a.settle(c)
	o, ok := c.objects(podRes)[ns+"/"+name]
	if !ok {
		return apierrors.NewNotFound(podRes.gr, name)
	}
	pod := o.(*corev1.Pod)
	if ph := pod.Status.Phase; ph == corev1.PodSucceeded || ph == corev1.PodFailed || ph == corev1.PodPending {
		_, err := a.deleteObj(c, podRes, ns, name)
		return err
	}
	var budgets []*policyv1.PodDisruptionBudget
	for _, b := range c.objects(pdbRes) {
		pdb := a.view(c, pdbRes, b).(*policyv1.PodDisruptionBudget)
		for _, p := range a.pdbPods(c, pdb) {
			if p == pod {
				budgets = append(budgets, pdb)
			}
		}
	}
	if len(budgets) > 1 {
		return apierrors.NewInternalError(fmt.Errorf("This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."))
	}
	if len(budgets) == 1 {
		pdb := budgets[0]
		unhealthyOK := !podReady(pod) && (pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy ||
			(pdb.Spec.UnhealthyPodEvictionPolicy != nil && *pdb.Spec.UnhealthyPodEvictionPolicy == policyv1.AlwaysAllow))
		if !unhealthyOK && pdb.Status.DisruptionsAllowed <= 0 {
			err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
			err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause,
				Message: fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy)})
			return err
		}
		if !unhealthyOK {
			a.disrupted(c, pdb, pod.Name)
		}
	}
	_, err := a.deleteObj(c, podRes, ns, name)
	return err
}

// disrupted records an evicted pod in its budget's status.disruptedPods,
// as checkAndDecrement does (a write of the PDB). a.mu is held.
func (a *API) disrupted(c *cluster, pdb *policyv1.PodDisruptionBudget, pod string) {
	stored := c.objects(pdbRes)[key(pdb)].DeepCopyObject().(*policyv1.PodDisruptionBudget)
	if stored.Status.DisruptedPods == nil {
		stored.Status.DisruptedPods = map[string]metav1.Time{}
	}
	stored.Status.DisruptedPods[pod] = metav1.Now()
	stored.ResourceVersion = ""
	_, _ = a.updateObj(c, pdbRes, stored, false)
}

// replaced drops one evicted pod from each budget a new pod falls under:
// the new pod is its replacement. a.mu is held.
func (a *API) replaced(c *cluster, pod *corev1.Pod) {
	for _, o := range c.objects(pdbRes) {
		pdb := o.(*policyv1.PodDisruptionBudget)
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || pdb.Namespace != pod.Namespace || !sel.Matches(labels.Set(pod.Labels)) || len(pdb.Status.DisruptedPods) == 0 {
			continue
		}
		stored := pdb.DeepCopy()
		oldest := ""
		for name, at := range stored.Status.DisruptedPods {
			if oldest == "" || at.Before(ptr(stored.Status.DisruptedPods[oldest])) {
				oldest = name
			}
		}
		delete(stored.Status.DisruptedPods, oldest)
		stored.ResourceVersion = ""
		_, _ = a.updateObj(c, pdbRes, stored, false)
	}
}

func ptr[T any](v T) *T { return &v }

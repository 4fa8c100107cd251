package kube_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestEvictionRules: the eviction registry's other answers: a Pending pod
// goes whatever its budget, a pod under two budgets is 500, a missing pod
// 404, a maxUnavailable budget allows that many.
func TestEvictionRules(t *testing.T) {
	ctx := context.Background()
	api, cs := serveCore(t)
	for _, p := range []struct {
		name, app string
		ready     bool
	}{{"pending", "a", false}, {"a1", "a", true}, {"b1", "b", true}, {"b2", "b", true}, {"c1", "c", true}} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: "ns", Labels: map[string]string{"app": p.app}}}
		if p.name == "pending" {
			pod.Status.Phase = corev1.PodPending
		}
		if _, err := api.SetPod("c1", pod); err != nil {
			t.Fatal(err)
		}
		if p.ready {
			_ = api.SetPodReady("c1", "ns", p.name, true)
		}
	}
	zero, one := intstr.FromInt32(0), intstr.FromString("50%")
	for _, b := range []struct {
		name, app string
		max       *intstr.IntOrString
	}{{"a", "a", &zero}, {"b", "b", &one}, {"c", "c", &zero}, {"c-too", "c", &zero}} {
		pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: b.name},
			Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: b.max, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": b.app}}}}
		if _, err := cs.PolicyV1().PodDisruptionBudgets("ns").Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		pod   string
		check func(error) bool
	}{
		{"pending", func(err error) bool { return err == nil }},
		{"a1", apierrors.IsTooManyRequests},
		{"b1", func(err error) bool { return err == nil }},
		{"b2", apierrors.IsTooManyRequests},
		{"c1", apierrors.IsInternalError},
		{"none", apierrors.IsNotFound},
	} {
		err := cs.PolicyV1().Evictions("ns").Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: tc.pod, Namespace: "ns"}})
		if !tc.check(err) {
			t.Fatalf("%s: %v", tc.pod, err)
		}
	}
	// b1's replacement, once Ready, gives the budget back its disruption.
	_, _ = api.SetPod("c1", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b3", Namespace: "ns", Labels: map[string]string{"app": "b"}}})
	_ = api.SetPodReady("c1", "ns", "b3", true)
	if err := cs.PolicyV1().Evictions("ns").Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "b2", Namespace: "ns"}}); err != nil {
		t.Fatal(err)
	}
}

package kube_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestKubectlDrainDeployment: kubectl get deploy prints the Deployment's
// Table, and kubectl drain of a node running two of its six pods under a
// budget of minAvailable 5 ends with the pods moved to the other nodes of
// the pool: each eviction's replacement is placed and Ready at once.
func TestKubectlDrainDeployment(t *testing.T) {
	ctx := context.Background()
	k := findKubectl(t)
	api, cs, _, _ := serveKubectl(t, k)
	for _, n := range []string{"a1", "a2", "a3"} {
		addNode(t, api, n, map[string]string{"pool": "a"})
	}
	addNode(t, api, "b1", map[string]string{"pool": "b"})
	create(t, cs, web(6, func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"pool": "a"} }))
	five := intstr.FromInt32(5)
	if _, err := cs.PolicyV1().PodDisruptionBudgets("shop").Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &five, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	head, rows := table(k.run("get", "deploy", "-A", "-o", "wide"))
	if head != "NAMESPACE NAME READY UP-TO-DATE AVAILABLE AGE CONTAINERS IMAGES SELECTOR" || len(rows) != 1 ||
		!slices.Equal(slices.Delete(rows[0], 5, 6), []string{"shop", "web", "6/6", "6", "6", "web", "nginx", "app=web"}) {
		t.Fatalf("get deploy -A -o wide: %q %q", head, rows)
	}
	out := k.run("drain", "a1", "--ignore-daemonsets", "--timeout=60s")
	if strings.Count(out, "evicted") != 2 {
		t.Fatalf("drain:\n%s", out)
	}
	running, other := placed(t, cs)
	if want := map[string]int{"a2": 3, "a3": 3}; !maps.Equal(running, want) || len(other) != 0 {
		t.Fatalf("running %v, others %v", running, other)
	}
	if _, rows := table(k.run("get", "deploy", "web", "-n", "shop")); len(rows) != 1 || rows[0][1] != "6/6" {
		t.Fatalf("get deploy after the drain: %q", rows)
	}
}

// TestKubectlScale: kubectl scale sets a Deployment's replicas through its
// scale subresource, and client-go's GetScale reads it back.
func TestKubectlScale(t *testing.T) {
	k := findKubectl(t)
	api, cs, _, _ := serveKubectl(t, k)
	addNode(t, api, "a1", nil)
	create(t, cs, web(3))
	if out := k.run("scale", "deployment/web", "-n", "shop", "--replicas=1"); !strings.Contains(out, "scaled") {
		t.Fatalf("scale: %s", out)
	}
	sc, err := cs.AppsV1().Deployments("shop").GetScale(context.Background(), "web", metav1.GetOptions{})
	if err != nil || sc.Spec.Replicas != 1 || sc.Status.Replicas != 1 || sc.Status.Selector != "app=web" {
		t.Fatalf("scale: %+v, %v", sc, err)
	}
	if running, _ := placed(t, cs); running["a1"] != 1 {
		t.Fatalf("running %v", running)
	}
	sc.Spec.Replicas = 4
	if _, err := cs.AppsV1().Deployments("shop").UpdateScale(context.Background(), "web", sc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if running, _ := placed(t, cs); running["a1"] != 4 {
		t.Fatalf("running %v", running)
	}
}

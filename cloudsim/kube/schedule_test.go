package kube_test

import (
	"context"
	"maps"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/kpool/kpool/cloudsim/kube"
)

// TestNodeGoneMovesPods: a node deleted (by the cloud's emulator, through
// the API, or by a pool sync that no longer has it) takes its pods with
// it (the pod GC), and the Deployment's replacements land on the nodes
// left.
func TestNodeGoneMovesPods(t *testing.T) {
	for _, tc := range []struct {
		name string
		gone func(t *testing.T, api *kube.API, cs kubernetes.Interface)
	}{
		{"DeleteNode", func(t *testing.T, api *kube.API, _ kubernetes.Interface) {
			if err := api.DeleteNode("c1", "a1"); err != nil {
				t.Fatal(err)
			}
		}},
		{"API DELETE", func(t *testing.T, _ *kube.API, cs kubernetes.Interface) {
			if err := cs.CoreV1().Nodes().Delete(context.Background(), "a1", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}},
		{"SyncNodes", func(_ *testing.T, api *kube.API, _ kubernetes.Interface) {
			api.SyncNodes("c1", "pool", "a", []kube.NodeSpec{{Name: "a2", Labels: map[string]string{"pool": "a"}, Ready: true},
				{Name: "a3", Labels: map[string]string{"pool": "a"}, Ready: true}}, kube.Propagate)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api, cs := serveCore(t)
			api.SyncNodes("c1", "pool", "a", []kube.NodeSpec{{Name: "a1", Labels: map[string]string{"pool": "a"}, Ready: true},
				{Name: "a2", Labels: map[string]string{"pool": "a"}, Ready: true}, {Name: "a3", Labels: map[string]string{"pool": "a"}, Ready: true}}, kube.Propagate)
			create(t, cs, web(6, func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"pool": "a"} }))
			tc.gone(t, api, cs)
			running, other := placed(t, cs)
			if want := map[string]int{"a2": 3, "a3": 3}; !maps.Equal(running, want) || len(other) != 0 {
				t.Fatalf("running %v, others %v", running, other)
			}
		})
	}
}

// TestUnschedulable: a pod no node takes stays Pending with the
// scheduler's PodScheduled condition and message, and is placed once a
// node that fits it appears.
func TestUnschedulable(t *testing.T) {
	api, cs := serveCore(t)
	create(t, cs, web(2, func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"pool": "b"} }))
	pending(t, cs, "no nodes available to schedule pods")
	addNode(t, api, "a1", map[string]string{"pool": "a"})
	addNode(t, api, "a2", map[string]string{"pool": "a"})
	pending(t, cs, "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. "+
		"preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
	addNode(t, api, "b1", map[string]string{"pool": "b"})
	running, other := placed(t, cs)
	if want := map[string]int{"b1": 2}; !maps.Equal(running, want) || len(other) != 0 {
		t.Fatalf("running %v, others %v", running, other)
	}
}

// pending checks that every pod of app=web is Pending, unscheduled, with
// the message.
func pending(t *testing.T, cs kubernetes.Interface, msg string) {
	t.Helper()
	running, other := placed(t, cs)
	if len(running) != 0 || len(other) == 0 {
		t.Fatalf("running %v, others %v", running, other)
	}
	for _, p := range other {
		var cond corev1.PodCondition
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled {
				cond = c
			}
		}
		if p.Status.Phase != corev1.PodPending || p.Spec.NodeName != "" || cond.Status != corev1.ConditionFalse ||
			cond.Reason != corev1.PodReasonUnschedulable || cond.Message != msg {
			t.Fatalf("%s: %s on %q, %+v", p.Name, p.Status.Phase, p.Spec.NodeName, cond)
		}
	}
}

// TestFilters: the scheduler's filters, each on one node: taints of
// effect NoSchedule or NoExecute need a toleration (PreferNoSchedule does
// not), a cordoned or NotReady node takes no pod, and required node
// affinity is matched like the nodeSelector.
func TestFilters(t *testing.T) {
	gpu := corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	tolerate := func(s *corev1.PodSpec) {
		s.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu"}}
	}
	affinity := func(op corev1.NodeSelectorOperator) func(*corev1.PodSpec) {
		return func(s *corev1.PodSpec) {
			s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: op, Values: []string{"z1"}}}}}}}}
		}
	}
	const taintMsg = "0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
	for _, tc := range []struct {
		name   string
		node   func(*corev1.Node)
		pod    func(*corev1.PodSpec)
		reason string // "" when the pod runs
	}{
		{"NoSchedule taint", func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{gpu} }, nil, taintMsg},
		{"NoSchedule taint tolerated", func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{gpu} }, tolerate, ""},
		{"NoExecute taint", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoExecute}}
		}, nil,
			"0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."},
		{"PreferNoSchedule taint", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectPreferNoSchedule}}
		}, nil, ""},
		{"cordoned", func(n *corev1.Node) { n.Spec.Unschedulable = true }, nil,
			"0/1 nodes are available: 1 node(s) were unschedulable. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."},
		{"NotReady", func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }, nil,
			"0/1 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."},
		{"node affinity In", nil, affinity(corev1.NodeSelectorOpIn), ""},
		{"node affinity NotIn", nil, affinity(corev1.NodeSelectorOpNotIn),
			"0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api, cs := serveCore(t)
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"zone": "z1"}},
				Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
			if tc.node != nil {
				tc.node(n)
			}
			if _, err := api.SetNode("c1", n); err != nil {
				t.Fatal(err)
			}
			d := web(1)
			if tc.pod != nil {
				tc.pod(&d.Spec.Template.Spec)
			}
			create(t, cs, d)
			if tc.reason != "" {
				pending(t, cs, tc.reason)
				return
			}
			if running, other := placed(t, cs); running["n1"] != 1 || len(other) != 0 {
				t.Fatalf("running %v, others %v", running, other)
			}
		})
	}
}

// TestDeploymentVerbs: scaling down deletes the pods not Ready first,
// then the newest; PATCH, watch, a list of all namespaces and DELETE are
// served, and a Deployment deleted takes its pods.
func TestDeploymentVerbs(t *testing.T) {
	ctx := context.Background()
	api, cs := serveCore(t)
	addNode(t, api, "a1", nil)
	addNode(t, api, "a2", nil)
	create(t, cs, web(6))
	deps := cs.AppsV1().Deployments("shop")
	w, err := deps.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if ev := <-w.ResultChan(); ev.Type != watch.Added {
		t.Fatalf("first event %v", ev.Type)
	}
	pods, _ := cs.CoreV1().Pods("shop").List(ctx, metav1.ListOptions{})
	notReady := pods.Items[0].Name
	if err := api.SetPodReady("c1", "shop", notReady, false); err != nil {
		t.Fatal(err)
	}
	d, err := deps.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{})
	if err != nil || d.Generation != 2 {
		t.Fatalf("patch: %v, generation %d", err, d.Generation)
	}
	running, other := placed(t, cs)
	if total(running) != 2 || len(other) != 0 {
		t.Fatalf("after scale down: running %v, others %v", running, other)
	}
	if _, err := cs.CoreV1().Pods("shop").Get(ctx, notReady, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the pod not Ready is still there: %v", err)
	}
	for ev := range w.ResultChan() {
		if d := ev.Object.(*appsv1.Deployment); d.Status.Replicas == 2 && d.Status.ObservedGeneration == 2 {
			break
		}
	}
	if all, err := cs.AppsV1().Deployments("").List(ctx, metav1.ListOptions{LabelSelector: "!none"}); err != nil || len(all.Items) != 1 {
		t.Fatalf("all namespaces: %v, %v", all, err)
	}
	if err := deps.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if running, other := placed(t, cs); len(running) != 0 || len(other) != 0 {
		t.Fatalf("after delete: running %v, others %v", running, other)
	}
}

// TestSurgeNodeTakesPods: a node added to the pool (a surge) and the old
// node cordoned and drained: the evicted pods' replacements go to the new
// node first (it has the fewest of the Deployment's pods), and the old
// node's removal from the pool then moves nothing.
func TestSurgeNodeTakesPods(t *testing.T) {
	ctx := context.Background()
	api, cs := serveCore(t)
	pool := func(names ...string) {
		var specs []kube.NodeSpec
		for _, n := range names {
			specs = append(specs, kube.NodeSpec{Name: n, Labels: map[string]string{"pool": "a"}, Ready: true})
		}
		api.SyncNodes("c1", "pool", "a", specs, kube.Propagate)
	}
	pool("a1", "a2", "a3")
	create(t, cs, web(6, func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"pool": "a"} }))
	pool("a1", "a2", "a3", "a4")
	if _, err := cs.CoreV1().Nodes().Patch(ctx, "a1", types.MergePatchType, []byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	pods, _ := cs.CoreV1().Pods("shop").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=a1"})
	for _, p := range pods.Items {
		if err := cs.PolicyV1().Evictions("shop").Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: "shop"}}); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]int{"a2": 2, "a3": 2, "a4": 2}
	if running, other := placed(t, cs); !maps.Equal(running, want) || len(other) != 0 {
		t.Fatalf("after the drain: running %v, others %v", running, other)
	}
	pool("a2", "a3", "a4")
	if running, other := placed(t, cs); !maps.Equal(running, want) || len(other) != 0 {
		t.Fatalf("after a1 left the pool: running %v, others %v", running, other)
	}
}

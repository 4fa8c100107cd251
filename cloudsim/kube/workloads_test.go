package kube_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/kpool/kpool/cloudsim/kube"
)

// addNode makes a Ready node with labels and taints, as its kubelet
// registers it.
func addNode(t *testing.T, api *kube.API, name string, labels map[string]string, taints ...corev1.Taint) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	if _, err := api.SetNode("c1", n); err != nil {
		t.Fatal(err)
	}
}

// web is a Deployment of app=web in namespace shop; edit changes its pod
// template's spec.
func web(replicas int32, edit ...func(*corev1.PodSpec)) *appsv1.Deployment {
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}}}}
	for _, e := range edit {
		e(&d.Spec.Template.Spec)
	}
	return d
}

func create(t *testing.T, cs kubernetes.Interface, d *appsv1.Deployment) {
	t.Helper()
	if _, err := cs.AppsV1().Deployments(d.Namespace).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// placed lists the pods of app=web through the API: the Running and Ready
// ones by node, and the others (Pending) by name.
func placed(t *testing.T, cs kubernetes.Interface) (map[string]int, []corev1.Pod) {
	t.Helper()
	list, err := cs.CoreV1().Pods("shop").List(context.Background(), metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	running := map[string]int{}
	var other []corev1.Pod
	for _, p := range list.Items {
		if p.Status.Phase == corev1.PodRunning && podIsReady(&p) {
			running[p.Spec.NodeName]++
		} else {
			other = append(other, p)
		}
	}
	return running, other
}

func podIsReady(p *corev1.Pod) bool {
	return slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
		return c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
	})
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestDeploymentSpread: a Deployment's pods are made from its template,
// owned by it, and spread over the nodes its nodeSelector matches; its
// status counts them; kubectl get deploy's Table of it says 6/6.
func TestDeploymentSpread(t *testing.T) {
	ctx := context.Background()
	api, cs := serveCore(t)
	for _, n := range []string{"a1", "a2", "a3"} {
		addNode(t, api, n, map[string]string{"pool": "a"})
	}
	addNode(t, api, "b1", map[string]string{"pool": "b"})
	create(t, cs, web(6, func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"pool": "a"} }))
	running, other := placed(t, cs)
	if want := map[string]int{"a1": 2, "a2": 2, "a3": 2}; !maps.Equal(running, want) || len(other) != 0 {
		t.Fatalf("running %v, others %v", running, other)
	}
	d, err := cs.AppsV1().Deployments("shop").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st := d.Status; st.Replicas != 6 || st.ReadyReplicas != 6 || st.AvailableReplicas != 6 || st.UpdatedReplicas != 6 ||
		st.ObservedGeneration != d.Generation || len(st.Conditions) != 1 || st.Conditions[0].Status != corev1.ConditionTrue {
		t.Fatalf("status %+v", st)
	}
	raw, err := cs.AppsV1().RESTClient().Get().Namespace("shop").Resource("deployments").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
	var table metav1.Table
	if err != nil || json.Unmarshal(raw, &table) != nil || len(table.Rows) != 1 || len(table.ColumnDefinitions) != 8 ||
		fmt.Sprint(table.Rows[0].Cells[:4]) != "[web 6/6 6 6]" || fmt.Sprint(table.Rows[0].Cells[5:]) != "[web nginx app=web]" {
		t.Fatalf("table: %s, %v", raw, err)
	}
	pods, _ := cs.CoreV1().Pods("shop").List(ctx, metav1.ListOptions{})
	for _, p := range pods.Items {
		ref := metav1.GetControllerOf(&p)
		suffix, _ := strings.CutPrefix(p.Name, "web-")
		if ref == nil || ref.Kind != "Deployment" || ref.UID != d.UID || len(suffix) != 5 || p.Spec.SchedulerName != corev1.DefaultSchedulerName {
			t.Fatalf("pod %s: owner %+v, scheduler %q", p.Name, ref, p.Spec.SchedulerName)
		}
	}
}

// sampler watches the pods of app=web from before a test's steps and
// keeps the fewest Running and Ready it ever saw, event by event.
type sampler struct {
	fewest int
	done   chan struct{}
}

func sample(t *testing.T, cs kubernetes.Interface) *sampler {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	list, err := cs.CoreV1().Pods("shop").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cs.CoreV1().Pods("shop").Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	pods := map[string]bool{}
	for _, p := range list.Items {
		pods[p.Name] = p.Labels["app"] == "web" && p.Status.Phase == corev1.PodRunning && podIsReady(&p)
	}
	s := &sampler{fewest: count(pods), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				return
			}
			if p.Name == "sentinel" {
				w.Stop()
				return
			}
			pods[p.Name] = ev.Type != "DELETED" && p.Labels["app"] == "web" && p.Status.Phase == corev1.PodRunning && podIsReady(p)
			s.fewest = min(s.fewest, count(pods))
		}
	}()
	return s
}

func count(m map[string]bool) int {
	n := 0
	for _, v := range m {
		if v {
			n++
		}
	}
	return n
}

// stop makes a last write the watch sees and waits for the sampler to
// read up to it.
func (s *sampler) stop(t *testing.T, api *kube.API) int {
	t.Helper()
	if _, err := api.SetPod("c1", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "sentinel", Namespace: "shop"},
		Spec: corev1.PodSpec{SchedulerName: "none"}}); err != nil {
		t.Fatal(err)
	}
	<-s.done
	return s.fewest
}

// TestDrainUnderBudget: with a Deployment of 6 and a budget of
// minAvailable 5, cordoning a node and evicting its pods one by one moves
// them to the other nodes; the budget refuses the second eviction while
// the first one's replacement is not Ready (a readiness gate not yet
// True), and never, event by event or after each step, are fewer than 5
// pods Running and Ready.
func TestDrainUnderBudget(t *testing.T) {
	for _, tc := range []struct {
		name  string
		gated bool
	}{{"replacements Ready at once", false}, {"replacements held by a readiness gate", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			api, cs := serveCore(t)
			for _, n := range []string{"a1", "a2", "a3"} {
				addNode(t, api, n, map[string]string{"pool": "a"})
			}
			d := web(6, func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"pool": "a"} })
			if tc.gated {
				d.Spec.Template.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/warm"}}
			}
			create(t, cs, d)
			if tc.gated {
				warmAll(t, cs)
			}
			five := intstr.FromInt32(5)
			if _, err := cs.PolicyV1().PodDisruptionBudgets("shop").Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web"},
				Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &five, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}},
				metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			s := sample(t, cs)
			check := func(step string) {
				t.Helper()
				if running, _ := placed(t, cs); total(running) < 5 {
					t.Fatalf("%s: %v Running and Ready", step, running)
				}
			}
			if _, err := cs.CoreV1().Nodes().Patch(ctx, "a1", types.StrategicMergePatchType, []byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			check("cordon")
			victims, _ := cs.CoreV1().Pods("shop").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=a1"})
			if len(victims.Items) != 2 {
				t.Fatalf("a1 has %d pods", len(victims.Items))
			}
			evict := func(name string) error {
				return cs.PolicyV1().Evictions("shop").Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"}})
			}
			if err := evict(victims.Items[0].Name); err != nil {
				t.Fatal(err)
			}
			check("first eviction")
			if tc.gated {
				if err := evict(victims.Items[1].Name); !apierrors.IsTooManyRequests(err) {
					t.Fatalf("second eviction before the replacement is Ready: %v", err)
				}
				check("second eviction refused")
				warmAll(t, cs)
				check("replacement Ready")
			}
			if err := evict(victims.Items[1].Name); err != nil {
				t.Fatal(err)
			}
			check("second eviction")
			if tc.gated {
				warmAll(t, cs)
			}
			running, other := placed(t, cs)
			if want := map[string]int{"a2": 3, "a3": 3}; !maps.Equal(running, want) || len(other) != 0 {
				t.Fatalf("running %v, others %v", running, other)
			}
			if fewest := s.stop(t, api); fewest < 5 {
				t.Fatalf("the watch saw %d pods Running and Ready", fewest)
			}
		})
	}
}

// warmAll sets the readiness gate's condition True on every pod that has
// it False or missing, through the status subresource, as the component
// owning the gate would.
func warmAll(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	pods, err := cs.CoreV1().Pods("shop").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if podIsReady(&p) || p.Spec.NodeName == "" {
			continue
		}
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: "example.com/warm", Status: corev1.ConditionTrue})
		if _, err := cs.CoreV1().Pods("shop").UpdateStatus(ctx, &p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, other := placed(t, cs); len(other) != 0 {
		t.Fatalf("not Ready once warm: %+v", other)
	}
}

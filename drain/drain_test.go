package drain_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/kpool/kpool/drain"
)

var start = time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)

// shop is a cluster with node "old" holding web-1..3 (a ReplicaSet's,
// under PDB "web" minAvailable 2) and a DaemonSet's pod, and an empty
// node "new".
func shop(t *testing.T) (cluster, kubernetes.Interface) {
	t.Helper()
	api, cs := serve(t)
	c := cluster{t: t, api: api}
	c.node("old")
	c.node("new")
	for _, name := range []string{"web-1", "web-2", "web-3"} {
		c.pod(name, "old", "web", "ReplicaSet")
	}
	c.pod("logs-old", "old", "logs", "DaemonSet")
	two := intstr.FromInt32(2)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &two, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	if _, err := cs.PolicyV1().PodDisruptionBudgets("shop").Create(context.Background(), pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return c, cs
}

// step runs one step on node "old" and fails the test on an error.
func step(t *testing.T, d drain.Drainer, cs kubernetes.Interface, now time.Time) drain.Progress {
	t.Helper()
	return stepOn(t, d, cs, "old", now)
}

func stepOn(t *testing.T, d drain.Drainer, cs kubernetes.Interface, node string, now time.Time) drain.Progress {
	t.Helper()
	p, err := d.Step(context.Background(), cs, []string{node}, start, now)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func states(p drain.Progress) map[drain.State]int {
	out := map[drain.State]int{}
	for _, n := range p.Nodes {
		for _, pod := range n.Left {
			out[pod.State]++
		}
	}
	return out
}

// TestDrainHonoursBudget: the budget lets one web pod go at a time; the
// others are reported blocked by "web" (the 429's cause) until a
// replacement is Ready elsewhere; the DaemonSet's pod stays; the drain ends
// done, having never broken the budget.
func TestDrainHonoursBudget(t *testing.T) {
	c, cs := shop(t)
	ctx := context.Background()
	d := drain.Drainer{Skip: drain.SkipKubectl, MaxInFlight: 3}
	st := func(now time.Time) drain.Progress { // a step, after which the budget still holds
		t.Helper()
		p := stepOn(t, d, cs, "old", now)
		if n := readyWeb(t, cs); n < 2 {
			t.Fatalf("%d web pods ready after the step at %v: %+v", n, now, p)
		}
		return p
	}
	p := st(start)
	if len(p.Evicted) != 1 || states(p)[drain.Blocked] != 2 || p.Done || !slices.Equal(p.Nodes[0].Skipped, []string{"shop/logs-old"}) {
		t.Fatalf("first step: %+v", p)
	}
	if b := p.Blocked()["web"]; len(b) != 2 || slices.Contains(b, p.Evicted[0]) {
		t.Fatalf("blocked by web: %v (evicted %v)", b, p.Evicted)
	}
	if n, err := cs.CoreV1().Nodes().Get(ctx, "old", metav1.GetOptions{}); err != nil || !n.Spec.Unschedulable {
		t.Fatalf("not cordoned: %v", err)
	}
	if p = st(start.Add(time.Minute)); len(p.Evicted) != 0 || states(p)[drain.Blocked] != 2 {
		t.Fatalf("no replacement yet: %+v", p)
	}
	for i, name := range []string{"web-4", "web-5"} {
		c.pod(name, "new", "web", "ReplicaSet")
		if p = st(start.Add(time.Duration(2+i) * time.Minute)); len(p.Evicted) != 1 || states(p)[drain.Blocked] != 1-i {
			t.Fatalf("after %s: %+v", name, p)
		}
	}
	if p = st(start.Add(5 * time.Minute)); !p.Done || len(p.Nodes[0].Left) != 0 {
		t.Fatalf("end: %+v", p)
	}
	left, err := cs.CoreV1().Pods("shop").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=old"})
	if err != nil || len(left.Items) != 1 || left.Items[0].Name != "logs-old" {
		t.Fatalf("left on old: %+v, %v", left, err)
	}
}

// readyWeb counts the web pods Ready and not being deleted: what the
// budget keeps at 2 or more.
func readyWeb(t *testing.T, cs kubernetes.Interface) int {
	t.Helper()
	list, err := cs.CoreV1().Pods("shop").List(context.Background(), metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range list.Items {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && p.DeletionTimestamp == nil {
				n++
			}
		}
	}
	return n
}

// TestStuckPods: what each OnStuck does with the two pods the budget
// blocks, before and after the 5-minute timeout.
func TestStuckPods(t *testing.T) {
	for _, tc := range []struct {
		name        string
		on          drain.OnStuck
		at          time.Duration
		deleted     int
		stopped     bool
		blockedLeft int
	}{
		{"wait past timeout", drain.Wait, 10 * time.Minute, 0, false, 2},
		{"force before timeout", drain.Force, 4 * time.Minute, 0, false, 2},
		{"force at timeout", drain.Force, 5 * time.Minute, 2, false, 0},
		{"stop before timeout", drain.Stop, 4 * time.Minute, 0, false, 2},
		{"stop at timeout", drain.Stop, 5 * time.Minute, 0, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, cs := shop(t)
			d := drain.Drainer{Skip: drain.SkipKubectl, OnStuck: tc.on, Timeout: 5 * time.Minute, MaxInFlight: 3}
			step(t, d, cs, start)
			p := step(t, d, cs, start.Add(tc.at))
			if len(p.Deleted) != tc.deleted || p.Stopped != tc.stopped || states(p)[drain.Blocked] != tc.blockedLeft || p.Done {
				t.Fatalf("%+v", p)
			}
			if p = step(t, d, cs, start.Add(tc.at)); p.Done != (tc.deleted == 2) {
				t.Fatalf("next step: %+v", p)
			}
		})
	}
}

// TestCordon: cordoning twice writes once (the second sees it cordoned
// and leaves the node, resourceVersion and all), uncordon undoes it, and a
// missing node is NotFound.
func TestCordon(t *testing.T) {
	api, cs := serve(t)
	cluster{t: t, api: api}.node("n1")
	ctx := context.Background()
	get := func() *corev1.Node {
		n, err := cs.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if err := drain.Cordon(ctx, cs, "n1"); err != nil || !get().Spec.Unschedulable {
		t.Fatalf("cordon: %v", err)
	}
	rv := get().ResourceVersion
	if err := drain.Cordon(ctx, cs, "n1"); err != nil || get().ResourceVersion != rv {
		t.Fatalf("second cordon wrote: %v", err)
	}
	for range 2 {
		if err := drain.Uncordon(ctx, cs, "n1"); err != nil || get().Spec.Unschedulable {
			t.Fatalf("uncordon: %v", err)
		}
	}
	if err := drain.Cordon(ctx, cs, "nope"); !apierrors.IsNotFound(err) {
		t.Fatalf("missing node: %v", err)
	}
}

// TestSkip: which of a DaemonSet's pod, a static pod's mirror and a
// finished pod each Skip set leaves on the node; the others are evicted
// (no budget covers them).
func TestSkip(t *testing.T) {
	for _, tc := range []struct {
		skip    drain.Skip
		skipped []string
	}{
		{drain.SkipKubectl, []string{"shop/done", "shop/ds", "shop/mirror"}},
		{drain.SkipDaemonSets, []string{"shop/ds"}},
		{drain.SkipMirror | drain.SkipTerminal, []string{"shop/done", "shop/mirror"}},
		{0, nil},
	} {
		api, cs := serve(t)
		c := cluster{t: t, api: api}
		c.node("old")
		c.pod("ds", "old", "ds", "DaemonSet")
		c.pod("mirror", "old", "static", "Node", func(p *corev1.Pod) {
			p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "hash"}
		})
		c.pod("done", "old", "job", "Job", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })
		c.pod("web", "old", "web", "ReplicaSet")
		p := step(t, drain.Drainer{Skip: tc.skip, MaxInFlight: 10}, cs, start)
		if !slices.Equal(p.Nodes[0].Skipped, tc.skipped) || len(p.Evicted)+len(tc.skipped) != 4 {
			t.Fatalf("skip %b: %+v", tc.skip, p)
		}
	}
}

// TestInFlight: MaxInFlight bounds the evictions of a step, across nodes,
// and a pod still terminating takes a place; the rest wait Queued.
func TestInFlight(t *testing.T) {
	api, cs := serve(t)
	c := cluster{t: t, api: api}
	c.node("a")
	c.node("b")
	for _, n := range []string{"a1", "a2", "b1", "b2"} {
		c.pod(n, n[:1], "web", "ReplicaSet")
	}
	c.pod("a0", "a", "web", "ReplicaSet", func(p *corev1.Pod) {
		p.DeletionTimestamp = &metav1.Time{Time: start}
		p.Status.Phase = corev1.PodRunning
	})
	d := drain.Drainer{MaxInFlight: 3, ForgetAfter: time.Minute}
	p, err := d.Step(context.Background(), cs, []string{"a", "b"}, start, start)
	if err != nil || !slices.Equal(p.Evicted, []string{"shop/a1", "shop/a2"}) || states(p)[drain.Queued] != 2 || states(p)[drain.Terminating] != 3 {
		t.Fatalf("%+v, %v", p, err)
	}
	// Two minutes on, a0 (whose kubelet never confirmed its end) is
	// forgotten, and its place goes to b1 and b2 with the third.
	p, err = d.Step(context.Background(), cs, []string{"a", "b"}, start, start.Add(2*time.Minute))
	if err != nil || !slices.Equal(p.Evicted, []string{"shop/b1", "shop/b2"}) || !slices.Equal(p.Nodes[0].Skipped, []string{"shop/a0"}) {
		t.Fatalf("forgotten: %+v, %v", p, err)
	}
}

// TestGoneNode: a node whose Node object is gone is drained of the pods
// still bound to it (Gone), and then done; an error listing leaves the step
// not done.
func TestGoneNode(t *testing.T) {
	api, cs := serve(t)
	cluster{t: t, api: api}.pod("w1", "ghost", "web", "ReplicaSet")
	d := drain.Drainer{}
	p := stepOn(t, d, cs, "ghost", start)
	if !p.Nodes[0].Gone || !slices.Equal(p.Evicted, []string{"shop/w1"}) || p.Done {
		t.Fatalf("%+v", p)
	}
	if p = stepOn(t, d, cs, "ghost", start); !p.Done || len(p.Nodes[0].Left) != 0 {
		t.Fatalf("then: %+v", p)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if p, err := d.Step(ctx, cs, []string{"ghost"}, start, start); err == nil || p.Done {
		t.Fatalf("cancelled: %+v, %v", p, err)
	}
}

// TestTwoBudgets: a pod under two budgets is refused with 500 by the API
// server; the step reports it Stuck with the server's message, without
// failing, and Force deletes it after the timeout.
func TestTwoBudgets(t *testing.T) {
	c, cs := shop(t)
	ctx := context.Background()
	c.pod("api-1", "old", "api", "ReplicaSet")
	for _, name := range []string{"api", "api-too"} {
		one := intstr.FromInt32(1)
		pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"},
			Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}}}}
		if _, err := cs.PolicyV1().PodDisruptionBudgets("shop").Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	d := drain.Drainer{Skip: drain.SkipKubectl, OnStuck: drain.Force, Timeout: time.Minute, MaxInFlight: 4}
	p := step(t, d, cs, start)
	stuck := p.Nodes[0].Left[0]
	if stuck.Name != "api-1" || stuck.State != drain.Stuck || !strings.Contains(stuck.Message, "more than one PodDisruptionBudget") {
		t.Fatalf("%+v", p)
	}
	if p = step(t, d, cs, start.Add(time.Minute)); !slices.Contains(p.Deleted, "shop/api-1") {
		t.Fatalf("forced: %+v", p)
	}
}

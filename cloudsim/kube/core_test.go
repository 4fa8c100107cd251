package kube_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kpool/kpool/cloudsim/kube"
	"github.com/kpool/kpool/cloudsim/kube/kubetest"
)

// serveCore serves an API with cluster "c1" and returns client-go's
// clientset built from its kubeconfig.
func serveCore(t *testing.T) (*kube.API, kubernetes.Interface) {
	api, cs, _ := serveSeen(t)
	return api, cs
}

// serveSeen is serveCore that also reports the Content-Type of each
// request body the server gets.
func serveSeen(t *testing.T) (*kube.API, kubernetes.Interface, chan string) {
	t.Helper()
	seen := make(chan string, 100)
	s := kubetest.Serve(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if ct := r.Header.Get("Content-Type"); ct != "" {
				select {
				case seen <- ct:
				default:
				}
			}
			h.ServeHTTP(w, r)
		})
	})
	return s.API, s.Clientset(t, "c1"), seen
}

func node(name, pool string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"pool": pool}}}
}

// TestNodes: typed list with label and field selectors, get, strategic
// merge patch of labels, merge-patch cordon (status kept), delete.
func TestNodes(t *testing.T) {
	ctx := context.Background()
	api, cs := serveCore(t)
	nodes := cs.CoreV1().Nodes()
	for _, n := range []*corev1.Node{node("n1", "a"), node("n2", "a"), node("n3", "b")} {
		if _, err := api.SetNode("c1", n); err != nil {
			t.Fatal(err)
		}
	}
	if err := api.SetReady("c1", "n1", true); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ labels, fields string }{{"pool=a", ""}, {"", "metadata.name=n1"}, {"pool in (a)", "spec.unschedulable=false"}} {
		list, err := nodes.List(ctx, metav1.ListOptions{LabelSelector: tc.labels, FieldSelector: tc.fields})
		if err != nil || len(list.Items) == 0 || list.Items[0].Name != "n1" || list.ResourceVersion == "" {
			t.Fatalf("%+v: %+v, %v", tc, list, err)
		}
	}
	if _, err := nodes.List(ctx, metav1.ListOptions{FieldSelector: "spec.nope=1"}); !apierrors.IsBadRequest(err) {
		t.Fatalf("unknown field: %v", err)
	}
	if _, err := nodes.Patch(ctx, "n1", types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"kompox.dev/node-pool":"web"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := nodes.Patch(ctx, "n1", types.MergePatchType, []byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{})
	if err != nil || !got.Spec.Unschedulable || got.Labels["kompox.dev/node-pool"] != "web" || got.Labels["pool"] != "a" || len(got.Status.Conditions) != 1 {
		t.Fatalf("cordon: %+v, %v", got, err)
	}
	got.ResourceVersion = "1"
	if _, err := nodes.Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("stale update: %v", err)
	}
	if err := nodes.Delete(ctx, "n3", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := nodes.Get(ctx, "n3", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("deleted: %v", err)
	}
	if _, err := nodes.Create(ctx, node("n4", "b"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestInformer: a SharedInformerFactory's Node informer sees the
// emulator's adds, Ready changes and deletes.
func TestInformer(t *testing.T) {
	api, cs := serveCore(t)
	if _, err := api.SetNode("c1", node("n0", "a")); err != nil {
		t.Fatal(err)
	}
	added, updated, deleted := make(chan string, 10), make(chan string, 10), make(chan string, 10)
	f := informers.NewSharedInformerFactory(cs, 0)
	_, err := f.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { added <- o.(*corev1.Node).Name },
		UpdateFunc: func(_, o any) { updated <- o.(*corev1.Node).Name },
		DeleteFunc: func(o any) {
			if n, ok := o.(*corev1.Node); ok {
				deleted <- n.Name
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	f.Start(stop)
	f.WaitForCacheSync(stop)
	expect(t, added, "n0")
	if _, err := api.SetNode("c1", node("n1", "a")); err != nil {
		t.Fatal(err)
	}
	expect(t, added, "n1")
	if err := api.SetReady("c1", "n1", true); err != nil {
		t.Fatal(err)
	}
	expect(t, updated, "n1")
	if err := api.DeleteNode("c1", "n1"); err != nil {
		t.Fatal(err)
	}
	expect(t, deleted, "n1")
}

func expect(t *testing.T, ch chan string, want string) {
	t.Helper()
	select {
	case got := <-ch:
		if got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no event for %s", want)
	}
}

// TestWatch: a watch from a list's resourceVersion streams the later
// writes; one from a resourceVersion whose events are gone gets 410.
func TestWatch(t *testing.T) {
	ctx := context.Background()
	api, cs := serveCore(t)
	_, _ = api.SetNode("c1", node("n0", "c")) // a list of an empty store is at revision 0: a watch from "0" is from any
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, LabelSelector: "pool=a"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	_, _ = api.SetNode("c1", node("nb", "b"))
	_, _ = api.SetNode("c1", node("na", "a"))
	_ = api.DeleteNode("c1", "na")
	var got []watch.EventType
	for ev := range w.ResultChan() {
		if ev.Object.(*corev1.Node).Name != "na" {
			t.Fatalf("unselected %v", ev)
		}
		if got = append(got, ev.Type); len(got) == 2 {
			break
		}
	}
	if !slices.Equal(got, []watch.EventType{watch.Added, watch.Deleted}) {
		t.Fatal(got)
	}
	api.Compact("c1")
	old, err := cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Stop()
	ev := <-old.ResultChan()
	if err := apierrors.FromObject(ev.Object); ev.Type != watch.Error || !apierrors.IsResourceExpired(err) || apierrors.ReasonForError(err) != metav1.StatusReasonExpired {
		t.Fatalf("%v: %v", ev.Type, err)
	}
}

// TestEviction: an eviction that would break a PodDisruptionBudget is 429;
// once another pod is Ready it is allowed and the pod is gone.
func TestEviction(t *testing.T) {
	ctx := context.Background()
	api, cs, seen := serveSeen(t)
	pods := cs.CoreV1().Pods("web")
	for _, n := range []string{"p1", "p2"} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{"app": "web"}}, Spec: corev1.PodSpec{NodeName: "n1"}}
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// client-go's generated clients send built-in kinds in protobuf.
	if ct := <-seen; ct != "application/vnd.kubernetes.protobuf" {
		t.Fatalf("create sent %s", ct)
	}
	min1 := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &min1, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	if _, err := cs.PolicyV1().PodDisruptionBudgets("web").Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_ = api.SetPodReady("c1", "web", "p1", true)
	_ = api.SetPodReady("c1", "web", "p2", false)
	evict := func() error {
		return cs.PolicyV1().Evictions("web").Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "p1", Namespace: "web"}})
	}
	if err := evict(); !apierrors.IsTooManyRequests(err) || err.Error() != "Cannot evict pod as it would violate the pod's disruption budget." {
		t.Fatalf("over budget: %v", err)
	}
	got, err := cs.PolicyV1().PodDisruptionBudgets("web").Get(ctx, "web", metav1.GetOptions{})
	if err != nil || got.Status.CurrentHealthy != 1 || got.Status.DisruptionsAllowed != 0 || got.Status.ExpectedPods != 2 {
		t.Fatalf("pdb: %+v, %v", got.Status, err)
	}
	_ = api.SetPodReady("c1", "web", "p2", true)
	if err := evict(); err != nil {
		t.Fatal(err)
	}
	list, err := pods.List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=n1"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "p2" {
		t.Fatalf("after eviction: %+v, %v", list, err)
	}
}

// TestDiscovery: client-go's discovery client finds the served groups,
// resources, verbs and short names, and the server's version.
func TestDiscovery(t *testing.T) {
	_, cs := serveCore(t)
	v, err := cs.Discovery().ServerVersion()
	if err != nil || v.GitVersion == "" {
		t.Fatalf("version: %v, %v", v, err)
	}
	_, lists, err := cs.Discovery().ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]metav1.APIResource{}
	for _, l := range lists {
		for _, r := range l.APIResources {
			found[l.GroupVersion+"/"+r.Name] = r
		}
	}
	for _, want := range []struct{ key, short, verb string }{{"v1/nodes", "no", "watch"}, {"v1/pods", "po", "list"},
		{"v1/pods/eviction", "", "create"}, {"policy/v1/poddisruptionbudgets", "pdb", "get"}, {"apps/v1/deployments", "deploy", "update"}} {
		r, ok := found[want.key]
		if !ok || !slices.Contains(r.Verbs, want.verb) || (want.short != "" && !slices.Contains(r.ShortNames, want.short)) {
			t.Fatalf("%s: %+v", want.key, r)
		}
	}
}

// TestPatchTypes: each patch type client-go sends is applied; another
// media type is 415.
func TestPatchTypes(t *testing.T) {
	ctx := context.Background()
	api, cs := serveCore(t)
	if _, err := api.SetNode("c1", node("n1", "a")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		pt    types.PatchType
		body  string
		check func(error) bool
	}{
		{types.JSONPatchType, `[{"op":"add","path":"/metadata/labels/zone","value":"z1"}]`, func(err error) bool { return err == nil }},
		{types.MergePatchType, `{"metadata":{"labels":{"zone":null}}}`, func(err error) bool { return err == nil }},
		{types.StrategicMergePatchType, `{"metadata":{"resourceVersion":"1"},"spec":{"unschedulable":true}}`, apierrors.IsConflict},
		{types.ApplyYAMLPatchType, `{}`, apierrors.IsUnsupportedMediaType},
	} {
		t.Run(string(tc.pt), func(t *testing.T) {
			_, err := cs.CoreV1().Nodes().Patch(ctx, "n1", tc.pt, []byte(tc.body), metav1.PatchOptions{FieldManager: "test"})
			if !tc.check(err) {
				t.Fatal(err)
			}
		})
	}
	if n, _ := api.Node("c1", "n1"); n.Labels["zone"] != "" || n.Spec.Unschedulable {
		t.Fatalf("%+v", n)
	}
}

package kube_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kpool/kpool/cloudsim/kube"
)

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// TestSyncNodes: a cloud pool's nodes follow what the cloud has: created
// with its labels and the kubelet's, changed only in what the cloud
// changed (a label another client set, or a readiness it reported, stays),
// deleted when the cloud no longer has them; nodes of other pools are not
// touched.
func TestSyncNodes(t *testing.T) {
	api, cs := serveCore(t)
	ctx := context.Background()
	spec := func(name string, labels map[string]string) kube.NodeSpec {
		l := map[string]string{"cloud/pool": "web"}
		for k, v := range labels {
			l[k] = v
		}
		return kube.NodeSpec{Name: name, Labels: l, Ready: true, KubeletVersion: "v1.30.4", InternalIP: "10.0.0.1"}
	}
	list := func(sel string) []corev1.Node {
		t.Helper()
		l, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			t.Fatal(err)
		}
		return l.Items
	}
	api.SyncNodes("c1", "cloud/pool", "api", []kube.NodeSpec{{Name: "api-0", Labels: map[string]string{"cloud/pool": "api"}, Ready: true}}, kube.Propagate)
	api.SyncNodes("c1", "cloud/pool", "web", []kube.NodeSpec{spec("web-0", map[string]string{"team": "a"}), spec("web-1", map[string]string{"team": "a"})}, kube.Propagate)
	nodes := list("cloud/pool=web")
	if len(nodes) != 2 || nodes[0].Labels["team"] != "a" || nodes[0].Labels["kubernetes.io/hostname"] != "web-0" || !ready(&nodes[0]) ||
		nodes[0].Status.NodeInfo.KubeletVersion != "v1.30.4" {
		t.Fatalf("created: %+v", nodes)
	}

	// Another client labels a node and its kubelet goes NotReady.
	if _, err := cs.CoreV1().Nodes().Patch(ctx, "web-0", types.MergePatchType, []byte(`{"metadata":{"labels":{"mine":"x"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := api.SetReady("c1", "web-0", false); err != nil {
		t.Fatal(err)
	}
	// The cloud changes the pool's label and adds a node.
	api.SyncNodes("c1", "cloud/pool", "web", []kube.NodeSpec{spec("web-0", map[string]string{"team": "b"}), spec("web-1", map[string]string{"team": "b"}),
		spec("web-2", map[string]string{"team": "b"})}, kube.Propagate)
	n, _ := api.Node("c1", "web-0")
	if n.Labels["team"] != "b" || n.Labels["mine"] != "x" || ready(n) {
		t.Fatalf("after the cloud's change: labels %v, ready %v", n.Labels, ready(n))
	}
	if len(list("cloud/pool=web")) != 3 {
		t.Fatal("no third node")
	}

	// A cloud that labels new nodes only.
	api.SyncNodes("c1", "cloud/pool", "web", []kube.NodeSpec{spec("web-0", map[string]string{"team": "c"}), spec("web-3", map[string]string{"team": "c"})}, kube.AtCreate)
	n0, _ := api.Node("c1", "web-0")
	n3, _ := api.Node("c1", "web-3")
	if n0.Labels["team"] != "b" || n3.Labels["team"] != "c" {
		t.Fatalf("at create only: old node %v, new node %v", n0.Labels, n3.Labels)
	}
	if got := list("cloud/pool=web"); len(got) != 2 {
		t.Fatalf("scaled down to web-0 and web-3: %d nodes", len(got))
	}
	api.SyncNodes("c1", "cloud/pool", "web", nil, kube.Propagate)
	if len(list("cloud/pool=web")) != 0 || len(list("cloud/pool=api")) != 1 {
		t.Fatal("the pool's nodes stay, or another pool's went")
	}
}

// TestNodeStatus: the status subresource, as a kubelet reports through
// it: an update or patch of status changes the status alone.
func TestNodeStatus(t *testing.T) {
	api, cs := serveCore(t)
	ctx := context.Background()
	api.SyncNodes("c1", "p", "web", []kube.NodeSpec{{Name: "n", Labels: map[string]string{"p": "web"}, Ready: true}}, kube.Propagate)
	n, err := cs.CoreV1().Nodes().Get(ctx, "n", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Labels["ignored"] = "yes"
	for i := range n.Status.Conditions {
		n.Status.Conditions[i].Status = corev1.ConditionFalse
	}
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, _ := api.Node("c1", "n")
	if ready(got) || got.Labels["ignored"] != "" {
		t.Fatalf("after UpdateStatus: ready %v, labels %v", ready(got), got.Labels)
	}
	patch := `{"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady"}]},"metadata":{"labels":{"ignored":"yes"}}}`
	if _, err := cs.CoreV1().Nodes().Patch(ctx, "n", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	got, _ = api.Node("c1", "n")
	if !ready(got) || got.Labels["ignored"] != "" {
		t.Fatalf("after a status patch: ready %v, labels %v", ready(got), got.Labels)
	}
}

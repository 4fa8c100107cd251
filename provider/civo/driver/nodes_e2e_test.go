package driver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kpool/kpool"
	civosim "github.com/kpool/kpool/cloudsim/civo"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/service"
)

// TestE2ENodeTruth is issue 33's "done when" through the controllers on
// the demo Civo cluster's emulated Kubernetes API: the pool's status
// counts its nodes as Kubernetes has them and follows a scale; a node made
// NotReady over the wire (its status subresource, as a kubelet reports)
// makes the pool not Ready; a node stripped of its placement label gets it
// back, and the pool's NodeLabels condition says so; the controllers hold
// one watch of the cluster's nodes, whatever its number of pools.
func TestE2ENodeTruth(t *testing.T) {
	w := newCivoWorld(t)
	ctx := context.Background()
	create := func(name string, count int) *kpool.NodePool {
		spec := fmt.Sprintf(`{"platform":{"civo":{"size":"g4s.kube.small"}},"nodeCount":%d}`, count)
		p, err := w.Svc.CreateNodePool(w.Ctx(), service.NodePoolCreate{Name: name, ClusterID: w.Cluster.ID, Spec: json.RawMessage(spec)})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	web := create("web", 2)
	api := create("api", 1)
	nodesAre := func(p *kpool.NodePool, total, ready int) func() (bool, string) {
		return func() (bool, string) {
			got := w.Pool(p.ID).Status
			n := got.Nodes
			if n == nil || n.Total != total || n.Ready != ready {
				return false, fmt.Sprintf("%s: %s, nodes %+v", p.Name, got.Phase, n)
			}
			return true, ""
		}
	}
	w.WaitFor(time.Minute, nodesAre(web, 2, 2))
	w.WaitFor(time.Minute, nodesAre(api, 1, 1))
	w.settled(nil, web, api)

	// The pool's nodes in the emulated API, by the placement label.
	cs := w.kube(t)
	list := func(sel string) []corev1.Node {
		l, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			t.Fatal(err)
		}
		return l.Items
	}
	if n := list(provider.LabelPool + "=web"); len(n) != 2 {
		t.Fatalf("%d nodes labelled web, want 2", len(n))
	}

	if _, err := w.Svc.UpdateNodePool(w.Ctx(), web.ID, service.Update{Patch: true, Spec: json.RawMessage(`{"nodeCount":3}`)}); err != nil {
		t.Fatal(err)
	}
	w.WaitFor(time.Minute, nodesAre(web, 3, 3))
	if n := list(provider.LabelPool + "=web"); len(n) != 3 {
		t.Fatalf("after the scale: %d nodes labelled web, want 3", len(n))
	}

	// A kubelet reports NotReady.
	sick := list(provider.LabelPool + "=web")[0].Name
	notReady := `{"status":{"conditions":[{"type":"Ready","status":"False","reason":"KubeletNotReady"}]}}`
	if _, err := cs.CoreV1().Nodes().Patch(ctx, sick, types.StrategicMergePatchType, []byte(notReady), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	w.WaitFor(time.Minute, func() (bool, string) {
		got := w.Pool(web.ID).Status
		return got.Phase != kpool.PhaseReady && got.Nodes.Ready == 2, fmt.Sprintf("%s %s, nodes %+v", got.Phase, got.Message, got.Nodes)
	})
	ready := `{"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady"}]}}`
	if _, err := cs.CoreV1().Nodes().Patch(ctx, sick, types.StrategicMergePatchType, []byte(ready), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	w.settled(nil, web)

	// Someone strips the placement label.
	strip := fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, provider.LabelPool)
	if _, err := cs.CoreV1().Nodes().Patch(ctx, sick, types.MergePatchType, []byte(strip), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	w.WaitFor(time.Minute, func() (bool, string) {
		n, err := cs.CoreV1().Nodes().Get(ctx, sick, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return n.Labels[provider.LabelPool] == "web", fmt.Sprintf("labels %v", n.Labels)
	})
	w.WaitFor(time.Minute, func() (bool, string) {
		doc, err := w.Svc.NodePoolStatus(w.Ctx(), web.ID)
		if err != nil || len(doc.ControllerStatus) != 1 {
			return false, fmt.Sprint(doc, err)
		}
		r := doc.ControllerStatus[0]
		return r.Reason(kpool.ConditionNodeLabels) == "LabelsRepaired", r.Reason(kpool.ConditionNodeLabels) + " " + r.Message(kpool.ConditionNodeLabels)
	})

	// One watch, not one per pool. It is sampled until it is open: a
	// reflector re-watches after a watch ends (CI once saw 0 at the
	// instant between two), but never holds two.
	w.WaitFor(time.Minute, func() (bool, string) {
		got := w.sim.Kube().Watches(civosim.DemoClusterID)["nodes"]
		if got > 1 {
			t.Fatalf("%d watches of the cluster's nodes for 2 pools, want 1", got)
		}
		return got == 1, fmt.Sprintf("%d watches of the cluster's nodes", got)
	})
}

// kube is a client of the demo cluster's emulated Kubernetes API, from the
// kubeconfig the emulator hands people (its own token).
func (w *civoWorld) kube(t *testing.T) kubernetes.Interface {
	t.Helper()
	kc := w.sim.Kubeconfigs(w.Cluster.Spec.Endpoint)
	if len(kc) != 1 {
		t.Fatalf("%d kubeconfigs, want the demo cluster's", len(kc))
	}
	for _, k := range kc {
		cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(k))
		if err != nil {
			t.Fatal(err)
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	return nil
}

package reconcile_test

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	k8sfake "k8s.io/client-go/kubernetes/fake"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/kubeapi"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/service"
	"github.com/kpool/kpool/store/testdb"
)

// kubeDriver is the fake driver with a Kubernetes API: client-go's fake
// clientset stands for the cluster's API (the drivers' real access and the
// emulated API are proven by each cloud's tests), so that the controllers'
// logic runs on the fake clock.
type kubeDriver struct{ *fake.Driver }

func (kubeDriver) KubeAccess(context.Context, *kpool.Cluster) (*provider.KubeAccess, error) {
	return &provider.KubeAccess{Server: "https://127.0.0.1:1", Token: "t"}, nil
}

// kubeWorld is a world whose cluster's nodes are in cs.
func kubeWorld(t *testing.T) (*world, *k8sfake.Clientset, func(*reconcile.Config)) {
	w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
	w.drivers.Add(kubeDriver{w.drv})
	cs := k8sfake.NewClientset()
	return w, cs, func(c *reconcile.Config) {
		c.KubeClient = func(context.Context, *kpool.Cluster, kubeapi.Source) (kubernetes.Interface, error) { return cs, nil }
	}
}

// node is a node of an AKS pool as the cloud registers it.
func node(name, pool string, ready bool, labels map[string]string) *corev1.Node {
	l := map[string]string{"kubernetes.azure.com/agentpool": pool, corev1.LabelTopologyZone: "westeurope-1"}
	for k, v := range labels {
		l[k] = v
	}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}},
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.30.4"}}}
}

// TestNodeTruth: the pool's status counts its nodes as Kubernetes has
// them; a pool the cloud says is ready is not Ready while its nodes are
// not (Degraded once that lasts); a node that loses its placement label
// gets it back, and the repair is in the pool's conditions; one watch
// serves every pool of the cluster.
func TestNodeTruth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, cs, kube := kubeWorld(t)
		stop := w.start("a", kube)
		defer stop()
		ctx := context.Background()
		p := w.createPool("web", 2, "1")
		others := []*kpool.NodePool{w.createPool("api", 1, "1"), w.createPool("jobs", 1, "1")}

		// The cloud says Ready, Kubernetes has no node yet.
		w.until(5*time.Minute, func() (bool, string) {
			got := condition(w.report(p.ID), kpool.ConditionDegraded)
			return got == "True NodesNotReady", "Degraded " + got
		})
		if got := w.pool(p.ID).Status; got.Phase != kpool.PhaseDegraded || got.Nodes == nil || got.Nodes.Total != 0 {
			t.Fatalf("no nodes in Kubernetes: phase %s, nodes %+v", got.Phase, got.Nodes)
		}

		want := map[string]string{provider.LabelPool: "web", provider.LabelZone: "1"}
		for _, n := range []*corev1.Node{node("web-0", p.ProviderName, true, want), node("web-1", p.ProviderName, true, want)} {
			must(cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}))
		}
		w.until(time.Minute, w.ready(p.ID))
		n := w.pool(p.ID).Status.Nodes
		if n == nil || n.Total != 2 || n.Ready != 2 || n.ByZone["1"] != 2 || n.ByVersion["v1.30.4"] != 2 || n.Unlabelled != 0 {
			t.Fatalf("status.nodes %+v", n)
		}

		// A kubelet stops posting Ready.
		sick := node("web-1", p.ProviderName, false, want)
		must(cs.CoreV1().Nodes().Update(ctx, sick, metav1.UpdateOptions{}))
		w.until(w.resync(), func() (bool, string) {
			got := condition(w.report(p.ID), kpool.ConditionReady)
			return got == "False NodesNotReady", "Ready " + got
		})
		if n := w.pool(p.ID).Status.Nodes; n.Ready != 1 || n.Total != 2 {
			t.Fatalf("one node NotReady: %+v", n)
		}
		must(cs.CoreV1().Nodes().Update(ctx, node("web-1", p.ProviderName, true, want), metav1.UpdateOptions{}))
		w.until(w.resync(), w.ready(p.ID))

		// Someone strips the placement label: it is put back.
		must(cs.CoreV1().Nodes().Update(ctx, node("web-0", p.ProviderName, true, map[string]string{provider.LabelZone: "1"}), metav1.UpdateOptions{}))
		w.until(w.resync(), func() (bool, string) {
			n, _ := cs.CoreV1().Nodes().Get(ctx, "web-0", metav1.GetOptions{})
			return n.Labels[provider.LabelPool] == "web", "labels " + labelString(n.Labels)
		})
		w.until(w.resync(), func() (bool, string) {
			got := condition(w.report(p.ID), kpool.ConditionNodeLabels)
			return got == "True LabelsRepaired", "NodeLabels " + got
		})

		// The cluster asks for the guide's nodepool=<name> label too.
		if _, err := w.svc.UpdateCluster(w.ctx(), w.cluster.ID, service.Update{Patch: true, Spec: json.RawMessage(`{"nodeLabels":"guide"}`)}); err != nil {
			t.Fatal(err)
		}
		w.until(w.resync(), func() (bool, string) {
			n0, _ := cs.CoreV1().Nodes().Get(ctx, "web-0", metav1.GetOptions{})
			n1, _ := cs.CoreV1().Nodes().Get(ctx, "web-1", metav1.GetOptions{})
			return n0.Labels[kpool.GuidePoolLabel] == "web" && n1.Labels[kpool.GuidePoolLabel] == "web", "labels " + labelString(n0.Labels)
		})

		watches := 0
		for _, a := range cs.Actions() {
			if a.GetVerb() == "watch" && a.GetResource().Resource == "nodes" {
				watches++
			}
		}
		if watches != 1 {
			t.Fatalf("%d watches of the nodes for %d pools, want 1", watches, 1+len(others))
		}
	})
}

// resync is the longest a change waits for a pass.
func (w *world) resync() time.Duration { return time.Minute }

func labelString(m map[string]string) string {
	out := ""
	for k, v := range m {
		out += k + "=" + v + " "
	}
	return out
}

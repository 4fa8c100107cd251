package civo_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kpool/kpool/cloudsim/civo"
)

// kubeEnv is an env served on TLS with client-go built from the
// kubeconfig of the cluster GET.
type kubeEnv struct {
	*env
	cs  kubernetes.Interface
	srv *httptest.Server
}

func newKubeEnv(t *testing.T) *kubeEnv {
	e := newEnv(t)
	srv := httptest.NewUnstartedServer(e.emu)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	e.emu.SetCA(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	var c struct {
		KubeConfig string `json:"kubeconfig"`
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+clusterPath+"?region="+region, nil)
	req.Header.Set("Authorization", "bearer "+key)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	if got := e.emu.Kubeconfigs(srv.URL)["prod"]; got != c.KubeConfig {
		t.Fatalf("Kubeconfigs()[prod] is not the cluster GET's kubeconfig")
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(c.KubeConfig))
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &kubeEnv{env: e, cs: cs, srv: srv}
}

// nodes lists a pool's nodes by Civo's pool label, by name.
func (k *kubeEnv) nodes(pool string) []corev1.Node {
	k.t.Helper()
	l, err := k.cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: civo.PoolLabel + "=" + pool})
	if err != nil {
		k.t.Fatal(err)
	}
	return l.Items
}

// ready counts the Ready nodes of a list.
func ready(nodes []corev1.Node) int {
	n := 0
	for _, no := range nodes {
		for _, c := range no.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				n++
			}
		}
	}
	return n
}

func (k *kubeEnv) must(method, target, body string) {
	k.t.Helper()
	if a := k.do(method, target, key, body); a.status != http.StatusOK {
		k.t.Fatalf("%s %s: %d %s", method, target, a.status, a.body)
	}
}

// TestPoolNodes: a pool's nodes at the cluster's Kubernetes API, through
// client-go from the cluster GET's kubeconfig: they register one a
// NodeTime as the machines start, NotReady until built; they carry
// Civo's names, labels (the pool label, the size, the region, the pool's
// own), its taints, the k3s kubelet version and civo:// provider ids; a
// label update reaches them (a label a person set stays); a scale up and
// down is followed, and a delete takes them all.
func TestPoolNodes(t *testing.T) {
	k := newKubeEnv(t)
	k.must(http.MethodPost, pools, `{"id":"web","count":3,"size":"g4s.kube.medium","region":"LON1","labels":{"team":"ml"},`+
		`"taints":[{"key":"dedicated","value":"ml","effect":"NoSchedule"}]}`)
	if n := k.nodes("web"); len(n) != 0 {
		t.Fatalf("at the create: %d nodes", len(n))
	}
	k.clock.Advance(25 * time.Second) // two machines started, none built
	if n := k.nodes("web"); len(n) != 2 || ready(n) != 0 {
		t.Fatalf("at 25 s: %d nodes, %d Ready; want 2, 0", len(n), ready(n))
	}
	k.clock.Advance(time.Hour)
	n := k.nodes("web")
	if len(n) != 3 || ready(n) != 3 {
		t.Fatalf("built: %d nodes, %d Ready", len(n), ready(n))
	}
	p := k.pool("web")
	for _, no := range n {
		i := slices.IndexFunc(p.Instances, func(in civo.Instance) bool { return in.Hostname == no.Name })
		l := no.Labels
		switch {
		case i < 0 || !strings.HasPrefix(no.Name, "k3s-prod-0f4c-7a523b-node-pool-web-"):
			t.Fatalf("node %s is not an instance's hostname of Civo's form", no.Name)
		case no.Spec.ProviderID != "civo://"+p.Instances[i].ID || no.Status.NodeInfo.KubeletVersion != "v1.30.5+k3s1":
			t.Fatalf("node %s: provider id %q, kubelet %q", no.Name, no.Spec.ProviderID, no.Status.NodeInfo.KubeletVersion)
		case l["node.kubernetes.io/instance-type"] != "g4s.kube.medium" || l["topology.kubernetes.io/region"] != "lon1" ||
			l["team"] != "ml" || l["kubernetes.io/hostname"] != no.Name:
			t.Fatalf("node %s labels %v", no.Name, l)
		case len(no.Spec.Taints) != 1 || no.Spec.Taints[0].Key != "dedicated" || no.Spec.Taints[0].Effect != corev1.TaintEffectNoSchedule:
			t.Fatalf("node %s taints %v", no.Name, no.Spec.Taints)
		}
	}
	// A person labels a node; then the pool's labels change at Civo.
	ctx := context.Background()
	patch := []byte(`{"metadata":{"labels":{"kept":"yes"}}}`)
	if _, err := k.cs.CoreV1().Nodes().Patch(ctx, n[0].Name, "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	k.must(http.MethodPut, pools+"/web?region="+region, `{"labels":{"team":"ai","tier":"front"}}`)
	for _, no := range k.nodes("web") {
		if no.Labels["team"] != "ai" || no.Labels["tier"] != "front" || no.Name == n[0].Name && no.Labels["kept"] != "yes" {
			t.Fatalf("after the label update, node %s: %v", no.Name, no.Labels)
		}
	}
	for _, step := range []struct{ count, want int }{{5, 5}, {2, 2}} {
		k.must(http.MethodPut, pools+"/web?region="+region, `{"count":`+strconv.Itoa(step.count)+`}`)
		k.clock.Advance(time.Hour)
		if n := k.nodes("web"); len(n) != step.want || ready(n) != step.want {
			t.Fatalf("scaled to %d: %d nodes, %d Ready", step.count, len(n), ready(n))
		}
	}
	k.must(http.MethodDelete, pools+"/web?region="+region, "")
	k.clock.Advance(time.Hour)
	if n := k.nodes("web"); len(n) != 0 {
		t.Fatalf("after the delete: %d nodes", len(n))
	}
}

// TestAutoscalerNodes: the emulated autoscaler's moves (SetDemand) reach
// a watch already open on the pool's nodes, with no further request to
// the cluster's API: added nodes come Ready, removed ones go.
func TestAutoscalerNodes(t *testing.T) {
	k := newKubeEnv(t)
	k.must(http.MethodPut, clusterPath, `{"applications":"civo-cluster-autoscaler","region":"LON1"}`)
	k.must(http.MethodPost, pools, `{"id":"web","count":3,"size":"g4s.kube.small","region":"LON1"}`)
	k.clock.Advance(time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := k.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: civo.PoolLabel + "=web"})
	if err != nil || len(l.Items) != 3 {
		t.Fatalf("list: %v, %d nodes", err, len(l.Items))
	}
	w, err := k.cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{LabelSelector: civo.PoolLabel + "=web", ResourceVersion: l.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	count := func(want int, kind watch.EventType) {
		t.Helper()
		for seen := 0; seen < want; {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					t.Fatalf("the watch ended after %d %s", seen, kind)
				}
				no, _ := ev.Object.(*corev1.Node)
				if ev.Type != kind || no == nil || kind == watch.Added && ready([]corev1.Node{*no}) != 1 {
					t.Fatalf("event %s %v; want %s of a Ready node", ev.Type, no, kind)
				}
				seen++
			case <-ctx.Done():
				t.Fatalf("%d %s events of %d", seen, kind, want)
			}
		}
	}
	if n, err := k.emu.SetDemand(region, cid, "web", 5); err != nil || n != 5 {
		t.Fatalf("SetDemand(5) = %d, %v", n, err)
	}
	count(2, watch.Added)
	if n, err := k.emu.SetDemand(region, cid, "web", 4); err != nil || n != 4 {
		t.Fatalf("SetDemand(4) = %d, %v", n, err)
	}
	count(1, watch.Deleted)
	if n := k.nodes("web"); len(n) != 4 || ready(n) != 4 {
		t.Fatalf("after the autoscaler: %d nodes, %d Ready", len(n), ready(n))
	}
}

// TestDeleteInstanceNode: the node of a deleted instance stays Ready in
// the cluster's Kubernetes API while its instance goes, then leaves it;
// the other nodes stay.
func TestDeleteInstanceNode(t *testing.T) {
	k := newKubeEnv(t)
	k.must(http.MethodPost, pools, `{"id":"web","count":3,"size":"g4s.kube.small","region":"LON1"}`)
	k.clock.Advance(time.Hour)
	p := k.pool("web")
	victim := p.Instances[0]
	k.must(http.MethodDelete, pools+"/web/instances/"+victim.ID+"?region="+region, "")
	if n := k.nodes("web"); len(n) != 3 || ready(n) != 3 {
		t.Fatalf("while the instance goes: %d nodes, %d Ready", len(n), ready(n))
	}
	k.clock.Advance(time.Hour)
	n := k.nodes("web")
	var names []string
	for _, no := range n {
		names = append(names, no.Name)
	}
	slices.Sort(names)
	want := []string{p.Instances[1].Hostname, p.Instances[2].Hostname}
	slices.Sort(want)
	if !slices.Equal(names, want) || k.pool("web").Count != 2 {
		t.Fatalf("after: nodes %v, want %v", names, want)
	}
}

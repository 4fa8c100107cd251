package api

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kpool/kpool"
)

// TestNodeLists: the pool's nodes (those of its provider name, sorted)
// and the cluster's, over HTTP with the Go client; a caller who may not
// see the cluster gets 404, one without a credential 401.
func TestNodeLists(t *testing.T) {
	w := newProxyWorld(t)
	ctx := context.Background()
	c := w.client(w.owner)
	name, cid := "small", w.cluster.ID
	p, err := c.CreateNodePool(ctx, NodePoolBody{Name: &name, ClusterID: &cid, Spec: json.RawMessage(gcpPool)})
	if err != nil {
		t.Fatal(err)
	}
	if p.ProviderName != "small" {
		t.Fatalf("the pool's provider name is %q; staticNodes has nodes of small", p.ProviderName)
	}
	ns, err := c.PoolNodes(ctx, w.cluster.ID, p.ID)
	if err != nil || len(ns) != 2 || ns[0].Name != "small-1" || !ns[0].Cordoned || ns[1].Name != "small-2" || !ns[1].Ready {
		t.Fatalf("the pool's nodes: %+v %v", ns, err)
	}
	all, err := c.ClusterNodes(ctx, w.cluster.ID)
	if err != nil || len(all) != 3 || !slices.IsSortedFunc(all, func(a, b kpool.Node) int { return strings.Compare(a.Name, b.Name) }) {
		t.Fatalf("the cluster's nodes: %+v %v", all, err)
	}
	c.Token = w.stranger
	if _, err := c.PoolNodes(ctx, w.cluster.ID, p.ID); kpool.ErrorCode(err) != kpool.CodeNotFound {
		t.Errorf("a stranger, the pool's nodes: %v", err)
	}
	if _, err := c.ClusterNodes(ctx, w.cluster.ID); kpool.ErrorCode(err) != kpool.CodeNotFound {
		t.Errorf("a stranger, the cluster's nodes: %v", err)
	}
	c.Token = ""
	if _, err := c.ClusterNodes(ctx, w.cluster.ID); kpool.ErrorCode(err) != kpool.CodeUnauthorized {
		t.Errorf("no credential: %v", err)
	}
}

// TestKubeconfigHoldsNoSecret: the served kubeconfig points at kpool's
// proxy to the cluster and authenticates by running kpool as an exec
// credential plugin (with the kpool context asked for); it holds no token,
// key or password, and nothing of the caller's token or the cluster's.
func TestKubeconfigHoldsNoSecret(t *testing.T) {
	w := newProxyWorld(t)
	c := w.client(w.owner)
	y, err := c.Kubeconfig(context.Background(), w.cluster.ID, "prod")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(y)
	if err != nil {
		t.Fatal(err)
	}
	name := "kpool-" + w.cluster.Name
	cl, ai := cfg.Clusters[name], cfg.AuthInfos[name]
	if cfg.CurrentContext != name || cl == nil || ai == nil || cl.Server != w.url+"/api/v1/clusters/"+w.cluster.ID+"/kube" || len(cl.CertificateAuthorityData) == 0 {
		t.Fatalf("kubeconfig:\n%s", y)
	}
	if ai.Token != "" || ai.TokenFile != "" || len(ai.ClientKeyData) != 0 || ai.Password != "" || ai.AuthProvider != nil || ai.Exec == nil {
		t.Fatalf("the user holds a credential:\n%s", y)
	}
	if ai.Exec.Command != "kpool" || !slices.Equal(ai.Exec.Args, []string{"config", "kube-credential", "--context", "prod"}) ||
		ai.Exec.APIVersion != "client.authentication.k8s.io/v1" || !ai.Exec.ProvideClusterInfo {
		t.Errorf("exec: %+v", ai.Exec)
	}
	for _, secret := range []string{w.owner, w.kube.api.AddCluster(w.cluster.ID)} {
		if strings.Contains(string(y), secret) {
			t.Errorf("the kubeconfig holds a secret:\n%s", y)
		}
	}
}

// TestClientGoThroughProxy: client-go, built from the served kubeconfig
// (its exec plugin replaced by the caller's kpool token, which is what the
// plugin hands it), lists and watches the cluster's nodes through kpool,
// and a write is refused with 405 and kpool's message.
func TestClientGoThroughProxy(t *testing.T) {
	w := newProxyWorld(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := w.client(w.owner)
	y, err := c.Kubeconfig(ctx, w.cluster.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(y)
	if err != nil {
		t.Fatal(err)
	}
	for _, ai := range cfg.AuthInfos {
		ai.Exec, ai.Token = nil, w.owner
	}
	rc, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	l, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "kompox.dev/node-pool=web"})
	if err != nil || len(l.Items) != 2 || l.Items[0].Name != "n1" {
		t.Fatalf("client-go's list: %v %v", l, err)
	}
	wi, err := cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer wi.Stop()
	if _, err := w.kube.api.SetNode(w.cluster.ID, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n3"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-wi.ResultChan():
		if n, ok := ev.Object.(*corev1.Node); ev.Type != watch.Added || !ok || n.Name != "n3" {
			t.Fatalf("client-go's watch: %s %+v", ev.Type, ev.Object)
		}
	case <-ctx.Done():
		t.Fatal("client-go's watch saw no event")
	}
	_, err = cs.CoreV1().Nodes().Patch(ctx, "n1", types.MergePatchType, []byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{})
	if !apierrors.IsMethodNotSupported(err) || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("a cordon through the proxy: %v", err)
	}
	if r, err := w.http.Get(w.url + "/api/v1/clusters/" + w.cluster.ID + "/kube/version"); err != nil || r.StatusCode != 401 {
		t.Errorf("no credential: %v %v", r, err)
	}
}

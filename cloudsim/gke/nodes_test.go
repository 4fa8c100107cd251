package gke_test

import (
	"encoding/base64"
	"encoding/pem"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	container "google.golang.org/api/container/v1"
	"google.golang.org/api/option"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kpool/kpool/cloudsim/gke"
	"github.com/kpool/kpool/cloudsim/sim"
)

// kubeEnv is an emulator served on TLS with its CA set, the GKE client,
// and client-go built the way GKE hands a cluster out: https://<endpoint>
// of clusters.get, its masterAuth.clusterCaCertificate, and a Google
// access token.
type kubeEnv struct {
	*env
	kube kubernetes.Interface
}

const googleToken = "ya29.kpool-test"

func newKubeEnv(t *testing.T) *kubeEnv {
	clock := sim.NewManualClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	s := gke.New(gke.Options{Engine: sim.Options{Clock: clock, OperationTime: 30 * time.Second, NodeTime: 10 * time.Second}, Token: googleToken})
	s.AddCluster(project, region, name, "1.30.5-gke.1014001")
	srv := httptest.NewUnstartedServer(s)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	s.SetCA(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	hc := &http.Client{Transport: &oauth2.Transport{Source: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: googleToken}), Base: srv.Client().Transport}}
	svc, err := container.NewService(ctx, option.WithHTTPClient(hc), option.WithEndpoint(srv.URL+"/"))
	if err != nil {
		t.Fatal(err)
	}
	e := &kubeEnv{env: &env{t: t, sim: s, clock: clock, srv: srv, svc: svc}}
	cl, err := svc.Projects.Locations.Clusters.Get(strings.TrimPrefix(base, "/v1/")).Do()
	if err != nil {
		t.Fatal(err)
	}
	ca, err := base64.StdEncoding.DecodeString(cl.MasterAuth.ClusterCaCertificate)
	if err != nil || cl.Endpoint != strings.TrimPrefix(srv.URL, "https://")+gke.KubePrefix+"/"+cl.Id {
		t.Fatalf("clusters.get: endpoint %q, id %q, CA %v", cl.Endpoint, cl.Id, err)
	}
	cfg := &rest.Config{Host: "https://" + cl.Endpoint, BearerToken: googleToken, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
	if e.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	return e
}

// nodes lists a pool's nodes by GKE's pool label.
func (e *kubeEnv) nodes(pool string) []corev1.Node {
	e.t.Helper()
	l, err := e.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: gke.PoolLabel + "=" + pool})
	if err != nil {
		e.t.Fatal(err)
	}
	return l.Items
}

func ready(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// done waits (on the manual clock) for an operation to end.
func (e *kubeEnv) done(op *container.Operation, err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
}

var nodeName = regexp.MustCompile(`^gke-gke-prod-web-([0-9a-f]{8})-[a-z0-9]{4}$`)

// TestKubeNodesFollowPools: through client-go, a pool's nodes appear as
// its create goes on (the one being made NotReady), nodeCount of them in
// each zone, named, labelled and tainted as GKE makes them; a label update
// reaches them while a label another client put stays; setSize,
// autoscaling bounds and delete take them away or add them; a token GKE refuses is 401 here too.
func TestKubeNodesFollowPools(t *testing.T) {
	e := newKubeEnv(t)
	pools := e.svc.Projects.Locations.Clusters.NodePools
	parent := strings.TrimPrefix(base, "/v1/")
	_, err := pools.Create(parent, &container.CreateNodePoolRequest{NodePool: &container.NodePool{
		Name: "web", InitialNodeCount: 2, Config: &container.NodeConfig{MachineType: "e2-standard-4", DiskType: "pd-balanced", Spot: true,
			Labels: map[string]string{"team": "a"}, Taints: []*container.NodeTaint{{Key: "dedicated", Value: "web", Effect: "NO_SCHEDULE"}}}}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(25 * time.Second) // two nodes made, the third under way
	if got := e.nodes("web"); len(got) != 3 || len(slices.DeleteFunc(got, ready)) != 1 {
		t.Fatalf("25 s into the create: %d nodes, want 2 Ready and 1 NotReady", len(got))
	}
	e.clock.Advance(time.Hour)
	got := e.nodes("web")
	perZone := map[string]int{}
	hexOf := map[string]string{}
	for _, n := range got {
		z := n.Labels["topology.kubernetes.io/zone"]
		perZone[z]++
		m := nodeName.FindStringSubmatch(n.Name)
		if m == nil || (hexOf[z] != "" && hexOf[z] != m[1]) {
			t.Fatalf("node name %q (zone %s, its group's hash %q)", n.Name, z, hexOf[z])
		}
		hexOf[z] = m[1]
		want := map[string]string{gke.PoolLabel: "web", "cloud.google.com/machine-family": "e2", "cloud.google.com/gke-os-distribution": "cos",
			"cloud.google.com/gke-boot-disk": "pd-balanced", "cloud.google.com/gke-provisioning": "spot", "cloud.google.com/gke-spot": "true",
			"node.kubernetes.io/instance-type": "e2-standard-4", "topology.kubernetes.io/region": region, "topology.gke.io/zone": z, "team": "a"}
		for k, v := range want {
			if n.Labels[k] != v {
				t.Fatalf("node %s: label %s=%q, want %q", n.Name, k, n.Labels[k], v)
			}
		}
		if n.Spec.ProviderID != "gce://"+project+"/"+z+"/"+n.Name || n.Status.NodeInfo.KubeletVersion != "v1.30.5-gke.1014001" || !ready(n) ||
			len(n.Spec.Taints) != 1 || n.Spec.Taints[0] != (corev1.Taint{Key: "dedicated", Value: "web", Effect: corev1.TaintEffectNoSchedule}) {
			t.Fatalf("node %s: providerID %q, kubelet %q, taints %v", n.Name, n.Spec.ProviderID, n.Status.NodeInfo.KubeletVersion, n.Spec.Taints)
		}
	}
	if want := map[string]int{"us-central1-a": 2, "us-central1-b": 2, "us-central1-c": 2}; !maps.Equal(perZone, want) || len(slices.Compact(slices.Sorted(maps.Values(hexOf)))) != 3 {
		t.Fatalf("nodes per zone %v, want %v; group hashes %v, one per zone", perZone, want, hexOf)
	}

	// Another client labels a node; GKE's label update reaches every node
	// and leaves that label be.
	first := got[0].Name
	if _, err := e.kube.CoreV1().Nodes().Patch(ctx, first, types.MergePatchType, []byte(`{"metadata":{"labels":{"kompox.dev/node-pool":"web"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.done(pools.Update(parent+"/nodePools/web", &container.UpdateNodePoolRequest{Labels: &container.NodeLabels{Labels: map[string]string{"team": "b", "tier": "front"}}}).Do())
	for _, n := range e.nodes("web") {
		if n.Labels["team"] != "b" || n.Labels["tier"] != "front" || (n.Name == first) != (n.Labels["kompox.dev/node-pool"] == "web") {
			t.Fatalf("after the label update, node %s: %v", n.Name, n.Labels)
		}
	}

	e.done(pools.SetSize(parent+"/nodePools/web", &container.SetNodePoolSizeRequest{NodeCount: 1}).Do())
	if got := e.nodes("web"); len(got) != 3 {
		t.Fatalf("setSize 1: %d nodes, want one per zone", len(got))
	}
	e.done(pools.SetAutoscaling(parent+"/nodePools/web", &container.SetNodePoolAutoscalingRequest{
		Autoscaling: &container.NodePoolAutoscaling{Enabled: true, MinNodeCount: 2, MaxNodeCount: 4}}).Do())
	if got := e.nodes("web"); len(got) != 6 {
		t.Fatalf("autoscaling from 2 a zone: %d nodes, want 6", len(got))
	}
	e.done(pools.Delete(parent + "/nodePools/web").Do())
	if got := e.nodes("web"); len(got) != 0 {
		t.Fatalf("deleted: %d nodes left", len(got))
	}

	bad := &rest.Config{Host: "https://" + strings.TrimPrefix(e.srv.URL, "https://") + gke.KubePrefix + "/" + e.sim.KubeID(project, region, name),
		BearerToken: "ya29.someone-else", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	cs, err := kubernetes.NewForConfig(bad)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Fatalf("a token GKE refuses: %v, want 401", err)
	}
}

// TestKubeNodesSurgeUpgrade: a version upgrade replaces the nodes one at a
// time, a new node (NotReady, then Ready, at the new version) before an
// old one goes, until every node is new; so does a machine type change.
func TestKubeNodesSurgeUpgrade(t *testing.T) {
	e := newKubeEnv(t)
	pools := e.svc.Projects.Locations.Clusters.NodePools
	parent := strings.TrimPrefix(base, "/v1/")
	e.done(pools.Create(parent, &container.CreateNodePoolRequest{NodePool: &container.NodePool{
		Name: "web", InitialNodeCount: 1, Version: "1.29.9-gke.1177000", Locations: []string{"us-central1-a", "us-central1-b"}}}).Do())
	before := e.nodes("web")
	if len(before) != 2 || before[0].Status.NodeInfo.KubeletVersion != "v1.29.9-gke.1177000" {
		t.Fatalf("before: %d nodes", len(before))
	}
	if _, err := pools.Update(parent+"/nodePools/web", &container.UpdateNodePoolRequest{NodeVersion: "1.30.5-gke.1014001"}).Do(); err != nil {
		t.Fatal(err)
	}
	// 30 s + 2 replacements of 10 s: 30 s in, one node is new, and the
	// other one's replacement is being made.
	e.clock.Advance(30 * time.Second)
	mid := e.nodes("web")
	versions := map[string]int{}
	notReady := 0
	for _, n := range mid {
		versions[n.Status.NodeInfo.KubeletVersion]++
		if !ready(n) {
			notReady++
		}
	}
	if len(mid) != 3 || versions["v1.30.5-gke.1014001"] != 2 || notReady != 1 {
		t.Fatalf("mid-upgrade: %d nodes, versions %v, %d NotReady", len(mid), versions, notReady)
	}
	e.clock.Advance(time.Hour)
	after := e.nodes("web")
	if len(after) != 2 {
		t.Fatalf("after: %d nodes", len(after))
	}
	for _, n := range after {
		if n.Status.NodeInfo.KubeletVersion != "v1.30.5-gke.1014001" || n.Name == before[0].Name || n.Name == before[1].Name || !ready(n) {
			t.Fatalf("after the upgrade: %s %s", n.Name, n.Status.NodeInfo.KubeletVersion)
		}
	}
	// A new machine type is an upgrade too: new nodes of the new type.
	e.done(pools.Update(parent+"/nodePools/web", &container.UpdateNodePoolRequest{MachineType: "e2-standard-4"}).Do())
	for _, n := range e.nodes("web") {
		if n.Name == after[0].Name || n.Name == after[1].Name || n.Labels["node.kubernetes.io/instance-type"] != "e2-standard-4" {
			t.Fatalf("after the machine type change: %s %s", n.Name, n.Labels["node.kubernetes.io/instance-type"])
		}
	}
}

// TestKubeconfigs: the kubeconfig Kubeconfigs hands out for each cluster
// reaches its Kubernetes API, whose nodes are that cluster's; a long
// cluster name is cut in the nodes' names as GKE cuts it.
func TestKubeconfigs(t *testing.T) {
	e := newKubeEnv(t)
	const long = "gke-devops-tekton-pool-cluster"
	e.sim.AddCluster(project, region, long, "1.30.5-gke.1014001")
	for _, c := range []string{name, long} {
		if err := e.sim.AddPool(project, region, c, container.NodePool{Name: "default-pool", InitialNodeCount: 1}); err != nil {
			t.Fatal(err)
		}
	}
	for c, prefix := range map[string]string{name: "gke-gke-prod-default-pool-", long: "gke-gke-devops-tekton-po-default-pool-"} {
		cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(e.sim.Kubeconfigs(e.srv.URL)[c]))
		if err != nil {
			t.Fatal(err)
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		l, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil || len(l.Items) != 3 {
			t.Fatalf("%s: nodes through the kubeconfig: %v, %v", c, l, err)
		}
		for _, n := range l.Items {
			if !strings.HasPrefix(n.Name, prefix) || len(n.Name) != len(prefix)+8+1+4 {
				t.Fatalf("%s: node %s, want %s<hash>-<4>", c, n.Name, prefix)
			}
		}
	}
}

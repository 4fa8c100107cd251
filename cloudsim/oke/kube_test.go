package oke_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kpool/kpool/cloudsim/oke"
)

// token makes what `oci ce cluster generate-token` prints as its token:
// the URL-safe base64 of the GET of host/cluster_request/<cluster> signed
// with key at date, the signature's authorization and date in its query.
func token(t *testing.T, key *rsa.PrivateKey, host, cluster string, date time.Time) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "https://"+host+oke.TokenPath+cluster, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Date", date.UTC().Format(http.TimeFormat))
	cp := common.NewRawConfigurationProvider(tenancy, user, region, oke.Fingerprint(&key.PublicKey), oke.PEM(key), nil)
	if err := common.DefaultRequestSigner(cp).Sign(req); err != nil {
		t.Fatal(err)
	}
	q := url.Values{"authorization": {req.Header.Get("Authorization")}, "date": {req.Header.Get("Date")}}
	req.URL.RawQuery = q.Encode()
	return base64.URLEncoding.EncodeToString([]byte(req.URL.String()))
}

// kubeClient is client-go on the cluster's kubeconfig as CreateKubeconfig
// answers it, with tok in place of the OCI CLI the kubeconfig execs.
func (e *env) kubeClient(t *testing.T, tok string) kubernetes.Interface {
	t.Helper()
	resp, err := e.client.CreateKubeconfig(ctx, ce.CreateKubeconfigRequest{ClusterId: common.String(clusterID),
		CreateClusterKubeconfigContentDetails: ce.CreateClusterKubeconfigContentDetails{TokenVersion: common.String("2.0.0")}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Content.Close()
	raw, err := io.ReadAll(resp.Content)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	cc := cfg.Contexts[cfg.CurrentContext]
	cl, ai := cfg.Clusters[cc.Cluster], cfg.AuthInfos[cc.AuthInfo]
	want := []string{"ce", "cluster", "generate-token", "--cluster-id", clusterID, "--region", region}
	if cl == nil || ai == nil || ai.Exec == nil || ai.Exec.Command != "oci" || !slices.Equal(ai.Exec.Args, want) || ai.Token != "" ||
		cl.Server != e.url+oke.KubePrefix+"/"+clusterID || len(cl.CertificateAuthorityData) == 0 || cc.Cluster != "cluster-"+clusterID[len(clusterID)-11:] {
		t.Fatalf("kubeconfig: context %+v cluster %+v user %+v", cc, cl, ai)
	}
	kc, err := kubernetes.NewForConfig(&rest.Config{Host: cl.Server, BearerToken: tok, TLSClientConfig: rest.TLSClientConfig{CAData: cl.CertificateAuthorityData}})
	if err != nil {
		t.Fatal(err)
	}
	return kc
}

// poolLabel is the label kpool's OKE driver puts in a node pool's
// initialNodeLabels, valued with the pool's name: OKE itself labels no
// node with its pool.
const poolLabel = "oke.oraclecloud.com/node-pool"

// withPoolLabel is d with poolLabel=<its name> among its initial labels,
// as kpool's driver creates a pool.
func withPoolLabel(d ce.CreateNodePoolDetails) ce.CreateNodePoolDetails {
	d.InitialNodeLabels = append(slices.Clone(d.InitialNodeLabels), ce.KeyValue{Key: common.String(poolLabel), Value: d.Name})
	return d
}

// poolNodes lists the Kubernetes nodes of a pool, by the pool label; with
// pool "", every node.
func poolNodes(t *testing.T, kc kubernetes.Interface, pool string) map[string]corev1.Node {
	t.Helper()
	sel := poolLabel + "=" + pool
	if pool == "" {
		sel = ""
	}
	list, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]corev1.Node{}
	for _, n := range list.Items {
		out[n.Name] = n
	}
	return out
}

// TestKubeNodesFollowPools: client-go, reaching the cluster's API as its
// kubeconfig says with an OKE token, sees a pool's nodes as they go
// ACTIVE, named by private IP with OKE's labels and the pool's initial
// ones (here the pool label, as kpool's driver sets it); a label update
// reaches only the nodes made after it; scaling down and deleting remove
// them.
func TestKubeNodesFollowPools(t *testing.T) {
	e := newEnv(t, 0)
	host := strings.TrimPrefix(e.url, "https://")
	kc := e.kubeClient(t, token(t, testKey, host, clusterID, time.Now()))
	id := e.create(t, withPoolLabel(details("workers", 3, "Uocm:PHX-AD-1", "Uocm:PHX-AD-2")))
	if got := poolNodes(t, kc, "workers"); len(got) != 0 {
		t.Fatalf("nodes before any is ACTIVE: %v", got)
	}
	e.clock.Advance(15 * time.Second)
	np, err := e.client.GetNodePool(ctx, ce.GetNodePoolRequest{NodePoolId: &id})
	if err != nil {
		t.Fatal(err)
	}
	got := poolNodes(t, kc, "workers")
	if len(got) != 1 {
		t.Fatalf("one node ACTIVE, %d in Kubernetes", len(got))
	}
	on := np.Nodes[0]
	if want := "oke-c" + clusterID[len(clusterID)-10:] + "-n" + id[len(id)-10:] + "-s" + (*on.SubnetId)[len(*on.SubnetId)-10:] + "-0"; *on.Name != want {
		t.Errorf("node name %s, want %s", *on.Name, want)
	}
	kn, ok := got[*on.PrivateIp]
	if !ok {
		t.Fatalf("no node named %s: %v", *on.PrivateIp, got)
	}
	want := map[string]string{"team": "ml", "displayName": *on.Name, "hostname": *on.Name, "kubernetes.io/hostname": *on.PrivateIp,
		"node.kubernetes.io/instance-type": "VM.Standard.E4.Flex", "topology.kubernetes.io/zone": "PHX-AD-1", "topology.kubernetes.io/region": "phx",
		"oci.oraclecloud.com/fault-domain": *on.FaultDomain, "oke.oraclecloud.com/node.info.private_subnet": "true",
		"node.info/compartment.id": "aaaaaaaatest", "node.info/kubeletVersion": "v1.31"}
	for k, v := range want {
		if kn.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, kn.Labels[k], v)
		}
	}
	if kn.Spec.ProviderID != *on.Id || kn.Status.NodeInfo.KubeletVersion != "v1.31.1" || !ready(kn) {
		t.Fatalf("node %s: providerID %s, kubelet %s, ready %v", kn.Name, kn.Spec.ProviderID, kn.Status.NodeInfo.KubeletVersion, ready(kn))
	}
	e.clock.Advance(time.Hour)
	before := poolNodes(t, kc, "workers")
	if len(before) != 3 {
		t.Fatalf("3 nodes ACTIVE, %d in Kubernetes", len(before))
	}

	// The control plane and the pool upgraded, new labels and one node
	// more: the three keep team=ml and their kubelet, the new one has
	// team=ai and the new version.
	e.emu.AddCluster(oke.Cluster{ID: clusterID, Name: "prod", Region: region, CompartmentID: compartment, Version: "v1.32.1", ImageID: image, Subnets: subnets})
	e.update(t, id, ce.UpdateNodePoolDetails{InitialNodeLabels: []ce.KeyValue{{Key: common.String("team"), Value: common.String("ai")},
		{Key: common.String(poolLabel), Value: common.String("workers")}},
		KubernetesVersion: common.String("v1.32.1"), NodeConfigDetails: &ce.UpdateNodePoolNodeConfigDetails{Size: common.Int(4)}})
	e.clock.Advance(time.Hour)
	after := poolNodes(t, kc, "workers")
	if len(after) != 4 {
		t.Fatalf("4 nodes ACTIVE, %d in Kubernetes", len(after))
	}
	for name, n := range after {
		_, old := before[name]
		team, version := map[bool]string{true: "ml", false: "ai"}[old], map[bool]string{true: "v1.31.1", false: "v1.32.1"}[old]
		if n.Labels["team"] != team || n.Status.NodeInfo.KubeletVersion != version {
			t.Errorf("node %s (made before the update: %v) has team=%s, kubelet %s", name, old, n.Labels["team"], n.Status.NodeInfo.KubeletVersion)
		}
	}

	e.update(t, id, ce.UpdateNodePoolDetails{NodeConfigDetails: &ce.UpdateNodePoolNodeConfigDetails{Size: common.Int(2)}})
	e.clock.Advance(time.Hour)
	if got := poolNodes(t, kc, "workers"); len(got) != 2 {
		t.Fatalf("scaled to 2, %d in Kubernetes", len(got))
	}
	if _, err := e.client.DeleteNodePool(ctx, ce.DeleteNodePoolRequest{NodePoolId: &id}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	if got := poolNodes(t, kc, "workers"); len(got) != 0 {
		t.Fatalf("pool deleted, %d nodes in Kubernetes", len(got))
	}
}

// TestKubeNodesUnlabelled: OKE puts no pool label of its own on a node. A
// pool created without one in its initialNodeLabels (outside kpool) has
// nodes in the API that no pool label selects; a pool whose labels an
// update replaced without it gets new nodes without it, its older nodes
// keeping theirs; scaling down and deleting still remove the nodes.
func TestKubeNodesUnlabelled(t *testing.T) {
	e := newEnv(t, 0)
	kc := e.kubeClient(t, token(t, testKey, strings.TrimPrefix(e.url, "https://"), clusterID, time.Now()))
	bare := e.create(t, details("bare", 2, "Uocm:PHX-AD-1"))
	e.clock.Advance(time.Hour)
	all := poolNodes(t, kc, "")
	if len(all) != 2 || len(poolNodes(t, kc, "bare")) != 0 {
		t.Fatalf("%d nodes, %d by the pool label; want 2 and 0", len(all), len(poolNodes(t, kc, "bare")))
	}
	for name, n := range all {
		for k, v := range n.Labels {
			if v == "bare" || strings.Contains(k, "node-pool") {
				t.Errorf("node %s has label %s=%s, which names its pool", name, k, v)
			}
		}
	}
	id := e.create(t, withPoolLabel(details("workers", 1, "Uocm:PHX-AD-2")))
	e.clock.Advance(time.Hour)
	before := poolNodes(t, kc, "workers")
	e.update(t, id, ce.UpdateNodePoolDetails{InitialNodeLabels: []ce.KeyValue{{Key: common.String("team"), Value: common.String("ai")}},
		NodeConfigDetails: &ce.UpdateNodePoolNodeConfigDetails{Size: common.Int(2)}})
	e.clock.Advance(time.Hour)
	if after := poolNodes(t, kc, "workers"); len(before) != 1 || len(after) != 1 || len(poolNodes(t, kc, "")) != 4 {
		t.Fatalf("labelled nodes of workers: %d before the update, %d after (want 1 and 1); %d nodes in all (want 4)", len(before), len(after), len(poolNodes(t, kc, "")))
	}
	e.update(t, bare, ce.UpdateNodePoolDetails{NodeConfigDetails: &ce.UpdateNodePoolNodeConfigDetails{Size: common.Int(1)}})
	if _, err := e.client.DeleteNodePool(ctx, ce.DeleteNodePoolRequest{NodePoolId: &id}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	if got := poolNodes(t, kc, ""); len(got) != 1 {
		t.Fatalf("bare scaled to 1 and workers deleted: %d nodes in Kubernetes, want 1", len(got))
	}
}

func (e *env) update(t *testing.T, id string, d ce.UpdateNodePoolDetails) {
	t.Helper()
	if _, err := e.client.UpdateNodePool(ctx, ce.UpdateNodePoolRequest{NodePoolId: &id, UpdateNodePoolDetails: d}); err != nil {
		t.Fatal(err)
	}
}

func ready(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// TestKubeTokens: the cluster's API takes a token signed with a key of the
// tenancy, for this cluster, dated now, on the emulator's or OKE's host;
// garbage, another key, another cluster, a date past the clock skew: 401.
func TestKubeTokens(t *testing.T) {
	e := newEnv(t, 0)
	host := strings.TrimPrefix(e.url, "https://")
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	for name, c := range map[string]struct {
		tok string
		ok  bool
	}{
		"emulator host":   {token(t, testKey, host, clusterID, time.Now()), true},
		"OKE host":        {token(t, testKey, "containerengine."+region+".oraclecloud.com", clusterID, time.Now()), true},
		"garbage":         {"not-a-token", false},
		"other key":       {token(t, other, host, clusterID, time.Now()), false},
		"other cluster":   {token(t, testKey, host, "ocid1.cluster.oc1.phx.aaaaaaaaother", time.Now()), false},
		"other region":    {token(t, testKey, "containerengine.us-ashburn-1.oraclecloud.com", clusterID, time.Now()), false},
		"six minutes old": {token(t, testKey, host, clusterID, time.Now().Add(-6*time.Minute)), false},
	} {
		_, err := e.kubeClient(t, c.tok).CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if c.ok && err != nil || !c.ok && !apierrors.IsUnauthorized(err) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

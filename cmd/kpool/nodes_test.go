package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/store/storetest"
)

// nodesAt is when the test's nodes were made: an hour before nodesNow.
var nodesAt, nodesNow = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC)

// testNodes is a NodeSource whose every cluster has the same nodes: two of
// the provider pool web (one cordoned and missing a label), one of db.
type testNodes struct{}

func (testNodes) ClusterNodes(context.Context, *kpool.Cluster) ([]kpool.Node, error) {
	return []kpool.Node{
		{Name: "web-b", Pool: "web", Zone: "2", NativeZone: "us-central1-b", InstanceType: "e2-small", Version: "v1.33.2", Ready: false, Cordoned: true, CreatedAt: nodesAt,
			MissingLabels: []string{"kompox.dev/node-zone"}},
		{Name: "db-a", Pool: "db", Zone: "1", Version: "v1.33.2", Ready: true, CreatedAt: nodesAt},
		{Name: "web-a", Pool: "web", Zone: "1", NativeZone: "us-central1-a", InstanceType: "e2-small", Version: "v1.33.2", Ready: true, CreatedAt: nodesAt},
	}, nil
}

func (testNodes) KubeTransport(context.Context, *kpool.Cluster) (*url.URL, http.RoundTripper, error) {
	return nil, nil, kpool.Unavailable("not in this test", nil)
}

// newNodesServer is newServer (without a driver) whose kpool reads nodes
// from testNodes, with a cluster gke of testUser's holding a pool web.
func newNodesServer(t *testing.T) (string, *kpool.Cluster, *kpool.NodePool) {
	t.Helper()
	svc := newService(t, catalog.Registry())
	svc.Nodes, svc.Kube = testNodes{}, testNodes{}
	url := serveAPI(t, svc)
	c := storetest.NewCluster(t, svc, testUser, "gke")
	return url, c, storetest.NewPool(t, svc, c, "web")
}

// runAt is run with the clock at nodesNow.
func runAt(t *testing.T, srv string, args ...string) string {
	t.Helper()
	out, _, err := executeOn(clock{now: func() time.Time { return nodesNow }}, "", append(args, "--server", srv, "--user", testUser)...)
	if err != nil {
		t.Fatalf("kpool %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// TestNodesTables: nodepool nodes is kubectl get nodes' table for the
// pool's nodes (STATUS with SchedulingDisabled when cordoned), -o wide adds
// the instance type and the labels missing, -o json the API's list;
// cluster nodes lists every node with its pool.
func TestNodesTables(t *testing.T) {
	t.Parallel()
	srv, _, _ := newNodesServer(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"nodepool", "nodes", "web", "--cluster", "gke"}, `
NAME    STATUS                        ZONE   AGE
web-a   Ready                         1      60m
web-b   NotReady,SchedulingDisabled   2      60m
`},
		{[]string{"nodepool", "nodes", "web", "-o", "wide"}, `
NAME    STATUS                        ZONE   AGE   VERSION   INSTANCE-TYPE   MISSING-LABELS
web-a   Ready                         1      60m   v1.33.2   e2-small        -
web-b   NotReady,SchedulingDisabled   2      60m   v1.33.2   e2-small        kompox.dev/node-zone
`},
		{[]string{"cluster", "nodes", "gke", "--no-headers"}, `
db-a    db     Ready                         1      60m
web-a   web    Ready                         1      60m
web-b   web    NotReady,SchedulingDisabled   2      60m
`},
	} {
		if got := runAt(t, srv, c.args...); got != strings.TrimPrefix(c.want, "\n") {
			t.Errorf("kpool %s:\n%s\nwant\n%s", strings.Join(c.args, " "), got, c.want)
		}
	}
	l := decode[api.NodeList](t, srv, "nodepool", "nodes", "web", "--cluster", "gke", "-o", "json")
	if len(l.Items) != 2 || l.Items[1].Name != "web-b" || !l.Items[1].Cordoned || l.Items[1].NativeZone != "us-central1-b" {
		t.Errorf("-o json: %+v", l.Items)
	}
	if out := runAt(t, srv, "cluster", "nodes", "gke", "-o", "name", "--sort-by", ".pool"); out != "node/db-a\nnode/web-b\nnode/web-a\n" && out != "node/db-a\nnode/web-a\nnode/web-b\n" {
		t.Errorf("-o name --sort-by .pool:\n%s", out)
	}
	if out := runAt(t, srv, "nodepool", "nodes", "web", "--sort-by", ".ready", "--no-headers"); !strings.HasPrefix(out, "web-b") {
		t.Errorf("--sort-by .ready (NotReady first):\n%s", out)
	}
	if out := runAt(t, srv, "nodepool", "nodes", "web", "-o", "yaml"); !strings.Contains(out, "items:\n- createdAt:") {
		t.Errorf("-o yaml:\n%s", out)
	}
	if _, err := run(srv, "", "nodepool", "nodes", "nope", "--cluster", "gke"); err == nil || !strings.Contains(err.Error(), "No node pool named") {
		t.Errorf("an unknown pool: %v", err)
	}
}

// TestPoolViewKubernetesNodes: nodepool get shows what Kubernetes says of
// the pool's nodes beside the cloud's count, from the controllers' last
// report.
func TestPoolViewKubernetesNodes(t *testing.T) {
	t.Parallel()
	srv, _, p := newNodesServer(t)
	reportAs(t, srv, p.ID, 1, `{"active_nodes": 3}`, ready)
	cmd := newRootOn(clock{})
	cmd.SetContext(context.Background())
	cloud, err := cloudNodes(cmd, api.NewClient(srv, testUser), p.ID)
	if err != nil || cloud != 3 {
		t.Fatalf("the cloud's count: %d %v", cloud, err)
	}
	p.Status.Nodes = &kpool.NodeCounts{Total: 3, Ready: 2, Cordoned: 1, Unlabelled: 1}
	var b bytes.Buffer
	poolView(&b, p, nil, cloud, nodesNow)
	if want := "Kubernetes nodes:\t2/3 Ready in Kubernetes, at the cloud 3 (1 cordoned, 1 missing placement labels)\n"; !strings.Contains(b.String(), want) {
		t.Errorf("no %q in\n%s", want, b.String())
	}
	b.Reset()
	p.Status.Nodes = nil
	poolView(&b, p, nil, -1, nodesNow)
	if strings.Contains(b.String(), "Kubernetes") {
		t.Errorf("a pool no controller counted in Kubernetes:\n%s", b.String())
	}
}

// TestClusterKubeconfig: cluster kubeconfig prints the server's kubeconfig
// of its proxy to the cluster, no credential in it, the exec plugin with
// the kpool context given.
func TestClusterKubeconfig(t *testing.T) {
	srv, c, _ := newNodesServer(t)
	id := c.ID
	t.Setenv("KPOOL_CONFIG", filepath.Join(t.TempDir(), "config.yaml"))
	mustRun(t, srv, "config", "set-context", "prod", "--server", srv, "--user", testUser)
	for _, c := range []struct {
		args []string
		exec []string
	}{
		{[]string{"cluster", "kubeconfig", "gke"}, []string{"config", "kube-credential"}},
		{[]string{"cluster", "kubeconfig", "gke", "--context", "prod"}, []string{"config", "kube-credential", "--context", "prod"}},
	} {
		out := mustRun(t, srv, c.args...)
		cfg, err := clientcmd.Load([]byte(out))
		if err != nil {
			t.Fatalf("%v: %v\n%s", c.args, err, out)
		}
		ai, cl := cfg.AuthInfos["kpool-gke"], cfg.Clusters["kpool-gke"]
		if ai == nil || cl == nil || ai.Exec == nil || ai.Exec.Command != "kpool" || !slices.Equal(ai.Exec.Args, c.exec) || ai.Token != "" ||
			cl.Server != srv+"/api/v1/clusters/"+id+"/kube" {
			t.Errorf("%v:\n%s", c.args, out)
		}
	}
}

// TestKubeCredential: the exec plugin prints the caller's token as an
// ExecCredential for a cluster of its own kpool server, and refuses (the
// token not printed) one a kubeconfig names elsewhere.
func TestKubeCredential(t *testing.T) {
	const token = "kpool_0123456789abcdef"
	info := func(server string) string {
		return `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false,"cluster":{"server":"` + server + `"}}}`
	}
	for _, c := range []struct {
		info string
		ok   bool
	}{
		{"", false}, // run by hand
		{info("https://kpool.example.com/api/v1/clusters/0b1f4c2e-5d6a-4e7b-8c9d-0e1f2a3b4c5d/kube"), true},
		{info("https://KPOOL.example.com/api/v1/clusters/x/kube"), true},
		{info("https://evil.example.com/api/v1/clusters/x/kube"), false},
		{info("http://kpool.example.com/api/v1/clusters/x/kube"), false},
		{info("https://kpool.example.com:8443/api/v1/clusters/x/kube"), false},
		{info("https://kpool.example.com/elsewhere"), false},
		{`{"spec":{}}`, false},
	} {
		t.Setenv("KUBERNETES_EXEC_INFO", c.info)
		out, _, err := execute("", "config", "kube-credential", "--server", "https://kpool.example.com", "--token", token)
		if !c.ok {
			if err == nil || strings.Contains(out, token) || strings.Contains(err.Error(), token) {
				t.Errorf("%s: %q %v", c.info, out, err)
			}
			continue
		}
		var ec struct {
			APIVersion, Kind string
			Status           struct{ Token string }
		}
		if err != nil || json.Unmarshal([]byte(out), &ec) != nil || ec.Kind != "ExecCredential" || ec.APIVersion != "client.authentication.k8s.io/v1" || ec.Status.Token != token {
			t.Errorf("%s: %q %v", c.info, out, err)
		}
	}
	t.Setenv("KUBERNETES_EXEC_INFO", info("https://kpool.example.com/api/v1/clusters/x/kube"))
	if _, _, err := execute("", "config", "kube-credential", "--server", "https://kpool.example.com", "--user", testUser); err == nil || !strings.Contains(err.Error(), "API token") {
		t.Errorf("header mode: %v", err)
	}
}

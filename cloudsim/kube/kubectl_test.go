package kube_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kpool/kpool/cloudsim/kube"
)

// kubectl runs the kubectl found on PATH with a kubeconfig file, its
// cache under the test's own HOME.
type kubectl struct {
	t          *testing.T
	bin, home  string
	kubeconfig string
}

// findKubectl returns kubectl, or skips the test when there is none (a
// failure when KPOOL_KUBECTL=required, as CI sets it).
func findKubectl(t *testing.T) *kubectl {
	t.Helper()
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		if os.Getenv("KPOOL_KUBECTL") == "required" {
			t.Fatalf("KPOOL_KUBECTL=required but kubectl is not on PATH: %v", err)
		}
		t.Skip("kubectl is not on PATH: this test runs the real kubectl (Debian: apt-get install kubernetes-client; KPOOL_KUBECTL=required makes its absence a failure)")
	}
	return &kubectl{t: t, bin: bin, home: t.TempDir()}
}

func (k *kubectl) cmd(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, k.bin, append([]string{"--kubeconfig", k.kubeconfig}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + k.home, "KUBECACHEDIR=" + filepath.Join(k.home, "cache")}
	return cmd
}

// run runs kubectl and returns its standard output; a failure fails the
// test with what kubectl printed.
func (k *kubectl) run(args ...string) string {
	k.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd := k.cmd(ctx, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		k.t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String()
}

// table splits kubectl's printed table into its header (words joined by
// one space) and its rows (their cells).
func table(out string) (string, [][]string) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var rows [][]string
	for _, l := range lines[1:] {
		rows = append(rows, strings.Fields(l))
	}
	return strings.Join(strings.Fields(lines[0]), " "), rows
}

// serveKubectl serves an API over TLS, writes cluster c1's kubeconfig for
// kubectl, and reports the HTTP status of each eviction answered and each
// watch's start (its first write: the watch is registered by then).
func serveKubectl(t *testing.T, k *kubectl) (*kube.API, kubernetes.Interface, chan int, chan struct{}) {
	t.Helper()
	api := kube.New("/k8s")
	evictions, watches := make(chan int, 100), make(chan struct{}, 100)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") == "true" {
			api.ServeHTTP(&watchStarted{ResponseWriter: w, started: watches}, r)
			return
		}
		if !strings.HasSuffix(r.URL.Path, "/eviction") {
			api.ServeHTTP(w, r)
			return
		}
		rec := &statusRecorder{ResponseWriter: w}
		api.ServeHTTP(rec, r)
		evictions <- rec.status
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	api.SetCA(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	cfg := api.Kubeconfig(srv.URL, "c1", "c1")
	k.kubeconfig = filepath.Join(t.TempDir(), "kubeconfig-c1.yaml")
	if err := os.WriteFile(k.kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	rc, err := clientcmd.RESTConfigFromKubeConfig([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return api, kubernetes.NewForConfigOrDie(rc), evictions, watches
}

// watchStarted signals its first write.
type watchStarted struct {
	http.ResponseWriter
	started chan struct{}
	once    sync.Once
}

func (w *watchStarted) Write(p []byte) (int, error) {
	w.once.Do(func() { w.started <- struct{}{} })
	return w.ResponseWriter.Write(p)
}

func (w *watchStarted) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// seedCluster makes three nodes (pools web and sys, sys-1 with the infra
// role), a ready app pod on each web node (owned by a ReplicaSet, under
// a PDB of minAvailable 2) and a DaemonSet's pod on web-1.
func seedCluster(t *testing.T, api *kube.API, cs kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	node := func(name, ip string, labels map[string]string) kube.NodeSpec {
		return kube.NodeSpec{Name: name, Labels: labels, Ready: true, KubeletVersion: "v1.33.2", InternalIP: ip}
	}
	api.SyncNodes("c1", "kompox.dev/node-pool", "web", []kube.NodeSpec{
		node("web-1", "10.1.0.4", map[string]string{"kompox.dev/node-pool": "web"}),
		node("web-2", "10.1.0.5", map[string]string{"kompox.dev/node-pool": "web"})}, kube.Propagate)
	api.SyncNodes("c1", "kompox.dev/node-pool", "sys", []kube.NodeSpec{
		node("sys-1", "10.1.0.6", map[string]string{"kompox.dev/node-pool": "sys", "node-role.kubernetes.io/infra": ""})}, kube.Propagate)
	ds, err := cs.AppsV1().DaemonSets("kube-system").Create(ctx, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "node-agent"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rs := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "shop-5d9c", UID: "0b7c6f1e-1111-4222-8333-944455556666", Controller: ptr(true)}
	dsRef := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name, UID: ds.UID, Controller: ptr(true)}
	addPod(t, api, "shop", "app-1", "web-1", rs)
	addPod(t, api, "shop", "app-2", "web-2", rs)
	addPod(t, api, "kube-system", "node-agent-x1", "web-1", dsRef)
	two := intstr.FromInt32(2)
	if _, err := cs.PolicyV1().PodDisruptionBudgets("shop").Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "shop"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &two, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "shop"}}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// addPod binds a ready pod of one container to a node.
func addPod(t *testing.T, api *kube.API, ns, name, node string, owner metav1.OwnerReference) {
	t.Helper()
	labels := map[string]string{"app": "shop"}
	if owner.Kind == "DaemonSet" {
		labels = map[string]string{"app": owner.Name}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, OwnerReferences: []metav1.OwnerReference{owner}},
		Spec:   corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: "registry.example/app:1"}}},
		Status: corev1.PodStatus{PodIPs: []corev1.PodIP{{IP: "10.244.0." + name[len(name)-1:]}}}}
	if _, err := api.SetPod("c1", pod); err != nil {
		t.Fatal(err)
	}
	if err := api.SetPodReady("c1", ns, name, true); err != nil {
		t.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

// TestKubectl: the real kubectl, from a kubeconfig file, lists nodes by
// label with the API server's columns (and -o wide's, -o json's count),
// describes a node, cordons and uncordons (STATUS shows SchedulingDisabled), labels a node,
// watches one (the watch's events as Tables),
// lists pods in all namespaces and PDBs, and drains a node: the eviction
// the PDB forbids is 429 and retried, and succeeds once a replacement pod
// is Ready; the DaemonSet's pod is left.
func TestKubectl(t *testing.T) {
	k := findKubectl(t)
	api, cs, evictions, watches := serveKubectl(t, k)
	seedCluster(t, api, cs)

	head, rows := table(k.run("get", "nodes", "-l", "kompox.dev/node-pool=web"))
	if head != "NAME STATUS ROLES AGE VERSION" || len(rows) != 2 || !slices.Equal(rows[0][:3], []string{"web-1", "Ready", "<none>"}) || rows[1][4] != "v1.33.2" {
		t.Fatalf("get nodes -l: %q %q", head, rows)
	}
	head, rows = table(k.run("get", "nodes", "-o", "wide"))
	if head != "NAME STATUS ROLES AGE VERSION INTERNAL-IP EXTERNAL-IP OS-IMAGE KERNEL-VERSION CONTAINER-RUNTIME" || len(rows) != 3 ||
		!slices.Equal(rows[0][:3], []string{"sys-1", "Ready", "infra"}) || rows[0][5] != "10.1.0.6" || rows[0][6] != "<none>" {
		t.Fatalf("get nodes -o wide: %q %q", head, rows)
	}
	var list struct {
		Kind  string            `json:"kind"`
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal([]byte(k.run("get", "nodes", "-o", "json")), &list); err != nil || len(list.Items) != 3 {
		t.Fatalf("get nodes -o json: %d items, %v", len(list.Items), err)
	}
	if out := k.run("get", "node", "sys-1", "--show-labels"); !strings.Contains(out, "kompox.dev/node-pool=sys") {
		t.Fatalf("--show-labels (the rows' metadata): %s", out)
	}

	if out := k.run("describe", "node", "sys-1"); !regexp.MustCompile(`Roles:\s+infra\n`).MatchString(out) || !strings.Contains(out, "kompox.dev/node-pool=sys") {
		t.Fatalf("describe node:\n%s", out)
	}
	k.run("cordon", "web-2")
	if _, rows = table(k.run("get", "node", "web-2")); rows[0][1] != "Ready,SchedulingDisabled" {
		t.Fatalf("cordoned: %q", rows)
	}
	k.run("uncordon", "web-2")
	if n, _ := api.Node("c1", "web-2"); n.Spec.Unschedulable {
		t.Fatal("uncordon left the node unschedulable")
	}
	k.run("label", "node", "web-2", "nodepool=web")
	if out := strings.TrimSpace(k.run("get", "nodes", "-l", "nodepool=web", "-o", "name")); out != "node/web-2" {
		t.Fatalf("labelled: %q", out)
	}

	head, rows = table(k.run("get", "pods", "-A", "-o", "wide", "--sort-by=.metadata.name"))
	if head != "NAMESPACE NAME READY STATUS RESTARTS AGE IP NODE NOMINATED NODE READINESS GATES" || len(rows) != 3 ||
		!slices.Equal(rows[0][:5], []string{"shop", "app-1", "1/1", "Running", "0"}) || rows[0][7] != "web-1" || rows[2][1] != "node-agent-x1" {
		t.Fatalf("get pods -A -o wide: %q %q", head, rows)
	}
	head, rows = table(k.run("get", "pdb", "-n", "shop"))
	if head != "NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE" || len(rows) != 1 || !slices.Equal(rows[0][:4], []string{"shop", "2", "N/A", "0"}) {
		t.Fatalf("get pdb: %q %q", head, rows)
	}
	watchNode(t, k, api, watches)
	drain(t, k, api, evictions)
}

// watchNode: kubectl get -w prints the watch's events as the Tables'
// rows: web-1 turning NotReady. kubectl prints the node it got, then
// watches from resourceVersion 0 and skips that watch's first event (the
// node again): the node changes once the watch is open.
func watchNode(t *testing.T, k *kubectl, api *kube.API, watches chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := k.cmd(ctx, "get", "node", "web-1", "--watch")
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := bufio.NewScanner(pipe)
	var seen []string
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		seen = append(seen, strings.Join(f, " "))
		switch {
		case len(f) > 1 && f[0] == "web-1" && f[1] == "Ready":
			select {
			case <-watches:
			case <-ctx.Done():
				t.Fatal("kubectl get --watch opened no watch within 30s")
			}
			if err := api.SetReady("c1", "web-1", false); err != nil {
				t.Fatal(err)
			}
		case len(f) > 1 && f[0] == "web-1" && f[1] == "NotReady":
			if err := api.SetReady("c1", "web-1", true); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("kubectl get --watch printed %q, no NotReady row", seen)
}

// drain drains web-1 while the PDB allows no disruption: kubectl retries
// the 429, and the drain ends once a replacement pod is Ready.
func drain(t *testing.T, k *kubectl, api *kube.API, evictions chan int) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var out bytes.Buffer
	cmd := k.cmd(ctx, "drain", "web-1", "--ignore-daemonsets", "--timeout=80s")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-evictions:
		if code != http.StatusTooManyRequests {
			t.Fatalf("first eviction: %d, want 429", code)
		}
	case <-ctx.Done():
		t.Fatal("no eviction within 90s")
	}
	addPod(t, api, "shop", "app-3", "web-2", metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "shop-5d9c", UID: "0b7c6f1e-1111-4222-8333-944455556666", Controller: ptr(true)})
	if err := cmd.Wait(); err != nil {
		t.Fatalf("drain: %v\n%s", err, out.String())
	}
	var codes []int
	for len(evictions) > 0 {
		codes = append(codes, <-evictions)
	}
	if len(codes) == 0 || codes[len(codes)-1] != http.StatusCreated || !strings.Contains(out.String(), "pod/app-1 evicted") ||
		!strings.Contains(out.String(), "disruption budget") {
		t.Fatalf("drain: evictions after the 429 %v\n%s", codes, out.String())
	}
	if n, ok := api.Node("c1", "web-1"); !ok || !n.Spec.Unschedulable {
		t.Fatal("drain did not cordon web-1")
	}
	if _, rows := table(k.run("get", "pods", "-A", "--field-selector", "spec.nodeName=web-1")); len(rows) != 1 || rows[0][1] != "node-agent-x1" {
		t.Fatalf("web-1's pods after the drain: %q", rows)
	}
}

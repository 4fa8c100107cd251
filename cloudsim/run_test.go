package cloudsim

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim/kube"
	"github.com/kpool/kpool/cloudsim/sim"
)

func TestNthAddr(t *testing.T) {
	for _, tc := range []struct {
		listen string
		i      int
		want   string
		err    bool
	}{
		{"127.0.0.1:0", 0, "127.0.0.1:0", false},
		{"127.0.0.1:0", 3, "127.0.0.1:0", false},
		{"127.0.0.1:8443", 0, "127.0.0.1:8443", false},
		{"127.0.0.1:8443", 2, "127.0.0.1:8445", false},
		{"[::1]:9000", 1, "[::1]:9001", false},
		{"localhost:https", 0, "localhost:https", false},
		{"localhost:https", 1, "", true},
		{"nonsense", 1, "", true},
	} {
		got, err := nthAddr(tc.listen, tc.i)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("nthAddr(%q, %d) = %q, %v; want %q (error %v)", tc.listen, tc.i, got, err, tc.want, tc.err)
		}
	}
}

// kubeEmu is an emulator that is no cloud, whose two clusters serve an
// emulated Kubernetes API (cloudsim/kube) and which hands out their
// kubeconfigs.
type kubeEmu struct{ api *kube.API }

func makeKubeEmu(sim.Options) (Emulator, error) {
	e := &kubeEmu{api: kube.New("/k8s")}
	e.api.SyncNodes("id-a", "pool", "p", []kube.NodeSpec{{Name: "a-1", Labels: map[string]string{"pool": "p"}, Ready: true}, {Name: "a-2", Labels: map[string]string{"pool": "p"}, Ready: true}}, kube.Propagate)
	e.api.SyncNodes("id-b", "pool", "p", []kube.NodeSpec{{Name: "b-1", Labels: map[string]string{"pool": "p"}, Ready: true}}, kube.Propagate)
	return e, nil
}

func (e *kubeEmu) ServeHTTP(w http.ResponseWriter, r *http.Request) { e.api.ServeHTTP(w, r) }
func (e *kubeEmu) SetCA(pem []byte)                                 { e.api.SetCA(pem) }
func (e *kubeEmu) Clusters(string) []kpool.Cluster                  { return nil }
func (e *kubeEmu) Describe(io.Writer, string)                       {}
func (e *kubeEmu) Identity() (kpool.PlatformType, any)              { return "", nil }
func (e *kubeEmu) Kubeconfigs(endpoint string) map[string]string {
	return map[string]string{"demo-a": e.api.Kubeconfig(endpoint, "id-a", "demo-a"), "demo-b": e.api.Kubeconfig(endpoint, "id-b", "demo-b")}
}

// banner is a writer that says when Run's banner has come.
type banner struct {
	mu   sync.Mutex
	buf  strings.Builder
	once sync.Once
	done chan struct{}
}

func (b *banner) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	b.once.Do(func() { close(b.done) })
	return len(p), nil
}

// runBanner runs Run with the kube emulator until the test ends, and
// returns its banner.
func runBanner(t *testing.T, caFile, kubeDir string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &banner{done: make(chan struct{})}
	exited := make(chan error, 1)
	cfg := Config{Emulators: map[string]Maker{"kubes": makeKubeEmu}, Options: Defaults(), KubeconfigDir: kubeDir}
	go func() { exited <- Run(ctx, cfg, caFile, out) }()
	t.Cleanup(func() {
		cancel()
		if err := <-exited; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	select {
	case <-out.done:
	case err := <-exited:
		t.Fatalf("Run ended: %v", err)
	}
	out.mu.Lock()
	defer out.mu.Unlock()
	return out.buf.String()
}

// TestRunKubeconfigs: Run writes each emulated cluster's kubeconfig
// beside the CA file (or in KubeconfigDir), 0600, prints a kubectl line
// for each and never a token; client-go built from a file reaches its
// cluster's nodes only. With neither folder, nothing is written and the
// banner says why.
func TestRunKubeconfigs(t *testing.T) {
	dir := t.TempDir()
	text := runBanner(t, filepath.Join(dir, "ca.pem"), "")
	for name, want := range map[string]int{"demo-a": 2, "demo-b": 1} {
		path := filepath.Join(dir, "kubeconfig-"+name+".yaml")
		if !strings.Contains(text, "  "+name+": kubectl --kubeconfig "+path+" get nodes\n") {
			t.Fatalf("no kubectl line for %s:\n%s", name, text)
		}
		st, err := os.Stat(path)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v, %v", path, st, err)
		}
		raw, _ := os.ReadFile(path)
		cfg, err := clientcmd.Load(raw)
		if err != nil || strings.Contains(text, cfg.AuthInfos[name].Token) {
			t.Fatalf("%s: %v (or its token printed)", path, err)
		}
		rc, err := clientcmd.BuildConfigFromFlags("", path)
		if err != nil {
			t.Fatal(err)
		}
		nodes, err := kubernetes.NewForConfigOrDie(rc).CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
		if err != nil || len(nodes.Items) != want {
			t.Fatalf("%s: %v nodes, %v; want %d", name, nodes, err, want)
		}
	}

	other := t.TempDir()
	text = runBanner(t, "", other)
	if _, err := os.Stat(filepath.Join(other, "kubeconfig-demo-a.yaml")); err != nil || !strings.Contains(text, "kubectl --kubeconfig "+other) {
		t.Fatalf("--kubeconfig-dir: %v\n%s", err, text)
	}
	text = runBanner(t, "", "")
	if !strings.Contains(text, "kubeconfigs not written: pass --ca-file or --kubeconfig-dir") || strings.Contains(text, "kubectl --kubeconfig") {
		t.Fatalf("no folder:\n%s", text)
	}
}

// TestWriteKubeconfigsNames: a cluster name that is not a plain file name
// is refused rather than written elsewhere.
func TestWriteKubeconfigsNames(t *testing.T) {
	for name, ok := range map[string]bool{"demo-aks": true, "a.b_c": true, "../x": false, ".hidden": false, "a/b": false, "": false} {
		if fileSafe(name) != ok {
			t.Errorf("fileSafe(%q) = %v", name, !ok)
		}
	}
}

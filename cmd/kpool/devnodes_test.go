package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog/clouds"
)

// TestDevNodes is issue 33's "done when" on kpool dev: on each demo
// cluster, a pool's nodes are listed by kpool.dev/node-pool=web with the
// kubeconfig `kpool cluster kubeconfig` prints (client-go, and the real
// kubectl where it is installed), carrying the cloud's own pool label; the
// count follows a scale up and down; a node made NotReady at the emulated
// API (its status subresource, as a kubelet reports) makes the pool not
// Ready, and a node stripped of its placement label gets it back; one
// watch per cluster (kpool_node_watches).
func TestDevNodes(t *testing.T) {
	ctx := context.Background()
	clock := sim.NewManualClock(time.Now())
	polls := clockWaits(clock)
	printed := startDev(t, clock)
	m := regexp.MustCompile(`export KPOOL_SERVER=(\S+) KPOOL_TOKEN=(\S+)`).FindStringSubmatch(printed)
	var creates []string
	for _, line := range strings.Split(printed, "\n") {
		if args, ok := strings.CutPrefix(strings.TrimSpace(line), "go run ./cmd/kpool nodepool create "); ok {
			creates = append(creates, args)
		}
	}
	if m == nil || len(creates) != len(clouds.Emulators()) {
		t.Fatalf("kpool dev printed %d nodepool creates for %d emulators:\n%s", len(creates), len(clouds.Emulators()), printed)
	}
	cli := func(args ...string) string {
		t.Helper()
		out, stderr, err := executeOn(polls, "", append(args, "--server", m[1], "--token", m[2], "--timeout", "2m", "-o", "json")...)
		if err != nil {
			t.Fatalf("kpool %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		return out
	}
	c := api.NewClient(m[1], "")
	c.Token = m[2]
	for _, args := range creates {
		var p kpool.NodePool
		if err := json.Unmarshal([]byte(cli(append([]string{"nodepool", "create"}, strings.Fields(args)...)...)), &p); err != nil {
			t.Fatal(err)
		}
		cl, err := c.Cluster(ctx, p.ClusterID)
		if err != nil {
			t.Fatal(err)
		}
		name := string(cl.Spec.Platform.Type)
		kc, err := c.Kubeconfig(ctx, cl.ID, "")
		if err != nil {
			t.Fatalf("%s: kubeconfig: %v", name, err)
		}
		file := filepath.Join(t.TempDir(), "kubeconfig")
		if err := os.WriteFile(file, kc, 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cs := kubernetes.NewForConfigOrDie(cfg)
		poolLabel := profiles.Profile(cl.Spec.Platform.Type).PoolLabel()
		web := func() []corev1.Node {
			t.Helper()
			l, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: provider.LabelPool + "=web"})
			if err != nil {
				t.Fatalf("%s: listing nodes: %v", name, err)
			}
			for _, n := range l.Items {
				if n.Labels[poolLabel] != p.ProviderName {
					t.Fatalf("%s: node %s has %s=%q, want %q", name, n.Name, poolLabel, n.Labels[poolLabel], p.ProviderName)
				}
			}
			return l.Items
		}
		if n := web(); len(n) != 3 {
			t.Errorf("%s: %d nodes labelled web after create --wait, want 3", name, len(n))
		}
		kubectl(t, name, file, 3)
		for _, count := range []int{5, 2} {
			cli("nodepool", "scale", p.ID, "--count", fmt.Sprint(count), "--wait")
			if n := web(); len(n) != count {
				t.Errorf("%s: %d nodes labelled web after scale --wait to %d", name, len(n), count)
			}
		}
		notReadyThenLabel(t, c, cs, p, web()[0].Name)
	}
	if got := gauge(t, m[1], "kpool_node_watches"); got != fmt.Sprint(len(creates)) {
		t.Errorf("kpool_node_watches %s, want one per cluster with pools (%d)", got, len(creates))
	}
}

// notReadyThenLabel makes a node of p NotReady at the emulated API and
// waits for the pool to say so; then strips its placement label and waits
// for kpool to put it back.
func notReadyThenLabel(t *testing.T, c *api.Client, cs kubernetes.Interface, p kpool.NodePool, node string) {
	t.Helper()
	ctx := context.Background()
	status := func(ready string) {
		body := fmt.Sprintf(`{"status":{"conditions":[{"type":"Ready","status":%q,"reason":"Test"}]}}`, ready)
		if _, err := cs.CoreV1().Nodes().Patch(ctx, node, types.StrategicMergePatchType, []byte(body), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatal(err)
		}
	}
	status("False")
	untilPool(t, c, func() (bool, string) {
		got, err := c.NodePool(ctx, p.ID)
		if err != nil {
			return false, err.Error()
		}
		return got.Status.Phase != kpool.PhaseReady && got.Status.Nodes != nil && got.Status.Nodes.Ready == got.Status.Nodes.Total-1,
			fmt.Sprintf("%s %s, nodes %+v", got.Status.Phase, got.Status.Message, got.Status.Nodes)
	})
	status("True")
	strip := fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, provider.LabelPool)
	if _, err := cs.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, []byte(strip), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	untilNode(t, cs, node, func(n *corev1.Node) bool { return n.Labels[provider.LabelPool] == "web" }, func() string {
		doc, err := c.NodePoolStatus(ctx, p.ID)
		if err != nil {
			return err.Error()
		}
		b, _ := json.Marshal(doc.ControllerStatus)
		return string(b)
	})
	untilPool(t, c, func() (bool, string) {
		got, err := c.NodePool(ctx, p.ID)
		if err != nil {
			return false, err.Error()
		}
		return got.Status.Phase == kpool.PhaseReady, string(got.Status.Phase) + " " + got.Status.Message
	})
}

// kubectl runs the real kubectl with the kubeconfig file, where it is
// installed (KPOOL_KUBECTL=required: it must be), and checks it lists want
// nodes labelled web.
func kubectl(t *testing.T, name, file string, want int) {
	t.Helper()
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		if os.Getenv("KPOOL_KUBECTL") == "required" {
			t.Fatal("kubectl is not installed (Debian: apt-get install kubernetes-client)")
		}
		return
	}
	cmd := exec.Command(bin, "--kubeconfig", file, "get", "nodes", "-l", provider.LabelPool+"=web", "-o", "name")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBECACHEDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: kubectl get nodes: %v\n%s", name, err, out)
	}
	if got := len(strings.Fields(string(out))); got != want {
		t.Errorf("%s: kubectl lists %d nodes, want %d:\n%s", name, got, want, out)
	}
}

// untilPool waits, on the server's live feed, until cond holds of the
// state it reads, failing after a minute with what cond last said.
func untilPool(t *testing.T, c *api.Client, cond func() (bool, string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	why := ""
	check := func() error {
		var ok bool
		if ok, why = cond(); ok {
			return errDone
		}
		return nil
	}
	err := c.Watch(ctx, check, func([]api.Change) error { return check() })
	if err != errDone {
		t.Fatalf("not so after a minute (%v): %s", err, why)
	}
}

var errDone = fmt.Errorf("done")

// untilNode watches a node at the emulated API until cond holds of it,
// failing after a minute.
func untilNode(t *testing.T, cs kubernetes.Interface, name string, cond func(*corev1.Node) bool, why func() string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cond(n) {
		return
	}
	w, err := cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: n.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if n, ok := ev.Object.(*corev1.Node); ok && cond(n) {
			return
		}
	}
	t.Fatalf("node %s: not so after a minute: %s", name, why())
}

// gauge reads a gauge's value from the server's /metrics.
func gauge(t *testing.T, server, name string) string {
	t.Helper()
	resp, err := http.Get(server + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	return "absent"
}

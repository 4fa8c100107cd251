package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog/clouds"
	"github.com/kpool/kpool/service"
)

// TestDevCapacity: on each demo cluster a logical pool of 6 nodes over 3
// zones (one offering on a cloud without zones); zone 2 runs out of its
// machine type (through kpool cloudsim capacity) while it scales to 9; 9
// nodes become Ready elsewhere and its status says why; once zone 2 is
// restored the pool returns to its preferred layout, and the Kubernetes
// API never shows fewer than 6 of its nodes Ready. Where the cloud has
// spot, a spot logical pool falls back to on-demand the same way.
func TestDevCapacity(t *testing.T) {
	clock := sim.NewManualClock(time.Now())
	runClock(t, clock)
	printed := startDev(t, clock)
	m := regexp.MustCompile(`export KPOOL_SERVER=(\S+) KPOOL_TOKEN=(\S+)`).FindStringSubmatch(printed)
	banner := regexp.MustCompile(`go run ./cmd/kpool nodepool create (web --cluster (\S+) --machine-type (\S+) .*) --wait`).FindAllStringSubmatch(printed, -1)
	kc := regexp.MustCompile(`kubectl --kubeconfig (\S+) get nodes`).FindStringSubmatch(printed)
	if m == nil || kc == nil || len(banner) != len(clouds.Emulators()) {
		t.Fatalf("kpool dev printed %d clusters for %d emulators:\n%s", len(banner), len(clouds.Emulators()), printed)
	}
	e := capEnv{server: m[1], token: m[2], caFile: filepath.Join(filepath.Dir(kc[1]), devCAFile)}
	e.c = api.NewClient(e.server, "")
	e.c.Token = e.token
	for _, b := range banner {
		list, err := e.c.Clusters(context.Background(), service.ListOptions{Name: b[2]})
		if err != nil || len(list.Clusters) != 1 {
			t.Fatalf("cluster %s: %v %v", b[2], list, err)
		}
		cl, create, machine := list.Clusters[0], strings.Fields(b[1]), b[3]
		t.Run(string(cl.Spec.Platform.Type), func(t *testing.T) {
			t.Parallel()
			e.capacityOn(t, cl, create, machine)
		})
	}
}

// capEnv is how the test reaches kpool dev.
type capEnv struct {
	server, token, caFile string
	c                     *api.Client
}

// capacityOn runs the zone's exhaustion and restoration on one cluster,
// then the spot fallback where the cloud has spot.
func (e capEnv) capacityOn(t *testing.T, cl *kpool.Cluster, create []string, machine string) {
	ctx := context.Background()
	prof := profiles.Profile(cl.Spec.Platform.Type)
	zoned := prof.Capabilities().Zones != provider.ZonesNone
	tmpl := e.template(t, create, zoned)
	fallback := e.fallbackType(t, cl, tmpl, machine, zoned)
	cs := e.kube(t, cl)

	lp := e.makeLogical(t, cl, "cap", 6, tmpl, []kpool.Fallback{{MachineType: fallback}})
	e.waitLogical(t, cl, lp.Name, "6 nodes Ready", func(lp *kpool.LogicalPool) bool {
		return lp.Status.ReadyNodes == 6 && readyNodes(ctx, cs, "cap") == 6
	})
	low := sampleReady(t, cs, "cap", 6)
	zone := ""
	if zoned {
		z, err := prof.ProviderZone(cl, "2")
		if err != nil {
			t.Fatal(err)
		}
		zone = z
	}
	e.setCapacity(t, cl, zone, machine, false, 0)
	start := time.Now()
	if _, err := e.c.UpdateLogicalPool(ctx, cl.ID, "cap", api.LogicalPoolBody{Spec: json.RawMessage(`{"nodeCount":9}`)}, true); err != nil {
		t.Fatal(err)
	}
	got := e.waitLogical(t, cl, "cap", "9 nodes Ready with zone 2 out", func(lp *kpool.LogicalPool) bool {
		return lp.Status.ReadyNodes >= 9 && len(lp.Status.Unavailable) > 0 && readyNodes(ctx, cs, "cap") >= 9
	})
	t.Logf("%s: 9 nodes Ready %v after the scale to 9 with zone %q out of %s: %s", cl.Name, time.Since(start).Round(time.Millisecond), zone, machine, got.Status.Message)
	if !strings.Contains(got.Status.Message, "out of capacity since") || !strings.Contains(got.Status.Message, "instead") {
		t.Errorf("status message %q does not say what ran out and where the nodes run instead", got.Status.Message)
	}
	e.setCapacity(t, cl, zone, machine, false, -1)
	back := time.Now()
	e.waitLogical(t, cl, "cap", "the preferred layout again", func(lp *kpool.LogicalPool) bool {
		return preferredLayout(lp, 9) && readyNodes(ctx, cs, "cap") == 9
	})
	t.Logf("%s: back in the preferred layout %v after zone %q was restored", cl.Name, time.Since(back).Round(time.Millisecond), zone)
	if n := low(); n < 6 {
		t.Errorf("%s: %d nodes of the logical pool Ready at the lowest, under 6", cl.Name, n)
	}
	e.deleteLogical(t, cl, "cap")
	if prof.Capabilities().Spot && zoned {
		e.spotFallback(t, cl, tmpl, cs)
	}
}

// spotFallback: a spot logical pool of 2 nodes in zone 1 whose spot
// capacity is gone runs on demand, and returns to spot once it is back.
func (e capEnv) spotFallback(t *testing.T, cl *kpool.Cluster, tmpl kpool.NodePoolSpec, cs kubernetes.Interface) {
	ctx := context.Background()
	prof := profiles.Profile(cl.Spec.Platform.Type)
	b := prof.Block(cl, &tmpl)
	b.Spot = true
	prof.SetBlock(&tmpl, b)
	tmpl.Zones = []string{"1"}
	zone, err := prof.ProviderZone(cl, "1")
	if err != nil {
		t.Fatal(err)
	}
	e.setCapacity(t, cl, zone, b.MachineType, true, 0)
	onDemand := false
	e.makeLogical(t, cl, "spot", 2, tmpl, []kpool.Fallback{{Spot: &onDemand}})
	e.waitLogical(t, cl, "spot", "2 on-demand nodes Ready", func(lp *kpool.LogicalPool) bool {
		return lp.Status.ReadyNodes == 2 && countOn(lp, 1) == 2 && readyNodes(ctx, cs, "spot") == 2
	})
	e.setCapacity(t, cl, zone, b.MachineType, true, -1)
	e.waitLogical(t, cl, "spot", "back on spot", func(lp *kpool.LogicalPool) bool {
		return preferredLayout(lp, 2) && readyNodes(ctx, cs, "spot") == 2
	})
	e.deleteLogical(t, cl, "spot")
}

// template is the banner's pool spec (from a dry run of its create) as a
// logical pool's template: in zones 1, 2 and 3 where the cloud has zones.
func (e capEnv) template(t *testing.T, create []string, zoned bool) kpool.NodePoolSpec {
	args := append([]string{"nodepool", "create"}, create...)
	args = append(args, "--dry-run", "-o", "json", "--server", e.server, "--token", e.token)
	out, stderr, err := executeOn(pollEvery(5*time.Millisecond), "", args...)
	if err != nil {
		t.Fatalf("kpool %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	var dr struct{ NodePool kpool.NodePool }
	var p kpool.NodePool
	if json.Unmarshal([]byte(out), &dr) == nil && dr.NodePool.Name != "" {
		p = dr.NodePool
	} else if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("dry run output: %v\n%s", err, out)
	}
	s := p.Spec
	s.NodeCount, s.Autoscaling, s.PlacementPool, s.Zones = nil, nil, "", nil
	if zoned {
		s.Zones = []string{"1", "2", "3"}
	}
	return s
}

// fallbackType is another machine type the cluster offers in every zone
// of the template that the logical pool takes (tried in dry runs).
func (e capEnv) fallbackType(t *testing.T, cl *kpool.Cluster, tmpl kpool.NodePoolSpec, machine string, zoned bool) string {
	ctx := context.Background()
	var facts *kpool.ClusterFacts
	waitFor(t, time.Minute, func() (bool, string) {
		f, err := e.c.ClusterFacts(ctx, cl.ID)
		facts = f
		return err == nil && f != nil && len(f.MachineTypes) > 0, fmt.Sprintf("facts %v", err)
	})
	for _, mt := range facts.MachineTypes {
		if mt.Name == machine || mt.GPUs > 0 || (zoned && mt.Zones != nil && !containsAll(mt.Zones, "1", "2", "3")) {
			continue
		}
		body := logicalBody(t, "probe", 6, tmpl, []kpool.Fallback{{MachineType: mt.Name}})
		if _, err := e.c.DryRunCreateLogicalPool(ctx, cl.ID, body); err == nil {
			return mt.Name
		}
	}
	t.Fatalf("%s offers no fallback machine type for %s", cl.Name, machine)
	return ""
}

func containsAll(have []string, want ...string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

func logicalBody(t *testing.T, name string, n int, tmpl kpool.NodePoolSpec, fb []kpool.Fallback) api.LogicalPoolBody {
	spec := kpool.LogicalPoolSpec{NodeCount: &n, Template: tmpl, Fallbacks: fb,
		Capacity: &kpool.CapacityPolicy{UnavailableFor: "10s", MinMoveInterval: "0s"}}
	raw, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	return api.LogicalPoolBody{Name: &name, Spec: raw}
}

func (e capEnv) makeLogical(t *testing.T, cl *kpool.Cluster, name string, n int, tmpl kpool.NodePoolSpec, fb []kpool.Fallback) *kpool.LogicalPool {
	lp, err := e.c.CreateLogicalPool(context.Background(), cl.ID, logicalBody(t, name, n, tmpl, fb))
	if err != nil {
		t.Fatalf("%s: logical pool %s: %v", cl.Name, name, err)
	}
	return lp
}

// waitLogical polls the logical pool until ok holds; it returns it.
func (e capEnv) waitLogical(t *testing.T, cl *kpool.Cluster, name, what string, ok func(*kpool.LogicalPool) bool) *kpool.LogicalPool {
	t.Helper()
	var lp *kpool.LogicalPool
	waitFor(t, 3*time.Minute, func() (bool, string) {
		got, err := e.c.LogicalPool(context.Background(), cl.ID, name)
		if err != nil {
			return false, err.Error()
		}
		lp = got
		if ok(got) {
			return true, ""
		}
		st, _ := json.Marshal(got.Status)
		why := fmt.Sprintf("%s: waiting for %s: %s", cl.Name, what, st)
		for _, m := range got.Status.Members {
			if p, err := e.c.NodePool(context.Background(), m.ID); err == nil {
				why += fmt.Sprintf("\n  member %s: %s %s", p.Name, p.Status.Phase, p.Status.Message)
			}
		}
		return false, why
	})
	return lp
}

func (e capEnv) deleteLogical(t *testing.T, cl *kpool.Cluster, name string) {
	ctx := context.Background()
	if _, _, err := e.c.DeleteLogicalPool(ctx, cl.ID, name); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Minute, func() (bool, string) {
		list, err := e.c.NodePools(ctx, service.ListOptions{ClusterID: cl.ID, Limit: 100})
		if err != nil {
			return false, err.Error()
		}
		var left []string
		for _, p := range list.NodePools {
			if p.LogicalPool() == name {
				left = append(left, p.Name)
			}
		}
		return len(left) == 0, fmt.Sprintf("members left: %v", left)
	})
}

// setCapacity runs kpool cloudsim capacity against the cluster's emulator.
func (e capEnv) setCapacity(t *testing.T, cl *kpool.Cluster, zone, machine string, spot bool, n int) {
	args := []string{"cloudsim", "capacity", cl.Spec.Endpoint, "--machine-type", machine, "--available", fmt.Sprint(n), "--ca-file", e.caFile}
	if zone != "" {
		args = append(args, "--zone", zone)
	}
	if spot {
		args = append(args, "--spot")
	}
	if _, stderr, err := executeOn(pollEvery(5*time.Millisecond), "", args...); err != nil {
		t.Fatalf("kpool %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
}

func (e capEnv) kube(t *testing.T, cl *kpool.Cluster) kubernetes.Interface {
	kc, err := e.c.Kubeconfig(context.Background(), cl.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(cfg)
}

// readyNodes counts the logical pool's Ready nodes in Kubernetes (-1 when
// the API does not answer).
func readyNodes(ctx context.Context, cs kubernetes.Interface, logical string) int {
	l, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: provider.LabelPool + "=" + logical})
	if err != nil {
		return -1
	}
	n := 0
	for _, node := range l.Items {
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				n++
			}
		}
	}
	return n
}

// sampleReady samples the logical pool's Ready nodes until the returned
// func is called, which returns the lowest count seen.
func sampleReady(t *testing.T, cs kubernetes.Interface, logical string, start int) func() int {
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	low := start
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if n := readyNodes(ctx, cs, logical); n >= 0 && ctx.Err() == nil {
				mu.Lock()
				low = min(low, n)
				mu.Unlock()
			}
			time.Sleep(5 * time.Millisecond) // a sampler's pace, not a wait for state
		}
	}()
	stop := func() int {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return low
	}
	t.Cleanup(func() { stop() })
	return stop
}

// preferredLayout: n nodes Ready, nothing unavailable, the template's
// members hold them all and no fallback member holds any.
func preferredLayout(lp *kpool.LogicalPool, n int) bool {
	if len(lp.Status.Unavailable) > 0 || lp.Status.ReadyNodes != n || lp.Status.ObservedGeneration != lp.Generation {
		return false
	}
	return countOn(lp, 0) == n && countOn(lp, 1) == 0
}

// countOn is the nodes the made members of a rank hold (asked and Ready).
func countOn(lp *kpool.LogicalPool, rank int) int {
	n := 0
	for _, m := range lp.Status.Members {
		if m.Made && m.Alternative == rank {
			n += min(m.NodeCount, m.ReadyNodes)
		}
	}
	return n
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
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

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog/clouds"
	"github.com/kpool/kpool/service"
)

// TestDevReplace: on each demo cluster a pool of 3 nodes runs a
// Deployment of 6 replicas under a PodDisruptionBudget of minAvailable 5;
// a change its cloud cannot make in place is carried out by a successor
// pool (OKE: by cycling the nodes), and a sampler of the emulated API
// never sees fewer than 5 replicas running; afterwards the old pool is
// gone and the pool keeps its id and name.
func TestDevReplace(t *testing.T) {
	ctx := context.Background()
	clock := sim.NewManualClock(time.Now())
	runClock(t, clock)
	printed := startDev(t, clock)
	m := regexp.MustCompile(`export KPOOL_SERVER=(\S+) KPOOL_TOKEN=(\S+)`).FindStringSubmatch(printed)
	clusters := regexp.MustCompile(`go run ./cmd/kpool nodepool create (web --cluster (\S+) .*) --wait`).FindAllStringSubmatch(printed, -1)
	if m == nil || len(clusters) != len(clouds.Emulators()) {
		t.Fatalf("kpool dev printed %d clusters for %d emulators:\n%s", len(clusters), len(clouds.Emulators()), printed)
	}
	c := api.NewClient(m[1], "")
	c.Token = m[2]
	for _, cm := range clusters {
		list, err := c.Clusters(ctx, service.ListOptions{Name: cm[2]})
		if err != nil || len(list.Clusters) != 1 {
			t.Fatalf("cluster %s: %v %v", cm[2], list, err)
		}
		cl := list.Clusters[0]
		create := append([]string{"nodepool", "create"}, strings.Fields(cm[1])...)
		create = append(create, "--replacement", "Surge", "--max-surge", "1", "--server", m[1], "--token", m[2], "-o", "json")
		t.Run(string(cl.Spec.Platform.Type), func(t *testing.T) { replaceOn(t, c, cl, create) })
	}
}

// replaceOn runs the replacement on one demo cluster: the pool is made
// with the banner's create (and --replacement Surge), and changed in what
// its cloud does not change in place.
func replaceOn(t *testing.T, c *api.Client, cl *kpool.Cluster, create []string) {
	ctx := context.Background()
	out, stderr, err := executeOn(pollEvery(5*time.Millisecond), "", create...)
	if err != nil {
		t.Fatalf("kpool %s: %v\n%s", strings.Join(create, " "), err, stderr)
	}
	var p kpool.NodePool
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Minute, func() (bool, string) {
		got, err := c.NodePool(ctx, p.ID)
		return err == nil && got.Status.Phase == kpool.PhaseReady, fmt.Sprintf("phase %v %v", got, err)
	})
	kc, err := c.Kubeconfig(ctx, cl.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	workload(t, cs)
	waitFor(t, time.Minute, func() (bool, string) {
		n := running(ctx, cs)
		return n == 6, fmt.Sprintf("%d of 6 replicas running", n)
	})
	low := sampleRunning(t, cs)

	change, cycles := replaceChange(t, c, cl, &p)
	if _, err := c.UpdateNodePool(ctx, p.ID, api.NodePoolBody{Spec: change}, false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Minute, func() (bool, string) {
		got, err := c.NodePool(ctx, p.ID)
		if err != nil {
			return false, err.Error()
		}
		if cycles {
			var cond *kpool.Condition
			for i := range got.Status.Conditions {
				if got.Status.Conditions[i].Type == kpool.ConditionNodesCurrent {
					cond = &got.Status.Conditions[i]
				}
			}
			return cond != nil && cond.Status == kpool.ConditionTrue && got.Status.Phase == kpool.PhaseReady,
				fmt.Sprintf("NodesCurrent %+v, phase %s", cond, got.Status.Phase)
		}
		rp := got.Status.Replacement
		return rp != nil && rp.Step == kpool.StepDone && got.ProviderName == rp.To && got.Status.Phase == kpool.PhaseReady,
			fmt.Sprintf("replacement %+v, provider name %s, phase %s", rp, got.ProviderName, got.Status.Phase)
	})
	if n := low(); n < 5 {
		t.Errorf("%d replicas running at the lowest, under the budget's 5", n)
	}
	got, err := c.NodePool(ctx, p.ID)
	if err != nil || got.ID != p.ID || got.Name != "web" {
		t.Fatalf("after: %+v %v", got, err)
	}
	poolLabel := profiles.Profile(cl.Spec.Platform.Type).PoolLabel()
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if !cycles && n.Labels[poolLabel] == p.ProviderName {
			t.Errorf("node %s of the old pool %s is left", n.Name, p.ProviderName)
		}
	}
	scaleDown(t, c, cs, p.ID, cl.Spec.Platform.Type)
	// The workload goes first: a pool's delete drains its nodes, and its
	// budget would hold the drain with nowhere else to run.
	if err := cs.AppsV1().Deployments("shop").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.PolicyV1().PodDisruptionBudgets("shop").Delete(ctx, "web-pdb", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.DeleteNodePool(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Minute, func() (bool, string) {
		_, err := c.NodePool(ctx, p.ID)
		return kpool.IsNotFound(err), fmt.Sprintf("pool still there: %v", err)
	})
}

// replaceChange returns a spec of p that its cloud cannot make in place: another
// machine type the cluster offers in the pool's zone (from its facts), or
// spot; cycles says the cloud applies it to new nodes only (the pool is
// cycled, not replaced). Each candidate is tried in a dry run.
func replaceChange(t *testing.T, c *api.Client, cl *kpool.Cluster, p *kpool.NodePool) (json.RawMessage, bool) {
	ctx := context.Background()
	prof := profiles.Profile(cl.Spec.Platform.Type)
	var facts *kpool.ClusterFacts
	waitFor(t, time.Minute, func() (bool, string) {
		f, err := c.ClusterFacts(ctx, cl.ID)
		facts = f
		return err == nil && f != nil && len(f.MachineTypes) > 0, fmt.Sprintf("facts %v", err)
	})
	cur := prof.Block(cl, &p.Spec)
	var candidates []provider.Block
	for _, mt := range facts.MachineTypes {
		if mt.Name != cur.MachineType && mt.GPUs == 0 && (mt.Zones == nil || slices.Contains(mt.Zones, "1")) {
			b := cur
			b.MachineType = mt.Name
			candidates = append(candidates, b)
		}
	}
	spot := cur
	spot.Spot = true
	candidates = append(candidates, spot)
	for _, b := range candidates {
		s := p.Spec
		prof.SetBlock(&s, b)
		raw, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		dr, err := c.DryRunNodePool(ctx, p.ID, api.NodePoolBody{Spec: raw}, false)
		if err != nil || dr.Plan == nil || dr.Refused != nil {
			continue
		}
		for _, ch := range dr.Plan.Changes {
			if ch.Class == kpool.UpdateReplace || ch.Class == kpool.UpdateNewNodesOnly {
				t.Logf("%s: %s %v -> %v (%s)", cl.Name, ch.Field, ch.From, ch.To, ch.Class)
			}
			switch ch.Class {
			case kpool.UpdateReplace:
				return raw, false
			case kpool.UpdateNewNodesOnly:
				return raw, true
			}
		}
	}
	t.Fatalf("no change of %s's pool that needs a new pool or new nodes", cl.Name)
	return nil, false
}

// scaleDown lowers the pool to 2 nodes; where its driver removes chosen
// nodes, kpool drains them first, and the budget is never broken.
func scaleDown(t *testing.T, c *api.Client, cs kubernetes.Interface, id string, pt kpool.PlatformType) {
	ctx := context.Background()
	removes := false
	for _, cloud := range clouds.All() {
		if cloud.Profile.Type() == pt {
			_, removes = cloud.Driver(provider.DriverOptions{}).(provider.NodeRemover)
		}
	}
	if !removes {
		t.Logf("%s's driver does not remove chosen nodes: its scale-down is the cloud's", pt)
		return
	}
	low := sampleRunning(t, cs)
	if _, err := c.UpdateNodePool(ctx, id, api.NodePoolBody{Spec: json.RawMessage(`{"nodeCount":2}`)}, true); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Minute, func() (bool, string) {
		got, err := c.NodePool(ctx, id)
		if err != nil {
			return false, err.Error()
		}
		n := got.Status.Nodes
		return got.Status.Phase == kpool.PhaseReady && n != nil && n.Total == 2 && got.Status.ObservedGeneration == got.Generation,
			fmt.Sprintf("phase %s, nodes %+v: %s", got.Status.Phase, n, got.Status.Message)
	})
	if n := low(); n < 5 {
		t.Errorf("%d replicas running at the lowest during the scale-down, under the budget's 5", n)
	}
}

// workload is the Deployment of 6 replicas on the pool's nodes and its
// budget of minAvailable 5.
func workload(t *testing.T, cs kubernetes.Interface) {
	ctx := context.Background()
	six, five := int32(6), intstr.FromInt32(5)
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec: appsv1.DeploymentSpec{Replicas: &six, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{NodeSelector: map[string]string{provider.LabelPool: "web"},
					Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}}}}
	if _, err := cs.AppsV1().Deployments("shop").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web-pdb", Namespace: "shop"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &five, Selector: &metav1.LabelSelector{MatchLabels: labels}}}
	if _, err := cs.PolicyV1().PodDisruptionBudgets("shop").Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// running counts the Deployment's pods that run and are Ready.
func running(ctx context.Context, cs kubernetes.Interface) int {
	l, err := cs.CoreV1().Pods("shop").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		return -1
	}
	n := 0
	for _, p := range l.Items {
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				n++
			}
		}
	}
	return n
}

// sampleRunning samples the running replicas until the returned func is
// called, which returns the lowest count seen.
func sampleRunning(t *testing.T, cs kubernetes.Interface) func() int {
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	low := 6
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if n := running(ctx, cs); n >= 0 && ctx.Err() == nil {
				mu.Lock()
				low = min(low, n)
				mu.Unlock()
			}
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

// waitFor polls cond on the wall clock until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	end := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("not so after %v: %s", timeout, why)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

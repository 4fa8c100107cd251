package driver_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/kubeapi"
	"github.com/kpool/kpool/provider"
)

// pool is the listed pool of a provider name.
func (e *emulated) pool(t *testing.T, name string) provider.Pool {
	t.Helper()
	pools, err := e.Driver.NodePoolList(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pools {
		if p.ProviderName == name {
			return p
		}
	}
	t.Fatalf("no pool %s in %+v", name, pools)
	return provider.Pool{}
}

// TestUpgradeSettings: a pool's strategy is sent as OKE's cycling and
// eviction settings at create (node cycling off) and read back; a
// change of it is an update of those alone, and no drift is left.
func TestUpgradeSettings(t *testing.T) {
	e := newEmulated(t)
	s := e.spec("web")
	s.Upgrade = &provider.Upgrade{MaxSurge: "2", MaxUnavailable: "50%", DrainTimeout: 30 * time.Minute, Force: true}
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	st, _ := e.Sim.PoolOf(clusterID, "web")
	cd, ev := st.NodePoolCyclingDetails, st.NodeEvictionNodePoolSettings
	if cd == nil || ev == nil || *cd.MaximumSurge != "2" || *cd.MaximumUnavailable != "50%" || ptr.Deref(cd.IsNodeCyclingEnabled, false) ||
		*ev.EvictionGraceDuration != "PT30M" || !*ev.IsForceDeleteAfterGraceDuration {
		t.Fatalf("sent: %+v %+v", cd, ev)
	}
	got := e.pool(t, "web")
	if got.Upgrade == nil || *got.Upgrade != *s.Upgrade {
		t.Fatalf("read back %+v, want %+v", got.Upgrade, s.Upgrade)
	}
	if d := provider.Compare(setup.Profile, s, &got); len(d) != 0 {
		t.Fatalf("drift: %+v", d)
	}
	// Behind kpool's back: the drift is seen.
	_ = e.Sim.Mutate(clusterID, "web", func(np *ce.NodePool) {
		np.NodeEvictionNodePoolSettings = &ce.NodeEvictionNodePoolSettings{EvictionGraceDuration: ptr.To("PT60M")}
	})
	got = e.pool(t, "web")
	if d := provider.Compare(setup.Profile, s, &got); len(d) != 1 || d[0].Field != provider.FieldUpgrade {
		t.Fatalf("drift of the grace: %+v", d)
	}
	s.Upgrade.DrainTimeout, s.Upgrade.MaxSurge = 45*time.Minute, "1"
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	st, _ = e.Sim.PoolOf(clusterID, "web")
	if cd, ev := st.NodePoolCyclingDetails, st.NodeEvictionNodePoolSettings; *cd.MaximumSurge != "1" || ptr.Deref(cd.IsNodeCyclingEnabled, false) ||
		*ev.EvictionGraceDuration != "PT45M" || !*ev.IsForceDeleteAfterGraceDuration {
		t.Fatalf("updated: %+v %+v", cd, ev)
	}
	if got = e.pool(t, "web"); len(provider.Compare(setup.Profile, s, &got)) != 0 || got.StaleNodes != 0 {
		t.Fatalf("after the update: %+v, %d stale", provider.Compare(setup.Profile, s, &got), got.StaleNodes)
	}
	// A pool with no strategy sends none: OKE's defaults.
	plain := e.spec("plain")
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, plain); err != nil {
		t.Fatal(err)
	}
	if st, _ := e.Sim.PoolOf(clusterID, "plain"); st.NodePoolCyclingDetails != nil || st.NodeEvictionNodePoolSettings != nil {
		t.Fatalf("settings of a pool without a strategy: %+v %+v", st.NodePoolCyclingDetails, st.NodeEvictionNodePoolSettings)
	}
}

// updates counts the UpdateNodePool calls that reached the emulator.
func (e *emulated) updates() int {
	return countCalls(e.Sim.Calls(), http.MethodPut, "/nodePools/")
}

func countCalls(calls []sim.Call, method, part string) int {
	n := 0
	for _, c := range calls {
		if c.Method == method && strings.Contains(c.Path, part) && c.Status < 300 {
			n++
		}
	}
	return n
}

// shapeChanged makes a pool of 3 nodes and changes its shape: OKE gives
// it to new nodes only, so all 3 are stale.
func (e *emulated) shapeChanged(t *testing.T, name string) provider.PoolSpec {
	t.Helper()
	s := e.spec(name)
	s.Count = 3
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	s.MachineType = "VM.Standard.E5.Flex"
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	if p := e.pool(t, name); p.StaleNodes != 3 || p.State != provider.StateReady {
		t.Fatalf("after the shape change: %d stale, %s", p.StaleNodes, p.State)
	}
	return s
}

// TestCycleReplacesStaleNodes: an update with Cycle after a shape change
// turns OKE's node cycling on; the nodes are replaced a maxSurge at a
// time (never more than the pool's size plus it), and the pool ends with
// no stale node. A Cycle with nothing stale sends no update.
func TestCycleReplacesStaleNodes(t *testing.T) {
	e := newEmulated(t)
	s := e.shapeChanged(t, "web")
	s.Upgrade = &provider.Upgrade{MaxSurge: "1", Cycle: true}
	p, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s)
	if err != nil || p.State != provider.StateUpdating {
		t.Fatalf("cycle: %+v %v", p, err)
	}
	st, _ := e.Sim.PoolOf(clusterID, "web")
	if !ptr.Deref(st.NodePoolCyclingDetails.IsNodeCyclingEnabled, false) {
		t.Fatalf("cycling details sent: %+v", st.NodePoolCyclingDetails)
	}
	most := 0
	for range 200 {
		e.Clock.Advance(5 * time.Second)
		st, _ := e.Sim.PoolOf(clusterID, "web")
		most = max(most, len(st.Nodes))
		if st.LifecycleState != ce.NodePoolLifecycleStateUpdating {
			break
		}
	}
	if most != 4 {
		t.Errorf("at most %d nodes while cycling, want 3 + maxSurge 1", most)
	}
	got := e.pool(t, "web")
	if got.StaleNodes != 0 || got.Nodes != 3 || got.ReadyNodes != 3 || got.State != provider.StateReady || got.MachineType != s.MachineType {
		t.Fatalf("after the cycle: %d stale, %d nodes (%d ready), %s", got.StaleNodes, got.Nodes, got.ReadyNodes, got.State)
	}
	before := e.updates()
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	if after := e.updates(); after != before {
		t.Fatalf("a cycle of a pool with no stale node sent %d updates", after-before)
	}
}

// TestCycleHeldByBudget: a PodDisruptionBudget that allows no disruption
// holds the cycle for the drain timeout (OKE's eviction grace); then,
// without Force, the pool fails with the work request's reason and keeps
// its stale node; with Force, the node is replaced.
func TestCycleHeldByBudget(t *testing.T) {
	for _, force := range []bool{false, true} {
		e := newEmulated(t)
		s := e.spec("db")
		s.Count = 1
		if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(time.Hour)
		e.guard(t, "db")
		s.MachineType = "VM.Standard.E5.Flex"
		s.Upgrade = &provider.Upgrade{DrainTimeout: 10 * time.Minute, Force: force, Cycle: true}
		if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(9 * time.Minute)
		if p := e.pool(t, "db"); p.State != provider.StateUpdating || p.StaleNodes != 1 {
			t.Fatalf("force %v: not held: %s, %d stale", force, p.State, p.StaleNodes)
		}
		e.Clock.Advance(2 * time.Minute)
		p := e.pool(t, "db")
		switch {
		case !force && (p.State != provider.StateFailed || p.StaleNodes != 1 || !strings.Contains(p.Message, "eviction grace duration")):
			t.Fatalf("no force: %s, %d stale: %s", p.State, p.StaleNodes, p.Message)
		case force && (p.State != provider.StateReady || p.StaleNodes != 0 || p.Nodes != 1):
			t.Fatalf("force: %s, %d stale, %d nodes", p.State, p.StaleNodes, p.Nodes)
		}
	}
}

// guard puts a Ready pod on the pool's node, under a budget that allows
// no disruption, through the cluster's Kubernetes API.
func (e *emulated) guard(t *testing.T, name string) {
	t.Helper()
	kc, err := kubeapi.Clientset(ctx, func(ctx context.Context) (*provider.KubeAccess, error) { return e.Driver.KubeAccess(ctx, e.Cluster) })
	if err != nil {
		t.Fatal(err)
	}
	st, _ := e.Sim.PoolOf(clusterID, name)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-0", Namespace: "default", Labels: map[string]string{"app": "db"}},
		Spec: corev1.PodSpec{NodeName: *st.Nodes[0].PrivateIp, Containers: []corev1.Container{{Name: "db", Image: "db"}}}}
	if _, err := e.Sim.Kube().SetPod(clusterID, pod); err != nil {
		t.Fatal(err)
	}
	if err := e.Sim.Kube().SetPodReady(clusterID, "default", "db-0", true); err != nil {
		t.Fatal(err)
	}
	zero := intstr.FromInt32(0)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &zero, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}}
	if _, err := kc.PolicyV1().PodDisruptionBudgets("default").Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

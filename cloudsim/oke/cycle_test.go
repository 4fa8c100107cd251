package oke_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// TestCyclingSettingsRules: nodePoolCyclingDetails and
// nodeEvictionNodePoolSettings as the API reference bounds them, refused
// on a create and an update alike; what is taken is returned by GET, and
// an update's members replace the pool's one by one.
func TestCyclingSettingsRules(t *testing.T) {
	e := newEnv(t, 0)
	for name, tc := range map[string]struct {
		cd *ce.NodePoolCyclingDetails
		ev *ce.NodeEvictionNodePoolSettings
	}{
		"surge not a number":        {cd: &ce.NodePoolCyclingDetails{MaximumSurge: common.String("one")}},
		"surge over 100%":           {cd: &ce.NodePoolCyclingDetails{MaximumSurge: common.String("101%")}},
		"surge over the pool size":  {cd: &ce.NodePoolCyclingDetails{MaximumSurge: common.String("4")}},
		"unavailable over the size": {cd: &ce.NodePoolCyclingDetails{MaximumUnavailable: common.String("4")}},
		"both 0":                    {cd: &ce.NodePoolCyclingDetails{MaximumSurge: common.String("0"), MaximumUnavailable: common.String("0%")}},
		"boot volume replacement":   {cd: &ce.NodePoolCyclingDetails{CycleModes: []ce.CycleModeEnum{ce.CycleModeBootVolumeReplace}}},
		"grace over PT60M":          {ev: &ce.NodeEvictionNodePoolSettings{EvictionGraceDuration: common.String("PT61M")}},
		"grace in hours over":       {ev: &ce.NodeEvictionNodePoolSettings{EvictionGraceDuration: common.String("PT2H")}},
		"grace not ISO 8601":        {ev: &ce.NodeEvictionNodePoolSettings{EvictionGraceDuration: common.String("30m")}},
	} {
		d := details("bad", 3, "Uocm:PHX-AD-1")
		d.NodePoolCyclingDetails, d.NodeEvictionNodePoolSettings = tc.cd, tc.ev
		_, err := e.client.CreateNodePool(ctx, ce.CreateNodePoolRequest{CreateNodePoolDetails: d})
		if err == nil {
			t.Fatalf("%s: create taken", name)
		}
		serviceError(t, err, http.StatusBadRequest, "InvalidParameter")
	}
	d := details("ok", 3, "Uocm:PHX-AD-1")
	d.NodePoolCyclingDetails = &ce.NodePoolCyclingDetails{MaximumSurge: common.String("3"), MaximumUnavailable: common.String("25%")}
	d.NodeEvictionNodePoolSettings = &ce.NodeEvictionNodePoolSettings{EvictionGraceDuration: common.String("PT60M"), IsForceDeleteAfterGraceDuration: common.Bool(true)}
	id := e.create(t, d)
	e.clock.Advance(time.Hour)
	np := e.get(t, id)
	if cd, ev := np.NodePoolCyclingDetails, np.NodeEvictionNodePoolSettings; cd == nil || ev == nil || *cd.MaximumSurge != "3" || *cd.MaximumUnavailable != "25%" ||
		*ev.EvictionGraceDuration != "PT60M" || !*ev.IsForceDeleteAfterGraceDuration {
		t.Fatalf("settings: %+v %+v", cd, ev)
	}
	// An update's surge is checked against the size it asks for.
	_, err := e.client.UpdateNodePool(ctx, ce.UpdateNodePoolRequest{NodePoolId: &id, UpdateNodePoolDetails: ce.UpdateNodePoolDetails{
		NodeConfigDetails: &ce.UpdateNodePoolNodeConfigDetails{Size: common.Int(2)}, NodePoolCyclingDetails: &ce.NodePoolCyclingDetails{MaximumSurge: common.String("3")}}})
	serviceError(t, err, http.StatusBadRequest, "InvalidParameter")
	if _, err := e.client.UpdateNodePool(ctx, ce.UpdateNodePoolRequest{NodePoolId: &id, UpdateNodePoolDetails: ce.UpdateNodePoolDetails{
		NodePoolCyclingDetails:       &ce.NodePoolCyclingDetails{MaximumSurge: common.String("1")},
		NodeEvictionNodePoolSettings: &ce.NodeEvictionNodePoolSettings{EvictionGraceDuration: common.String("PT0M")}}}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	np = e.get(t, id)
	if cd, ev := np.NodePoolCyclingDetails, np.NodeEvictionNodePoolSettings; *cd.MaximumSurge != "1" || *cd.MaximumUnavailable != "25%" ||
		*ev.EvictionGraceDuration != "PT0M" || !*ev.IsForceDeleteAfterGraceDuration {
		t.Fatalf("settings after the update: %+v %+v", cd, ev)
	}
}

func (e *env) get(t *testing.T, id string) ce.NodePool {
	t.Helper()
	resp, err := e.client.GetNodePool(ctx, ce.GetNodePoolRequest{NodePoolId: &id})
	if err != nil {
		t.Fatal(err)
	}
	return resp.NodePool
}

// cycleUpdate changes the pool's shape with node cycling on.
func (e *env) cycleUpdate(t *testing.T, id, surge, unavailable, grace string, force bool) *string {
	t.Helper()
	resp, err := e.client.UpdateNodePool(ctx, ce.UpdateNodePoolRequest{NodePoolId: &id, UpdateNodePoolDetails: ce.UpdateNodePoolDetails{
		NodeShape: common.String("VM.Standard.E5.Flex"),
		NodePoolCyclingDetails: &ce.NodePoolCyclingDetails{IsNodeCyclingEnabled: common.Bool(true), MaximumSurge: common.String(surge),
			MaximumUnavailable: common.String(unavailable)},
		NodeEvictionNodePoolSettings: &ce.NodeEvictionNodePoolSettings{EvictionGraceDuration: common.String(grace), IsForceDeleteAfterGraceDuration: common.Bool(force)}}})
	if err != nil {
		t.Fatal(err)
	}
	return resp.OpcWorkRequestId
}

func (e *env) work(t *testing.T, id *string) ce.WorkRequest {
	t.Helper()
	wr, err := e.client.GetWorkRequest(ctx, ce.GetWorkRequestRequest{WorkRequestId: id})
	if err != nil {
		t.Fatal(err)
	}
	return wr.WorkRequest
}

// shapes counts a pool's nodes (not being deleted) by shape, and all of
// them.
func (e *env) shapes(t *testing.T, name string) (map[string]int, int) {
	t.Helper()
	st, ok := e.emu.PoolOf(clusterID, name)
	if !ok {
		t.Fatalf("no pool %s", name)
	}
	out := map[string]int{}
	for _, n := range st.Nodes {
		if n.LifecycleState != ce.NodeLifecycleStateDeleting {
			out[st.NodeConfigs[*n.Id].Shape]++
		}
	}
	return out, len(st.Nodes)
}

// TestNodeCycling: an update with node cycling replaces every node of the
// earlier shape, never more than maximumSurge beyond the pool's size,
// each new node Ready in the cluster; the work request then succeeds and
// the pool is ACTIVE with its size of new nodes.
func TestNodeCycling(t *testing.T) {
	e := newEnv(t, 0)
	id := e.create(t, details("web", 4, "Uocm:PHX-AD-1", "Uocm:PHX-AD-2"))
	e.clock.Advance(time.Hour)
	wr := e.cycleUpdate(t, id, "2", "0", "PT30M", false)
	most := 0
	for range 100 {
		e.clock.Advance(5 * time.Second)
		_, all := e.shapes(t, "web")
		most = max(most, all)
		if e.work(t, wr).Status != ce.WorkRequestStatusInProgress {
			break
		}
	}
	if w := e.work(t, wr); w.Status != ce.WorkRequestStatusSucceeded || w.TimeFinished == nil {
		t.Fatalf("work request: %+v", w)
	}
	if most != 6 {
		t.Errorf("at most %d nodes during the cycle, want 4 + maximumSurge 2", most)
	}
	by, all := e.shapes(t, "web")
	if by["VM.Standard.E5.Flex"] != 4 || all != 4 {
		t.Fatalf("nodes after the cycle: %v (%d)", by, all)
	}
	np := e.get(t, id)
	if np.LifecycleState != ce.NodePoolLifecycleStateActive {
		t.Fatalf("pool %s", np.LifecycleState)
	}
	for _, n := range np.Nodes {
		kn, ok := e.emu.Kube().Node(clusterID, *n.PrivateIp)
		if !ok || kn.Labels["node.kubernetes.io/instance-type"] != "VM.Standard.E5.Flex" || kn.Spec.Unschedulable {
			t.Fatalf("node %s in the cluster: %v", *n.PrivateIp, kn)
		}
	}
	// A cycle with nothing stale succeeds at once, nodes untouched.
	wr = e.cycleUpdate(t, id, "1", "0", "PT30M", false)
	e.clock.Advance(time.Second)
	if w := e.work(t, wr); w.Status != ce.WorkRequestStatusSucceeded {
		t.Fatalf("cycle of current nodes: %+v", w)
	}
	if after := e.get(t, id); len(after.Nodes) != 4 || *after.Nodes[0].Id != *np.Nodes[0].Id {
		t.Fatalf("nodes changed: %+v", after.Nodes)
	}
}

// guarded puts a Ready pod on each of the pool's nodes and, over them, a
// PodDisruptionBudget that allows no disruption; and a DaemonSet's pod,
// which a drain leaves.
func (e *env) guarded(t *testing.T, name string) []string {
	t.Helper()
	st, _ := e.emu.PoolOf(clusterID, name)
	api := e.emu.Kube()
	var nodes []string
	for i, n := range st.Nodes {
		nodes = append(nodes, *n.PrivateIp)
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-" + string(rune('a'+i)), Namespace: "ns", Labels: map[string]string{"app": "db"}},
			Spec: corev1.PodSpec{NodeName: *n.PrivateIp}}
		ds := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "agent-" + string(rune('a'+i)), Namespace: "ns",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", UID: "u", Controller: ptr.To(true)}}},
			Spec: corev1.PodSpec{NodeName: *n.PrivateIp}}
		for _, p := range []*corev1.Pod{pod, ds} {
			if _, err := api.SetPod(clusterID, p); err != nil {
				t.Fatal(err)
			}
			_ = api.SetPodReady(clusterID, "ns", p.Name, true)
		}
	}
	zero := intstr.FromInt32(0)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &zero, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}}
	if _, err := e.kube(t).PolicyV1().PodDisruptionBudgets("ns").Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return nodes
}

func (e *env) kube(t *testing.T) kubernetes.Interface {
	return e.kubeClient(t, token(t, testKey, strings.TrimPrefix(e.url, "https://"), clusterID, time.Now()))
}

// kubePods are the names of the pods bound to a node, sorted.
func (e *env) kubePods(t *testing.T, node string) []string {
	t.Helper()
	list, err := e.kube(t).CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range list.Items {
		out = append(out, p.Name)
	}
	slices.Sort(out)
	return out
}

// TestCyclingHeldByBudget: a budget that allows no disruption holds the
// cycle with the old node cordoned, its pod still there, until the
// eviction grace duration is over; then, without
// isForceDeleteAfterGraceDuration, the work request fails, the pool
// NEEDS_ATTENTION and the old node stays with its pods; with it, the
// node's pods are deleted and the cycle goes on.
func TestCyclingHeldByBudget(t *testing.T) {
	for _, force := range []bool{false, true} {
		e := newEnv(t, 0)
		id := e.create(t, details("db", 1, "Uocm:PHX-AD-1"))
		e.clock.Advance(time.Hour)
		old := e.guarded(t, "db")[0]
		wr := e.cycleUpdate(t, id, "1", "0", "PT10M", force)
		for _, step := range []time.Duration{time.Minute, 8 * time.Minute} {
			e.clock.Advance(step)
			if w := e.work(t, wr); w.Status != ce.WorkRequestStatusInProgress {
				t.Fatalf("force %v: the budget did not hold the cycle: %+v", force, w)
			}
			kn, ok := e.emu.Kube().Node(clusterID, old)
			if by, _ := e.shapes(t, "db"); !ok || !kn.Spec.Unschedulable || by["VM.Standard.E4.Flex"] != 1 || by["VM.Standard.E5.Flex"] != 1 {
				t.Fatalf("force %v: held: old node cordoned %v, nodes %v", force, ok && kn.Spec.Unschedulable, by)
			}
			if n := e.newNode(t, "db", old); n == nil || !readyNode(*n) || n.Spec.Unschedulable {
				t.Fatalf("force %v: the new node is not Ready in the cluster while the old one drains: %v", force, n)
			}
		}
		e.clock.Advance(2 * time.Minute)
		w, np := e.work(t, wr), e.get(t, id)
		by, _ := e.shapes(t, "db")
		pods := e.kubePods(t, old)
		if !force {
			errs, err := e.client.ListWorkRequestErrors(ctx, ce.ListWorkRequestErrorsRequest{CompartmentId: common.String(compartment), WorkRequestId: wr})
			if w.Status != ce.WorkRequestStatusFailed || np.LifecycleState != ce.NodePoolLifecycleStateNeedsAttention || by["VM.Standard.E4.Flex"] != 1 ||
				err != nil || len(errs.Items) != 1 || !strings.Contains(*errs.Items[0].Message, "eviction grace duration") || len(pods) != 2 {
				t.Fatalf("no force: work %s, pool %s, nodes %v, pods %v, errors %+v %v", w.Status, np.LifecycleState, by, pods, errs.Items, err)
			}
			continue
		}
		if w.Status != ce.WorkRequestStatusSucceeded || np.LifecycleState != ce.NodePoolLifecycleStateActive || by["VM.Standard.E5.Flex"] != 1 || len(by) != 1 {
			t.Fatalf("force: work %s, pool %s, nodes %v", w.Status, np.LifecycleState, by)
		}
		if _, ok := e.emu.Kube().Node(clusterID, old); ok || slices.Contains(pods, "db-a") {
			t.Fatalf("force: old node still in the cluster %v, its pods %v", ok, pods)
		}
	}
}

// TestCyclingUnavailable: maximumSurge 0 and maximumUnavailable 1 drain
// and remove a node before its replacement comes up; PT0M terminates
// without a drain, whatever the budgets.
func TestCyclingUnavailable(t *testing.T) {
	e := newEnv(t, 0)
	id := e.create(t, details("web", 2, "Uocm:PHX-AD-1"))
	e.clock.Advance(time.Hour)
	e.guarded(t, "web")
	wr := e.cycleUpdate(t, id, "0", "1", "PT0M", false)
	most := 0
	for range 100 {
		e.clock.Advance(5 * time.Second)
		_, all := e.shapes(t, "web")
		most = max(most, all)
		if e.work(t, wr).Status != ce.WorkRequestStatusInProgress {
			break
		}
	}
	by, all := e.shapes(t, "web")
	if w := e.work(t, wr); w.Status != ce.WorkRequestStatusSucceeded || most != 2 || by["VM.Standard.E5.Flex"] != 2 || all != 2 {
		t.Fatalf("work %s, at most %d nodes, nodes %v", w.Status, most, by)
	}
}

// newNode is the pool's node in the cluster other than old.
func (e *env) newNode(t *testing.T, pool, old string) *corev1.Node {
	t.Helper()
	st, _ := e.emu.PoolOf(clusterID, pool)
	for _, n := range st.Nodes {
		if *n.PrivateIp != old {
			kn, _ := e.emu.Kube().Node(clusterID, *n.PrivateIp)
			return kn
		}
	}
	return nil
}

func readyNode(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// TestDrainNode: kube.API.DrainNode, which the cycle drains with, as
// kubectl drain does it: the node cordoned, its pods evicted under their
// budgets (one a budget keeps is left, and counted), DaemonSet and mirror
// pods and other nodes' pods left alone; with force, the kept pod is
// deleted; a node the cluster lacks is NotFound.
func TestDrainNode(t *testing.T) {
	e := newEnv(t, 0)
	e.create(t, details("web", 2, "Uocm:PHX-AD-1"))
	e.clock.Advance(time.Hour)
	nodes := e.guarded(t, "web") // db-a, agent-a on nodes[0]; db-b, agent-b on nodes[1]
	api := e.emu.Kube()
	for _, p := range []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}, Spec: corev1.PodSpec{NodeName: nodes[0]}},
		{ObjectMeta: metav1.ObjectMeta{Name: "static", Namespace: "kube-system", Annotations: map[string]string{"kubernetes.io/config.mirror": "x"}},
			Spec: corev1.PodSpec{NodeName: nodes[0]}},
	} {
		if _, err := api.SetPod(clusterID, p); err != nil {
			t.Fatal(err)
		}
		_ = api.SetPodReady(clusterID, p.Namespace, p.Name, true)
	}
	left, err := api.DrainNode(clusterID, nodes[0], false)
	kn, _ := api.Node(clusterID, nodes[0])
	if pods := e.kubePods(t, nodes[0]); err != nil || left != 1 || !kn.Spec.Unschedulable || !slices.Equal(pods, []string{"agent-a", "db-a", "static"}) {
		t.Fatalf("drain: left %d (%v), cordoned %v, pods %v", left, err, kn.Spec.Unschedulable, pods)
	}
	if left, err = api.DrainNode(clusterID, nodes[0], true); err != nil || left != 0 {
		t.Fatalf("forced drain: left %d (%v)", left, err)
	}
	if pods := e.kubePods(t, nodes[0]); !slices.Equal(pods, []string{"agent-a", "static"}) {
		t.Fatalf("after the forced drain: %v", pods)
	}
	if pods := e.kubePods(t, nodes[1]); !slices.Equal(pods, []string{"agent-b", "db-b"}) {
		t.Fatalf("the other node's pods: %v", pods)
	}
	if other, _ := api.Node(clusterID, nodes[1]); other.Spec.Unschedulable {
		t.Fatal("the other node was cordoned")
	}
	if _, err := api.DrainNode(clusterID, "10.9.9.9", false); !apierrors.IsNotFound(err) {
		t.Fatalf("a missing node: %v", err)
	}
}

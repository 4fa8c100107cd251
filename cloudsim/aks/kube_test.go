package aks_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/aks"
)

// kubeClient returns client-go's typed client of the cluster's Kubernetes
// API, from the kubeconfig ARM's listClusterUserCredential answers (the
// official SDK decodes it).
func (e *env) kubeClient() kubernetes.Interface {
	e.t.Helper()
	mc, err := armcontainerservice.NewManagedClustersClient(sub, staticToken(token), clientOptions(e.ep.URL, e.http))
	if err != nil {
		e.t.Fatal(err)
	}
	res, err := mc.ListClusterUserCredentials(ctx, group, cluster, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(res.Kubeconfigs) != 1 || ptr.Deref(res.Kubeconfigs[0].Name, "") != "clusterUser" {
		e.t.Fatalf("credential results: %+v", res.Kubeconfigs)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(res.Kubeconfigs[0].Value)
	if err != nil {
		e.t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	return cs
}

// nodeWatch is an informer on one pool's nodes and a wake-up on each of
// its events.
type nodeWatch struct {
	t     *testing.T
	cs    kubernetes.Interface
	store cache.Indexer
	woke  chan struct{}
}

func watchPool(t *testing.T, cs kubernetes.Interface, pool string) *nodeWatch {
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = "kubernetes.azure.com/agentpool=" + pool
	}))
	inf := f.Core().V1().Nodes().Informer()
	w := &nodeWatch{t: t, cs: cs, store: inf.GetIndexer(), woke: make(chan struct{}, 1)}
	wake := func(any) {
		select {
		case w.woke <- struct{}{}:
		default:
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: wake, DeleteFunc: wake,
		UpdateFunc: func(_, n any) { wake(n) }}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	f.Start(stop)
	if !cache.WaitForCacheSync(stop, inf.HasSynced) {
		t.Fatal("informer did not sync")
	}
	return w
}

// until asks the API once (its cloud's work catches up with the clock on
// a request) and waits, at most ten seconds, for the informer's nodes to
// satisfy ok; it returns them by name.
func (w *nodeWatch) until(what string, ok func([]*corev1.Node) bool) []*corev1.Node {
	w.t.Helper()
	if _, err := w.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		w.t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for {
		var nodes []*corev1.Node
		for _, o := range w.store.List() {
			nodes = append(nodes, o.(*corev1.Node))
		}
		slices.SortFunc(nodes, func(a, b *corev1.Node) int { return strings.Compare(a.Name, b.Name) })
		if ok(nodes) {
			return nodes
		}
		select {
		case <-w.woke:
		case <-deadline:
			w.t.Fatalf("%s: the informer's nodes are %v", what, names(nodes))
		}
	}
}

func names(nodes []*corev1.Node) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Name)
	}
	return out
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// count is a condition: n nodes, all Ready (or all not).
func count(n int, allReady bool) func([]*corev1.Node) bool {
	return func(nodes []*corev1.Node) bool {
		return len(nodes) == n && !slices.ContainsFunc(nodes, func(x *corev1.Node) bool { return ready(x) != allReady })
	}
}

// put writes a pool's properties with the SDK and lets the operation end.
func (e *env) put(name string, pr *armcontainerservice.ManagedClusterAgentPoolProfileProperties) {
	e.t.Helper()
	e.create(name, pr)
	e.settle()
}

var nodeName = regexp.MustCompile(`^aks-workers-[0-9]{8}-vmss[0-9a-z]{6}$`)

// A pool's nodes, seen by client-go's informer through the kubeconfig ARM
// hands out: they appear as the create adds them, with AKS's labels, the
// pool's labels and taints; follow scale up and down (new instance ids,
// the newest removed first); take a label update while keeping a label
// another client set; and go with the pool.
func TestKubeNodesFollowPool(t *testing.T) {
	e := newEnv(t, aks.Options{})
	w := watchPool(t, e.kubeClient(), "workers")
	pr := basic(3)
	pr.AvailabilityZones = []*string{ptr.To("1"), ptr.To("2"), ptr.To("3")}
	pr.NodeLabels = map[string]*string{"team": ptr.To("web")}
	pr.NodeTaints = []*string{ptr.To("dedicated=web:NoSchedule")}
	e.create("workers", pr)
	e.clock.Advance(15 * time.Second) // 30 s + 10 s a node: one VM made, not yet Ready
	w.until("a create's first node", count(1, false))
	e.settle()
	nodes := w.until("the create's end", count(3, true))
	zones := map[string]bool{}
	for _, n := range nodes {
		checkAKSNode(t, n)
		zones[n.Labels["topology.kubernetes.io/zone"]] = true
	}
	if len(zones) != 3 || !zones["westeurope-1"] {
		t.Fatalf("zones %v: one node in each of westeurope-1, -2, -3", zones)
	}
	first := nodes[0].Name
	patch := []byte(`{"metadata":{"labels":{"owner":"ops"}}}`)
	if _, err := w.cs.CoreV1().Nodes().Patch(ctx, first, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	pr.Count = ptr.To(int32(5))
	e.put("workers", pr)
	nodes = w.until("a scale-up", count(5, true))
	if got := names(nodes); !strings.HasSuffix(got[4], "vmss000004") || got[0] != first {
		t.Fatalf("after a scale-up to 5: %v", got)
	}

	pr.NodeLabels = map[string]*string{"team": ptr.To("api")}
	e.put("workers", pr)
	nodes = w.until("a label update", func(ns []*corev1.Node) bool {
		return len(ns) == 5 && !slices.ContainsFunc(ns, func(n *corev1.Node) bool { return n.Labels["team"] != "api" })
	})
	if nodes[0].Labels["owner"] != "ops" {
		t.Fatalf("the label another client set is gone: %v", nodes[0].Labels)
	}

	pr.Count = ptr.To(int32(2))
	e.put("workers", pr)
	nodes = w.until("a scale-down", count(2, true))
	if got := names(nodes); !strings.HasSuffix(got[1], "vmss000001") {
		t.Fatalf("a scale-down removes the newest instances: %v", got)
	}

	if _, err := e.pools.BeginDelete(ctx, group, cluster, "workers", nil); err != nil {
		t.Fatal(err)
	}
	e.settle()
	w.until("a delete", count(0, true))
}

// checkAKSNode checks one node of the test's pool as AKS makes it.
func checkAKSNode(t *testing.T, n *corev1.Node) {
	t.Helper()
	want := map[string]string{
		"kubernetes.azure.com/agentpool": "workers", "kubernetes.azure.com/mode": "user", "kubernetes.azure.com/role": "agent",
		"kubernetes.azure.com/cluster":     "MC_" + group + "_" + cluster + "_westeurope",
		"node.kubernetes.io/instance-type": "Standard_D4s_v5", "topology.kubernetes.io/region": "westeurope", "team": "web",
		"kubernetes.azure.com/node-image-version": "AKSUbuntu-2204gen2containerd-202502.09.0",
	}
	for k, v := range want {
		if n.Labels[k] != v {
			t.Errorf("node %s: label %s=%q, want %q", n.Name, k, n.Labels[k], v)
		}
	}
	if !nodeName.MatchString(n.Name) {
		t.Errorf("node name %q is not a scale set instance's", n.Name)
	}
	if n.Status.NodeInfo.KubeletVersion != "v1.30.4" {
		t.Errorf("node %s: kubelet %s", n.Name, n.Status.NodeInfo.KubeletVersion)
	}
	suffix := strings.TrimPrefix(n.Name[len(n.Name)-6:], "00000")
	prefix := "azure:///subscriptions/" + sub + "/resourceGroups/mc_" + group + "_" + cluster + "_westeurope/providers/Microsoft.Compute/virtualMachineScaleSets/aks-workers-"
	if !strings.HasPrefix(n.Spec.ProviderID, prefix) || !strings.HasSuffix(n.Spec.ProviderID, "-vmss/virtualMachines/"+suffix) {
		t.Errorf("node %s: providerID %s", n.Name, n.Spec.ProviderID)
	}
	if len(n.Spec.Taints) != 1 || n.Spec.Taints[0] != (corev1.Taint{Key: "dedicated", Value: "web", Effect: corev1.TaintEffectNoSchedule}) {
		t.Errorf("node %s: taints %v", n.Name, n.Spec.Taints)
	}
}

// A spot pool without zones: AKS's spot label and taint, zone "0".
func TestKubeSpotNodes(t *testing.T) {
	e := newEnv(t, aks.Options{})
	pr := basic(2)
	pr.ScaleSetPriority = ptr.To(armcontainerservice.ScaleSetPrioritySpot)
	if err := e.sim.AddPool(sub, group, cluster, armcontainerservice.AgentPool{Name: ptr.To("spot"), Properties: pr}); err != nil {
		t.Fatal(err)
	}
	list, err := e.kubeClient().CoreV1().Nodes().List(ctx, metav1.ListOptions{
		LabelSelector: labels.Set{"kubernetes.azure.com/agentpool": "spot", "kubernetes.azure.com/scalesetpriority": "spot"}.String()})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 {
		t.Fatalf("%d spot nodes", len(list.Items))
	}
	for _, n := range list.Items {
		spot := corev1.Taint{Key: "kubernetes.azure.com/scalesetpriority", Value: "spot", Effect: corev1.TaintEffectNoSchedule}
		if n.Labels["topology.kubernetes.io/zone"] != "0" || !slices.Contains(n.Spec.Taints, spot) {
			t.Fatalf("spot node %s: zone %q, taints %v", n.Name, n.Labels["topology.kubernetes.io/zone"], n.Spec.Taints)
		}
	}
}

// An upgrade adds a surge node on the new version, reimages the nodes one
// after the other (each NotReady in its turn) and removes the surge node:
// the same node names, on the new kubelet version.
func TestKubeUpgrade(t *testing.T) {
	e := newEnv(t, aks.Options{})
	w := watchPool(t, e.kubeClient(), "workers")
	pr := basic(2)
	pr.OrchestratorVersion = ptr.To("1.29")
	e.put("workers", pr)
	before := names(w.until("the create", count(2, true)))
	pr.OrchestratorVersion = ptr.To("1.30.4")
	e.create("workers", pr)
	e.clock.Advance(time.Second)
	nodes := w.until("the surge node", func(ns []*corev1.Node) bool { return len(ns) == 3 })
	if surge := nodes[2]; slices.Contains(before, surge.Name) || surge.Status.NodeInfo.KubeletVersion != "v1.30.4" ||
		nodes[0].Status.NodeInfo.KubeletVersion != "v1.29.0" || ready(nodes[0]) {
		t.Fatalf("upgrade under way: %v, surge kubelet %s, first node %s ready %v", names(nodes),
			surge.Status.NodeInfo.KubeletVersion, nodes[0].Status.NodeInfo.KubeletVersion, ready(nodes[0]))
	}
	e.settle()
	nodes = w.until("the upgrade's end", func(ns []*corev1.Node) bool {
		return len(ns) == 2 && !slices.ContainsFunc(ns, func(n *corev1.Node) bool { return n.Status.NodeInfo.KubeletVersion != "v1.30.4" || !ready(n) })
	})
	if !slices.Equal(names(nodes), before) {
		t.Fatalf("nodes %v after the upgrade, %v before: reimaged in place", names(nodes), before)
	}
}

// The credential actions: the admin kubeconfig is clusterAdmin's; an
// AAD-enabled cluster's user kubeconfig runs kubelogin for the AKS server
// application; Kubeconfigs has each cluster's.
func TestKubeCredentials(t *testing.T) {
	e := newEnv(t, aks.Options{})
	mc, err := armcontainerservice.NewManagedClustersClient(sub, staticToken(token), clientOptions(e.ep.URL, e.http))
	if err != nil {
		t.Fatal(err)
	}
	admin, err := mc.ListClusterAdminCredentials(ctx, group, cluster, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(admin.Kubeconfigs) != 1 || ptr.Deref(admin.Kubeconfigs[0].Name, "") != "clusterAdmin" {
		t.Fatalf("admin credential results: %+v", admin.Kubeconfigs)
	}
	cfg, err := clientcmd.Load(admin.Kubeconfigs[0].Value)
	if err != nil || cfg.AuthInfos["clusterAdmin_"+group+"_"+cluster] == nil || cfg.AuthInfos["clusterAdmin_"+group+"_"+cluster].Token == "" {
		t.Fatalf("admin kubeconfig: %v", err)
	}
	if err := e.sim.SetAAD(sub, group, cluster, "tenant-1", true); err != nil {
		t.Fatal(err)
	}
	user, err := mc.ListClusterUserCredentials(ctx, group, cluster, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err = clientcmd.Load(user.Kubeconfigs[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	u := cfg.AuthInfos["clusterUser_"+group+"_"+cluster]
	if u == nil || u.Exec == nil || u.Exec.Command != "kubelogin" || u.Token != "" || !slices.Contains(u.Exec.Args, aks.AKSServerApp) {
		t.Fatalf("AAD user kubeconfig: %+v", u)
	}
	kc := e.sim.Kubeconfigs(e.ep.URL)
	if _, err := clientcmd.RESTConfigFromKubeConfig([]byte(kc[cluster])); err != nil || len(kc) != 1 {
		t.Fatalf("Kubeconfigs: %d, %v", len(kc), err)
	}
}

// deleteMachines removes the nodes it names and keeps the others' names;
// a stopped pool has no nodes, and its instances come back on a start.
func TestKubeMachinesAndPower(t *testing.T) {
	e := newEnv(t, aks.Options{})
	w := watchPool(t, e.kubeClient(), "workers")
	e.put("workers", basic(3))
	all := names(w.until("the create", count(3, true)))
	if m := e.sim.Machines(sub, group, cluster, "workers"); !slices.Equal(m, all) {
		t.Fatalf("machines %v, nodes %v", m, all)
	}
	if _, err := e.pools.BeginDeleteMachines(ctx, group, cluster, "workers",
		armcontainerservice.AgentPoolDeleteMachinesParameter{MachineNames: []*string{ptr.To(all[0])}}, nil); err != nil {
		t.Fatal(err)
	}
	e.settle()
	left := names(w.until("deleteMachines", count(2, true)))
	if !slices.Equal(left, all[1:]) {
		t.Fatalf("after deleting %s: %v", all[0], left)
	}
	e.put("workers", &armcontainerservice.ManagedClusterAgentPoolProfileProperties{
		PowerState: &armcontainerservice.PowerState{Code: ptr.To(armcontainerservice.CodeStopped)}})
	w.until("a stop", count(0, true))
	e.put("workers", &armcontainerservice.ManagedClusterAgentPoolProfileProperties{
		PowerState: &armcontainerservice.PowerState{Code: ptr.To(armcontainerservice.CodeRunning)}})
	if back := names(w.until("a start", count(2, true))); !slices.Equal(back, left) {
		t.Fatalf("after a start: %v, before the stop %v", back, left)
	}
}

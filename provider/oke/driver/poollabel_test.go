package driver_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kpool/kpool/kubeapi"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/oke"
)

// poolLabel is the OKE profile's pool label, which OKE puts on no node.
var poolLabel = (oke.Profile{}).PoolLabel()

// initialLabels are a pool's initialNodeLabels at the emulator.
func (e *emulated) initialLabels(t *testing.T, pn string) map[string]string {
	t.Helper()
	st, ok := e.Sim.PoolOf(clusterID, pn)
	if !ok {
		t.Fatalf("the emulator has no node pool %s", pn)
	}
	out := map[string]string{}
	for _, kv := range st.InitialNodeLabels {
		out[*kv.Key] = *kv.Value
	}
	return out
}

// kube is client-go on the driver's access to the cluster.
func (e *emulated) kube(t *testing.T) kubernetes.Interface {
	t.Helper()
	kc, err := kubeapi.Clientset(ctx, func(ctx context.Context) (*provider.KubeAccess, error) { return e.Driver.KubeAccess(ctx, e.Cluster) })
	if err != nil {
		t.Fatal(err)
	}
	return kc
}

// nodes lists the cluster's nodes, those the pool label selects for pool
// pn (all with pn "").
func nodes(t *testing.T, kc kubernetes.Interface, pn string) []corev1.Node {
	t.Helper()
	sel := ""
	if pn != "" {
		sel = poolLabel + "=" + pn
	}
	list, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// TestPoolLabel: the driver creates a pool with the pool label, valued with
// its name, in its initialNodeLabels, so that its nodes carry it; observed,
// the pool's labels do not show it and no drift is seen; an update of the
// labels keeps it.
func TestPoolLabel(t *testing.T) {
	e := newEmulated(t)
	s := e.spec("web")
	s.Labels["team"] = "ml"
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	if got := e.initialLabels(t, s.ProviderName); got[poolLabel] != s.ProviderName || got["team"] != "ml" {
		t.Fatalf("initialNodeLabels sent: %v, want %s=%s and team=ml", got, poolLabel, s.ProviderName)
	}
	e.Clock.Advance(time.Hour)
	p := e.list(t, s.ProviderName)
	if _, shown := p.Labels[poolLabel]; shown || p.Labels["team"] != "ml" || len(p.Problems) > 0 {
		t.Fatalf("observed labels %v, problems %v: want team=ml and no %s", p.Labels, p.Problems, poolLabel)
	}
	if d := provider.Compare(oke.Profile{}, s, p); len(d) > 0 {
		t.Fatalf("drift on a pool as created: %v", d)
	}
	if n := nodes(t, e.kube(t), s.ProviderName); len(n) != 2 {
		t.Fatalf("%d nodes carry %s=%s, want the pool's 2", len(n), poolLabel, s.ProviderName)
	}

	s.Labels["team"] = "ai"
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	if got := e.initialLabels(t, s.ProviderName); got[poolLabel] != s.ProviderName || got["team"] != "ai" {
		t.Fatalf("initialNodeLabels after a label update: %v", got)
	}
	if p := e.list(t, s.ProviderName); p.Labels["team"] != "ai" || p.Labels[poolLabel] != "" || p.StaleNodes != 2 {
		t.Fatalf("observed after the update: labels %v, stale %d (want team=ai, 2 stale)", p.Labels, p.StaleNodes)
	}
}

// TestPoolLabelMissing: a pool made outside kpool (on the emulator, with no
// pool label) has nodes the pool label does not select; the driver's next
// update puts the label in its initialNodeLabels, and the nodes started
// afterwards carry it, the older ones not.
func TestPoolLabelMissing(t *testing.T) {
	e := newEmulated(t)
	e.Sim.AddPool(clusterID, "imported", "VM.Standard.E4.Flex", 1, 16, 2)
	kc := e.kube(t)
	if all, got := nodes(t, kc, ""), nodes(t, kc, "imported"); len(all) != 2 || len(got) != 0 {
		t.Fatalf("%d nodes, %d of them selected by %s=imported; want 2 and 0", len(all), len(got), poolLabel)
	}
	p := e.list(t, "imported")
	s := e.spec("imported")
	s.ProviderName, s.Labels, s.Count, s.Owner = "imported", p.Labels, 3, p.Owner
	s.MachineType, s.Settings = p.MachineType, p.Settings
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	if got := e.initialLabels(t, "imported"); got[poolLabel] != "imported" {
		t.Fatalf("initialNodeLabels after an update of a pool without the label: %v", got)
	}
	e.Clock.Advance(time.Hour)
	if all, got := nodes(t, kc, ""), nodes(t, kc, "imported"); len(all) != 3 || len(got) != 1 {
		t.Fatalf("%d nodes, %d selected by %s=imported; want 3 and the new 1", len(all), len(got), poolLabel)
	}
	if p := e.list(t, "imported"); p.Labels[poolLabel] != "" {
		t.Fatalf("observed labels: %v", p.Labels)
	}
}

// TestPoolLabelRestored: a driver's pool whose pool label was taken from
// its initialNodeLabels at OKE shows no drift for it; the same spec again
// sends it back, with nothing else, and no node is counted stale for it.
func TestPoolLabelRestored(t *testing.T) {
	e := newEmulated(t)
	s := e.spec("web")
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	if err := setup.Unlabel(e.fixture, s.ProviderName, poolLabel); err != nil {
		t.Fatal(err)
	}
	p := e.list(t, s.ProviderName)
	if d := provider.Compare(oke.Profile{}, s, p); len(d) > 0 || p.StaleNodes != 0 {
		t.Fatalf("a pool without the pool label: drift %v, %d stale nodes", d, p.StaleNodes)
	}
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	st, _ := e.Sim.PoolOf(clusterID, s.ProviderName)
	if got := e.initialLabels(t, s.ProviderName); got[poolLabel] != s.ProviderName || *st.NodeConfigDetails.Size != 2 {
		t.Fatalf("after the update: initialNodeLabels %v, size %d", got, *st.NodeConfigDetails.Size)
	}
	if p := e.list(t, s.ProviderName); p.StaleNodes != 0 || p.State != provider.StateReady {
		t.Fatalf("after the update: %d stale nodes, state %s", p.StaleNodes, p.State)
	}
}

package driver_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/kubeapi"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/gke"
	"github.com/kpool/kpool/provider/providertest"
)

// poolNodes are a pool's nodes in the cluster's emulated Kubernetes API,
// as kpool's controllers see them (client-go on the driver's KubeAccess),
// by name.
func (e *emulated) poolNodes(t *testing.T, pn string) map[string]provider.NodeRef {
	t.Helper()
	cs, err := kubeapi.Clientset(ctx, func(ctx context.Context) (*provider.KubeAccess, error) { return e.Driver.KubeAccess(ctx, e.Cluster) })
	if err != nil {
		t.Fatal(err)
	}
	l, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: gke.Profile{}.PoolLabel() + "=" + pn})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]provider.NodeRef{}
	for _, o := range l.Items {
		out[o.Name] = provider.NodeRef{Name: o.Name, ProviderID: o.Spec.ProviderID}
	}
	return out
}

// deletes are the deleteInstances requests the emulator answered.
func (e *emulated) deletes() int {
	n := 0
	for _, c := range e.Sim.Calls() {
		if strings.HasSuffix(c.Path, "/deleteInstances") {
			n++
		}
	}
	return n
}

// TestRemoveNodes: of a pool of 3 nodes, one a zone, removing a chosen one
// takes exactly it (its zone's group at 0, the others at 1, the count 2);
// removing it again is no error and sends nothing that changes the pool;
// a node of another pool, of another project or zone, or with no GCE
// providerID, is refused with a validation error and nothing is sent.
func TestRemoveNodes(t *testing.T) {
	e := newEmulated(t)
	spec := func(name string) provider.PoolSpec {
		return providertest.Spec(e.Cluster, name, kpool.NodePoolSpec{NodeCount: ptr.To(3), Zones: []string{"1", "2", "3"},
			Platform: kpool.NodePoolPlatform{GCP: &kpool.GCPNodePool{MachineType: "n2-standard-4", DiskSize: 100, DiskType: "pd-balanced"}}})
	}
	web, other := spec("web"), spec("other")
	for _, s := range []provider.PoolSpec{web, other} {
		if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(time.Hour) // GKE creates one pool at a time
	}
	before := e.poolNodes(t, web.ProviderName)
	if len(before) != 3 {
		t.Fatalf("%d nodes, want 3", len(before))
	}
	names := slices.Sorted(maps.Keys(before))
	chosen := before[names[1]]
	zone := strings.Split(chosen.ProviderID, "/")[3] // gce://project/zone/name

	var foreign provider.NodeRef
	for _, n := range e.poolNodes(t, other.ProviderName) {
		foreign = n
	}
	for _, bad := range []provider.NodeRef{
		foreign,
		{Name: chosen.Name, ProviderID: strings.Replace(chosen.ProviderID, project, "someone-else", 1)},
		{Name: chosen.Name, ProviderID: strings.Replace(chosen.ProviderID, zone, "us-central1-f", 1)},
		{Name: chosen.Name, ProviderID: "azure:///subscriptions/x/virtualMachines/0"},
		{Name: "gke-other-node-abcd"},
	} {
		err := e.Driver.NodePoolRemoveNodes(ctx, e.Cluster, web.ProviderName, []provider.NodeRef{chosen, bad})
		if !provider.IsValidation(err) {
			t.Fatalf("removing %+v: %v, want a validation error", bad, err)
		}
	}
	if n := e.deletes(); n != 0 {
		t.Fatalf("refused removals sent %d deleteInstances", n)
	}
	if got := e.poolNodes(t, web.ProviderName); !maps.Equal(got, before) {
		t.Fatalf("after refused removals: %v, want %v", slices.Sorted(maps.Keys(got)), names)
	}

	if err := e.Driver.NodePoolRemoveNodes(ctx, e.Cluster, web.ProviderName, []provider.NodeRef{chosen}); err != nil {
		t.Fatal(err)
	}
	after := e.poolNodes(t, web.ProviderName)
	want := maps.Clone(before)
	delete(want, chosen.Name)
	if !maps.Equal(after, want) || e.deletes() != 1 {
		t.Fatalf("after removing %s: %v (%d deleteInstances)", chosen.Name, slices.Sorted(maps.Keys(after)), e.deletes())
	}
	p := e.observed(t, web.ProviderName)
	byZone := map[string]int{"1": 1, "2": 1, "3": 1}
	byZone[map[string]string{"us-central1-a": "1", "us-central1-b": "2", "us-central1-c": "3"}[zone]] = 0
	if p.Count != 2 || p.ReadyNodes != 2 || !maps.Equal(p.NodesByZone, byZone) {
		t.Fatalf("observed: count %d, ready %d, by zone %v; want 2, 2, %v", p.Count, p.ReadyNodes, p.NodesByZone, byZone)
	}
	if o := e.observed(t, other.ProviderName); o.Count != 3 {
		t.Fatalf("the other pool: count %d", o.Count)
	}

	// Gone already (by its name alone too): nothing more goes.
	for _, gone := range []provider.NodeRef{chosen, {Name: chosen.Name}} {
		if err := e.Driver.NodePoolRemoveNodes(ctx, e.Cluster, web.ProviderName, []provider.NodeRef{gone}); err != nil {
			t.Fatalf("removing %+v again: %v", gone, err)
		}
	}
	e.Clock.Advance(time.Hour)
	if got := e.poolNodes(t, web.ProviderName); !maps.Equal(got, want) || e.observed(t, web.ProviderName).Count != 2 {
		t.Fatalf("after removing it again: %v", slices.Sorted(maps.Keys(got)))
	}

	// The two left, in two zones: one deleteInstances each.
	sent := e.deletes()
	if err := e.Driver.NodePoolRemoveNodes(ctx, e.Cluster, web.ProviderName, slices.Collect(maps.Values(want))); err != nil {
		t.Fatal(err)
	}
	if got, p := e.poolNodes(t, web.ProviderName), e.observed(t, web.ProviderName); len(got) != 0 || p.Count != 0 || e.deletes()-sent != 2 {
		t.Fatalf("after removing the rest: nodes %v, count %d, %d deleteInstances", slices.Sorted(maps.Keys(got)), p.Count, e.deletes()-sent)
	}
}

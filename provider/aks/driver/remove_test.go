package driver_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
)

// nodeRefs are the nodes of the emulated cluster's Kubernetes API named,
// as kpool's controllers hand them over (name and spec.providerID).
func (e *emulated) nodeRefs(t *testing.T, names ...string) []provider.NodeRef {
	t.Helper()
	var out []provider.NodeRef
	for _, n := range names {
		node, ok := e.Sim.Kube().Node(e.Sim.KubeID(subscription, group, clusterName), n)
		if !ok || node.Spec.ProviderID == "" {
			t.Fatalf("node %s: %v, providerID %q", n, ok, node.Spec.ProviderID)
		}
		out = append(out, provider.NodeRef{Name: n, ProviderID: node.Spec.ProviderID})
	}
	return out
}

// deleteMachinesCalls counts the deleteMachines requests the emulator got.
func (e *emulated) deleteMachinesCalls() int {
	return len(slices.DeleteFunc(e.Sim.Calls(), func(c sim.Call) bool {
		return c.Method != http.MethodPost || !strings.HasSuffix(strings.ToLower(c.Path), "/deletemachines")
	}))
}

// TestRemoveNodes: kpool removes exactly the node it chose (1 of 3), by
// deleteMachines, and the count drops to 2; the other nodes keep their
// names. A node of another pool is refused (a validation error) with
// nothing sent, even beside one of the pool's; a node already gone is
// skipped, and with nothing left nothing is sent.
func TestRemoveNodes(t *testing.T) {
	e := newEmulated(t)
	ctx := context.Background()
	s := e.Harness(t).Spec("rm")
	s.Count = 3
	other := e.Harness(t).Spec("rmother")
	for _, sp := range []provider.PoolSpec{s, other} {
		if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, sp); err != nil {
			t.Fatal(err)
		}
	}
	e.Clock.Advance(time.Hour)
	if _, err := e.Driver.NodePoolList(ctx, e.Cluster); err != nil { // syncs the nodes
		t.Fatal(err)
	}
	all := e.Sim.Machines(subscription, group, clusterName, s.ProviderName)
	foreign := e.Sim.Machines(subscription, group, clusterName, other.ProviderName)
	if len(all) != 3 || len(foreign) != 2 {
		t.Fatalf("machines: %v, %v", all, foreign)
	}

	err := e.Driver.NodePoolRemoveNodes(ctx, e.Cluster, s.ProviderName, e.nodeRefs(t, all[1], foreign[0]))
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindValidation || provider.Retryable(err) {
		t.Fatalf("a node of another pool: %v, want a validation error", err)
	}
	if n := e.deleteMachinesCalls(); n != 0 {
		t.Fatalf("a refused removal sent %d deleteMachines", n)
	}
	if st, _ := e.Sim.Pool(subscription, group, clusterName, s.ProviderName); ptr.Deref(st.Properties.Count, 0) != 3 {
		t.Fatalf("a refused removal changed the count: %d", ptr.Deref(st.Properties.Count, 0))
	}

	chosen := e.nodeRefs(t, all[1])
	if err := e.Driver.NodePoolRemoveNodes(ctx, e.Cluster, s.ProviderName, chosen); err != nil {
		t.Fatal(err)
	}
	pools, err := e.Driver.NodePoolList(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := provider.Find(pools, s.ProviderName); p.Count != 2 || p.State == provider.StateReady {
		t.Fatalf("while removing: count %d, state %s; want 2 and busy (returned without waiting)", p.Count, p.State)
	}
	e.Clock.Advance(time.Hour)
	pools, err = e.Driver.NodePoolList(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := provider.Find(pools, s.ProviderName); p.Count != 2 || p.State != provider.StateReady {
		t.Fatalf("after the removal: count %d, state %s", p.Count, p.State)
	}
	if got, want := e.Sim.Machines(subscription, group, clusterName, s.ProviderName), []string{all[0], all[2]}; !slices.Equal(got, want) {
		t.Fatalf("machines after removing %s: %v, want %v", all[1], got, want)
	}
	if _, ok := e.Sim.Kube().Node(e.Sim.KubeID(subscription, group, clusterName), all[1]); ok {
		t.Fatalf("node %s is still in the Kubernetes API", all[1])
	}

	// Gone: skipped, nothing sent; by name alone too.
	before := e.deleteMachinesCalls()
	if err := e.Driver.NodePoolRemoveNodes(ctx, e.Cluster, s.ProviderName, append(chosen, provider.NodeRef{Name: all[1]})); err != nil {
		t.Fatalf("a node already gone: %v", err)
	}
	if n := e.deleteMachinesCalls() - before; n != 0 {
		t.Fatalf("removing a node already gone sent %d deleteMachines", n)
	}
	err = e.Driver.NodePoolRemoveNodes(ctx, e.Cluster, "nosuch", chosen)
	if !errors.As(err, &pe) || pe.Kind != provider.KindNotFound {
		t.Fatalf("a missing pool: %v, want not found", err)
	}
}

package driver_test

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	ce "github.com/oracle/oci-go-sdk/v65/containerengine"

	okesim "github.com/kpool/kpool/cloudsim/oke"
	"github.com/kpool/kpool/provider"
)

// refOf is an OKE node as its Kubernetes node names it: its private IP,
// its instance OCID as the providerID.
func refOf(n ce.Node) provider.NodeRef {
	return provider.NodeRef{Name: *n.PrivateIp, ProviderID: *n.Id}
}

func (e *emulated) state(t *testing.T, pn string) okesim.PoolState {
	t.Helper()
	st, ok := e.Sim.PoolOf(clusterID, pn)
	if !ok {
		t.Fatalf("no pool %s", pn)
	}
	return st
}

// nodeDeletes counts the DeleteNode calls sent.
func (e *emulated) nodeDeletes() int {
	n := 0
	for _, c := range e.Sim.Calls() {
		if c.Method == http.MethodDelete && strings.Contains(c.Path, "/node/") {
			n++
		}
	}
	return n
}

func nodeIDs(st okesim.PoolState) []string {
	var out []string
	for _, n := range st.Nodes {
		out = append(out, *n.Id)
	}
	slices.Sort(out)
	return out
}

// TestRemoveNodes: of a pool of 3, the chosen node goes and no other, the
// size is 2; a node of another pool, or not an OCI instance, is refused
// with nothing sent; a node already gone is skipped; oci://<OCID> and a
// name alone (the private IP) find a node too.
func TestRemoveNodes(t *testing.T) {
	e := newEmulated(t)
	for _, s := range []struct {
		name  string
		count int
	}{{"web", 3}, {"api", 2}} {
		spec := e.spec(s.name)
		spec.Count = s.count
		if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, spec); err != nil {
			t.Fatal(err)
		}
	}
	e.Clock.Advance(time.Hour)
	web, api := e.state(t, "web"), e.state(t, "api")
	victim := web.Nodes[1]

	refused := func(what string, nodes ...provider.NodeRef) {
		t.Helper()
		err := e.Driver.NodePoolRemoveNodes(ctx, e.Cluster, "web", nodes)
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != provider.KindValidation {
			t.Fatalf("%s: %v, want a validation error", what, err)
		}
		if n := e.nodeDeletes(); n != 0 {
			t.Fatalf("%s: %d DeleteNode calls sent", what, n)
		}
	}
	refused("a node of another pool", refOf(victim), refOf(api.Nodes[0]))
	refused("another pool's node by name", provider.NodeRef{Name: *api.Nodes[1].PrivateIp})
	refused("not an OCI instance", provider.NodeRef{Name: "n1", ProviderID: "civo://1234"})

	if err := e.Driver.NodePoolRemoveNodes(ctx, e.Cluster, "web", []provider.NodeRef{refOf(victim)}); err != nil {
		t.Fatal(err)
	}
	if st := e.state(t, "web"); *st.NodeConfigDetails.Size != 2 {
		t.Fatalf("size %d after removing a node, want 2", *st.NodeConfigDetails.Size)
	}
	e.Clock.Advance(time.Hour)
	want := []string{*web.Nodes[0].Id, *web.Nodes[2].Id}
	slices.Sort(want)
	if got := nodeIDs(e.state(t, "web")); !slices.Equal(got, want) {
		t.Fatalf("nodes %v, want %v", got, want)
	}
	if st := e.state(t, "api"); *st.NodeConfigDetails.Size != 2 || !slices.Equal(nodeIDs(st), nodeIDs(api)) {
		t.Fatalf("the other pool changed: %+v", st.Nodes)
	}
	sent := e.nodeDeletes()
	if err := e.Driver.NodePoolRemoveNodes(ctx, e.Cluster, "web", []provider.NodeRef{refOf(victim)}); err != nil || e.nodeDeletes() != sent {
		t.Fatalf("a node already gone: %v, %d DeleteNode calls sent", err, e.nodeDeletes()-sent)
	}
	if p := e.list(t, "web"); p.Count != 2 {
		t.Fatalf("observed count %d, want 2", p.Count)
	}

	// oci://<OCID> and a name alone, both at once.
	st := e.state(t, "web")
	two := []provider.NodeRef{{Name: "x", ProviderID: "oci://" + *st.Nodes[0].Id}, {Name: *st.Nodes[1].PrivateIp}}
	if err := e.Driver.NodePoolRemoveNodes(ctx, e.Cluster, "web", two); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	if got := e.state(t, "web"); *got.NodeConfigDetails.Size != 0 || len(got.Nodes) != 0 {
		t.Fatalf("after removing the other two: size %d, nodes %v", *got.NodeConfigDetails.Size, nodeIDs(got))
	}
	if err := e.Driver.NodePoolRemoveNodes(ctx, e.Cluster, "gone", []provider.NodeRef{refOf(victim)}); !provider.IsNotFound(err) {
		t.Fatalf("a pool that does not exist: %v", err)
	}
}

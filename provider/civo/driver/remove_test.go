package driver_test

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	civosim "github.com/kpool/kpool/cloudsim/civo"
	"github.com/kpool/kpool/provider"
)

// refOf is an instance as its Kubernetes node names it.
func refOf(in civosim.Instance) provider.NodeRef {
	return provider.NodeRef{Name: in.Hostname, ProviderID: "civo://" + in.ID}
}

// poolState reads a pool at the emulator.
func (e *emulated) poolState(t *testing.T, pn string) civosim.PoolState {
	t.Helper()
	st, ok := e.Sim.PoolOf(region, clusterID, pn)
	if !ok {
		t.Fatalf("no pool %s", pn)
	}
	return st
}

// instanceDeletes counts the instance deletes sent.
func (e *emulated) instanceDeletes() int {
	n := 0
	for _, c := range e.Sim.Calls() {
		if c.Method == http.MethodDelete && strings.Contains(c.Path, "/instances/") {
			n++
		}
	}
	return n
}

func ids(st civosim.PoolState) []string {
	var out []string
	for _, in := range st.Instances {
		out = append(out, in.ID)
	}
	slices.Sort(out)
	return out
}

// TestRemoveNodes: of a pool of 3, the chosen node goes and no other, the
// count is 2; a node of another pool, or not a Civo instance, is refused
// with nothing sent; a node already gone is skipped; a node named by its
// name alone is found by its instance's hostname.
func TestRemoveNodes(t *testing.T) {
	e := newEmulated(t)
	for _, s := range []struct {
		name  string
		count int
	}{{"web", 3}, {"api", 2}} {
		if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, e.spec(s.name, s.count, "g4s.kube.small")); err != nil {
			t.Fatal(err)
		}
	}
	e.Clock.Advance(time.Hour)
	web, api := e.poolState(t, "web"), e.poolState(t, "api")
	victim := web.Instances[1]

	refused := func(what string, nodes ...provider.NodeRef) {
		t.Helper()
		err := e.Driver.NodePoolRemoveNodes(ctx, e.Cluster, "web", nodes)
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != provider.KindValidation {
			t.Fatalf("%s: %v, want a validation error", what, err)
		}
		if n := e.instanceDeletes(); n != 0 {
			t.Fatalf("%s: %d instance deletes sent", what, n)
		}
	}
	refused("a node of another pool", refOf(victim), refOf(api.Instances[0]))
	refused("another pool's node by name", provider.NodeRef{Name: api.Instances[1].Hostname})
	refused("not a Civo node", provider.NodeRef{Name: "n1", ProviderID: "gce://p/z/n1"})
	refused("every node", refOf(web.Instances[0]), refOf(web.Instances[1]), refOf(web.Instances[2]))

	if err := e.Driver.NodePoolRemoveNodes(ctx, e.Cluster, "web", []provider.NodeRef{refOf(victim)}); err != nil {
		t.Fatal(err)
	}
	if st := e.poolState(t, "web"); st.Count != 2 {
		t.Fatalf("count %d after removing a node, want 2", st.Count)
	}
	e.Clock.Advance(time.Hour)
	want := []string{web.Instances[0].ID, web.Instances[2].ID}
	slices.Sort(want)
	if got := ids(e.poolState(t, "web")); !slices.Equal(got, want) {
		t.Fatalf("instances %v, want %v", got, want)
	}
	if st := e.poolState(t, "api"); st.Count != 2 || !slices.Equal(ids(st), ids(api)) {
		t.Fatalf("the other pool changed: %+v", st)
	}
	sent := e.instanceDeletes()
	if err := e.Driver.NodePoolRemoveNodes(ctx, e.Cluster, "web", []provider.NodeRef{refOf(victim)}); err != nil || e.instanceDeletes() != sent {
		t.Fatalf("a node already gone: %v, %d deletes sent", err, e.instanceDeletes()-sent)
	}
	if p := list(t, e, "web"); p.Count != 2 {
		t.Fatalf("observed count %d, want 2", p.Count)
	}

	// By name alone, several at once (the second while the first goes).
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, e.spec("web", 4, "g4s.kube.small")); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	st := e.poolState(t, "web")
	two := []provider.NodeRef{{Name: st.Instances[3].Hostname}, {Name: st.Instances[0].Hostname}}
	if err := e.Driver.NodePoolRemoveNodes(ctx, e.Cluster, "web", two); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	want = []string{st.Instances[1].ID, st.Instances[2].ID}
	slices.Sort(want)
	if got := e.poolState(t, "web"); got.Count != 2 || !slices.Equal(ids(got), want) {
		t.Fatalf("after removing two by name: count %d, instances %v, want %v", got.Count, ids(got), want)
	}
}

package driver_test

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	civosim "github.com/kpool/kpool/cloudsim/civo"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/civo"
	"github.com/kpool/kpool/provider/providertest"
)

// scaled is a spec of a pool that autoscales between lo and hi nodes,
// its count the minimum (as kpool defaults it).
func (e *emulated) scaled(name string, lo, hi int) provider.PoolSpec {
	return providertest.Spec(e.Cluster, name, kpool.NodePoolSpec{
		Autoscaling: &kpool.Autoscaling{Enabled: true, MinNodes: ptr.To(lo), MaxNodes: ptr.To(hi)},
		Platform:    kpool.NodePoolPlatform{Civo: &kpool.CivoNodePool{Size: "g4s.kube.small"}},
	})
}

// entries are the --nodes entries of the autoscaler's Deployment, in
// order (nil: no Deployment).
func (e *emulated) entries(t *testing.T) []string {
	t.Helper()
	d, ok := e.Sim.Kube().Deployment(clusterID, civosim.AutoscalerNamespace, civosim.AutoscalerDeployment)
	if !ok {
		return nil
	}
	var out []string
	for _, arg := range d.Spec.Template.Spec.Containers[0].Command {
		if strings.HasPrefix(arg, "--nodes=") {
			out = append(out, strings.TrimPrefix(arg, "--nodes="))
		}
	}
	return out
}

// puts counts the pool PUTs the emulator has had for a pool.
func (e *emulated) puts(pn string) int {
	n := 0
	for _, c := range e.Sim.Calls() {
		if c.Method == "PUT" && strings.HasSuffix(c.Path, "/pools/"+pn) {
			n++
		}
	}
	return n
}

// TestAutoscalerEntries: the life of autoscaled pools on the wire. The
// first creates installs Civo's cluster autoscaler and writes its
// entry; bounds changes rewrite it (clamping a count left outside);
// two pools changed at once both end up in it; autoscaling off and a
// delete take out that pool's entry only; the application's shipped
// 3:10:workers (every pool's bounds while no entry names one) goes with
// the first entry, and an entry a person adds stays throughout.
func TestAutoscalerEntries(t *testing.T) {
	e := newEmulated(t)
	d, c := e.Driver, e.Cluster
	settle := func() { e.Clock.Advance(time.Hour) }
	for _, step := range []struct {
		name string
		do   func(t *testing.T)
		want []string
	}{
		{"no autoscaled pool: nothing installed", func(t *testing.T) {
			need(t)(d.NodePoolCreate(ctx, c, e.spec("fixed", 2, "g4s.kube.small")))
		}, nil},
		{"create web 2-6", func(t *testing.T) { need(t)(d.NodePoolCreate(ctx, c, e.scaled("web", 2, 6))) }, []string{"2:6:web"}},
		{"a person adds an entry", func(t *testing.T) {
			dep, _ := e.Sim.Kube().Deployment(clusterID, civosim.AutoscalerNamespace, civosim.AutoscalerDeployment)
			dep.Spec.Template.Spec.Containers[0].Command = append(dep.Spec.Template.Spec.Containers[0].Command, "--nodes=1:3:gpu")
			if _, err := e.Sim.Kube().Update(clusterID, dep); err != nil {
				t.Fatal(err)
			}
		}, []string{"2:6:web", "1:3:gpu"}},
		{"change web's bounds to 3-8: the count 2 is clamped to 3", func(t *testing.T) {
			settle()
			p := need(t)(d.NodePoolUpdate(ctx, c, e.scaled("web", 3, 8)))
			if p.Count != 3 || e.puts("web") != 1 {
				t.Fatalf("count %d after %d PUTs, want 3 after 1", p.Count, e.puts("web"))
			}
		}, []string{"3:8:web", "1:3:gpu"}},
		{"widen them to 1-9: no count is sent", func(t *testing.T) {
			settle()
			need(t)(d.NodePoolUpdate(ctx, c, e.scaled("web", 1, 9)))
			if e.puts("web") != 1 {
				t.Fatalf("%d PUTs of web, want the earlier one only", e.puts("web"))
			}
		}, []string{"1:9:web", "1:3:gpu"}},
		{"create api 1-4", func(t *testing.T) { need(t)(d.NodePoolCreate(ctx, c, e.scaled("api", 1, 4))) }, []string{"1:9:web", "1:3:gpu", "1:4:api"}},
		{"change web and api at once", func(t *testing.T) {
			settle()
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, s := range []provider.PoolSpec{e.scaled("web", 2, 5), e.scaled("api", 2, 7)} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = d.NodePoolUpdate(ctx, c, s)
				}()
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
		}, []string{"2:5:web", "1:3:gpu", "2:7:api"}},
		{"api stops autoscaling", func(t *testing.T) {
			settle()
			need(t)(d.NodePoolUpdate(ctx, c, e.spec("api", 2, "g4s.kube.small")))
		}, []string{"2:5:web", "1:3:gpu"}},
		{"delete web", func(t *testing.T) {
			if err := d.NodePoolDelete(ctx, c, "web"); err != nil {
				t.Fatal(err)
			}
		}, []string{"1:3:gpu"}},
	} {
		t.Run(step.name, func(t *testing.T) {
			step.do(t)
			if got := e.entries(t); !slices.Equal(got, step.want) {
				t.Fatalf("entries %v, want %v", got, step.want)
			}
		})
	}
}

// need fails the test on a driver call's error and returns its pool.
func need(t *testing.T) func(*provider.Pool, error) *provider.Pool {
	return func(p *provider.Pool, err error) *provider.Pool {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
}

// TestAutoscalerOwnsCount: the emulated autoscaler (SetDemand) moves the
// pool within its bounds; the list reports the bounds from the
// Deployment and drift sees no difference, so the controllers leave the
// count alone; an entry removed by hand is drift, which an update puts
// back.
func TestAutoscalerOwnsCount(t *testing.T) {
	e := newEmulated(t)
	d, c := e.Driver, e.Cluster
	s := e.scaled("web", 2, 6)
	need(t)(d.NodePoolCreate(ctx, c, s))
	need(t)(d.NodePoolCreate(ctx, c, e.spec("fixed", 3, "g4s.kube.small")))
	e.Clock.Advance(time.Hour)
	for _, tc := range []struct{ demand, want int }{{5, 5}, {12, 6}, {1, 2}, {4, 4}} {
		if n, err := e.Sim.SetDemand(region, clusterID, "web", tc.demand); err != nil || n != tc.want {
			t.Fatalf("SetDemand(%d) = %d, %v; want %d", tc.demand, n, err, tc.want)
		}
	}
	if _, err := e.Sim.SetDemand(region, clusterID, "fixed", 5); err == nil || find(t, e, "fixed").Count != 3 {
		t.Fatalf("a pool with no entry was scaled: %v", err)
	}
	p := find(t, e, "web")
	if p.Count != 4 || !p.Autoscaling || p.MinCount != 2 || p.MaxCount != 6 {
		t.Fatalf("listed %d nodes, autoscaling %v %d-%d", p.Count, p.Autoscaling, p.MinCount, p.MaxCount)
	}
	if diffs := provider.Compare(civo.Profile{}, s, p); len(diffs) != 0 {
		t.Fatalf("drift fights the autoscaler: %v", diffs)
	}
	before := e.puts("web")
	need(t)(d.NodePoolUpdate(ctx, c, s))
	if e.puts("web") != before {
		t.Fatal("an update with nothing to change sent the count")
	}

	// A person takes the entry out: drift sees it, an update restores it.
	dep, _ := e.Sim.Kube().Deployment(clusterID, civosim.AutoscalerNamespace, civosim.AutoscalerDeployment)
	ct := &dep.Spec.Template.Spec.Containers[0]
	ct.Command = slices.DeleteFunc(ct.Command, func(a string) bool { return a == "--nodes=2:6:web" })
	if _, err := e.Sim.Kube().Update(clusterID, dep); err != nil {
		t.Fatal(err)
	}
	diffs := provider.Compare(civo.Profile{}, s, find(t, e, "web"))
	if len(diffs) != 1 || diffs[0].Field != provider.FieldAutoscaling {
		t.Fatalf("drift %v, want autoscaling", diffs)
	}
	need(t)(d.NodePoolUpdate(ctx, c, s))
	if got := e.entries(t); !slices.Equal(got, []string{"2:6:web"}) {
		t.Fatalf("entries %v", got)
	}
}

func find(t *testing.T, e *emulated, pn string) *provider.Pool {
	t.Helper()
	pools, err := e.Driver.NodePoolList(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := provider.Find(pools, pn)
	if !ok {
		t.Fatalf("no pool %s", pn)
	}
	return p
}

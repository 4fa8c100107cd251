package driver_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
	civosim "github.com/kpool/kpool/cloudsim/civo"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/civo/driver"
	"github.com/kpool/kpool/reconcile/reconciletest"
	"github.com/kpool/kpool/service"
)

// civoWorld is the demo Civo cluster end to end (reconciletest.World),
// with the autoscaler's entries at hand.
type civoWorld struct {
	*reconciletest.World
	sim *civosim.Server
}

func newCivoWorld(t *testing.T) *civoWorld {
	emu, err := civosim.Demo(sim.Options{OperationTime: 20 * time.Millisecond, NodeTime: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	w := &civoWorld{World: reconciletest.New(t, emu, func(o provider.DriverOptions) provider.Driver { return driver.New(o) }), sim: emu}
	w.Start(50 * time.Millisecond)
	return w
}

// calls counts the emulator's calls of a method whose path ends so.
func (w *civoWorld) calls(method, suffix string) int {
	return w.Calls(func(c sim.Call) bool { return c.Method == method && strings.HasSuffix(c.Path, suffix) })
}

// entries are the autoscaler's --nodes entries, sorted.
func (w *civoWorld) entries() []string {
	d, ok := w.sim.Kube().Deployment(civosim.DemoClusterID, civosim.AutoscalerNamespace, civosim.AutoscalerDeployment)
	if !ok {
		return nil
	}
	var out []string
	for _, arg := range d.Spec.Template.Spec.Containers[0].Command {
		if v, ok := strings.CutPrefix(arg, "--nodes="); ok {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// settled waits until every pool named is Ready at its generation and
// the autoscaler's entries are want.
func (w *civoWorld) settled(want []string, pools ...*kpool.NodePool) {
	w.T.Helper()
	w.WaitFor(time.Minute, func() (bool, string) {
		for _, p := range pools {
			got := w.Pool(p.ID)
			if got.Status.Phase != kpool.PhaseReady || got.Status.ObservedGeneration != got.Generation {
				return false, fmt.Sprintf("%s %s at %d/%d: %s", p.Name, got.Status.Phase, got.Status.ObservedGeneration, got.Generation, got.Status.Message)
			}
		}
		e := w.entries()
		return slices.Equal(e, want), fmt.Sprintf("entries %v, want %v", e, want)
	})
}

// TestE2EAutoscaledPools is the "done when" on the demo Civo
// cluster, through the API's service and the controllers: web with
// bounds 2-6 reaches Ready with the autoscaler holding 2:6:<pool>;
// changing the bounds updates it; two pools changed at the same time
// both end up in it; deleting one removes only its entry; the
// application's shipped 3:10:workers goes with the first entry.
func TestE2EAutoscaledPools(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test (emulator, wall clock); -short leaves it out")
	}
	w := newCivoWorld(t)
	user := w.Ctx()
	create := func(name string, lo, hi int) *kpool.NodePool {
		spec := fmt.Sprintf(`{"autoscaling":{"enabled":true,"minNodes":%d,"maxNodes":%d},"platform":{"civo":{"size":"g4s.kube.small"}}}`, lo, hi)
		p, err := w.Svc.CreateNodePool(user, service.NodePoolCreate{Name: name, ClusterID: w.Cluster.ID, Spec: json.RawMessage(spec)})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	bounds := func(p *kpool.NodePool, lo, hi int) {
		spec := fmt.Sprintf(`{"autoscaling":{"minNodes":%d,"maxNodes":%d}}`, lo, hi)
		if _, err := w.Svc.UpdateNodePool(user, p.ID, service.Update{Patch: true, Spec: json.RawMessage(spec)}); err != nil {
			t.Fatal(err)
		}
	}
	web := create("web", 2, 6)
	w.settled([]string{"2:6:" + web.ProviderName}, web)
	bounds(web, 3, 8)
	w.settled([]string{"3:8:" + web.ProviderName}, web)
	api := create("api", 1, 4)
	w.settled([]string{"1:4:" + api.ProviderName, "3:8:" + web.ProviderName}, web, api)
	bounds(web, 2, 5)
	bounds(api, 2, 7)
	w.settled([]string{"2:5:" + web.ProviderName, "2:7:" + api.ProviderName}, web, api)

	// The autoscaler moves web; the controllers leave its count alone.
	w.WaitFor(time.Minute, func() (bool, string) {
		n, err := w.sim.SetDemand(civosim.DemoRegion, civosim.DemoClusterID, web.ProviderName, 4)
		return err == nil && n == 4, fmt.Sprintf("SetDemand: %d, %v", n, err)
	})
	puts, lists := w.calls("PUT", "/pools/"+web.ProviderName), w.calls("GET", "/pools")
	w.WaitFor(time.Minute, func() (bool, string) { // five more drift passes
		n := w.calls("GET", "/pools") - lists
		return n >= 5, fmt.Sprintf("%d passes", n)
	})
	w.settled([]string{"2:5:" + web.ProviderName, "2:7:" + api.ProviderName}, web, api)
	if st, _ := w.sim.PoolOf(civosim.DemoRegion, civosim.DemoClusterID, web.ProviderName); st.Count != 4 || w.calls("PUT", "/pools/"+web.ProviderName) != puts {
		t.Fatalf("web has %d nodes after the autoscaler's 4, and %d more PUTs", st.Count, w.calls("PUT", "/pools/"+web.ProviderName)-puts)
	}

	if _, _, err := w.Svc.DeleteNodePool(user, api.ID, service.Delete{}); err != nil {
		t.Fatal(err)
	}
	w.settled([]string{"2:5:" + web.ProviderName}, web)
	w.WaitFor(time.Minute, func() (bool, string) {
		_, found := w.sim.PoolOf(civosim.DemoRegion, civosim.DemoClusterID, api.ProviderName)
		return !found, "api is still at Civo"
	})
}

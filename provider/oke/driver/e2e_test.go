package driver_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kpool/kpool"
	okesim "github.com/kpool/kpool/cloudsim/oke"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/oke/driver"
	"github.com/kpool/kpool/reconcile/reconciletest"
	"github.com/kpool/kpool/service"
)

// TestE2EAutoscaledPools: on the demo OKE cluster, through the API's
// service and the controllers, a pool created with --min 2 --max 6
// becomes Ready with 2:6:<its OCID> in the Cluster Autoscaler add-on;
// new bounds replace its entry; two pools created at the same time both
// end up there; deleting one removes its entry alone.
func TestE2EAutoscaledPools(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test (emulator, wall clock); -short leaves it out")
	}
	emu, err := okesim.Demo(sim.Options{OperationTime: 20 * time.Millisecond, NodeTime: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	w := reconciletest.New(t, emu, func(o provider.DriverOptions) provider.Driver { return driver.New(o) })
	w.Start(50 * time.Millisecond)
	create := func(name string, lo, hi int) *kpool.NodePool {
		spec := fmt.Sprintf(`{"autoscaling":{"enabled":true,"minNodes":%d,"maxNodes":%d},"platform":{"oci":{"shape":"VM.Standard.E4.Flex","ocpus":1}}}`, lo, hi)
		p, err := w.Svc.CreateNodePool(w.Ctx(), service.NodePoolCreate{Name: name, ClusterID: w.Cluster.ID, Spec: json.RawMessage(spec)})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// settled waits for every pool Ready at its generation with these
	// entries (and no others) in the add-on.
	settled := func(pools []*kpool.NodePool, bounds ...string) {
		w.WaitFor(time.Minute, func() (bool, string) {
			var want []string
			for i, p := range pools {
				got := w.Pool(p.ID)
				if got.Status.Phase != kpool.PhaseReady || got.Status.ObservedGeneration != got.Generation {
					return false, fmt.Sprintf("%s is %s at %d/%d: %s", got.Name, got.Status.Phase, got.Status.ObservedGeneration, got.Generation, got.Status.Message)
				}
				st, _ := emu.PoolOf(okesim.DemoClusterID, got.ProviderName)
				want = append(want, bounds[i]+":"+*st.Id)
			}
			nodes, _ := emu.AutoscalerNodes(okesim.DemoClusterID)
			have := strings.Split(nodes, ",")
			return sameSet(have, want), fmt.Sprintf("nodes %q, want %q", nodes, want)
		})
	}
	web := create("web", 2, 6)
	settled([]*kpool.NodePool{web}, "2:6")

	if _, err := w.Svc.UpdateNodePool(w.Ctx(), web.ID, service.Update{Patch: true, Spec: json.RawMessage(`{"autoscaling":{"minNodes":3,"maxNodes":5}}`)}); err != nil {
		t.Fatal(err)
	}
	settled([]*kpool.NodePool{web}, "3:5")

	var a, b *kpool.NodePool
	var wg sync.WaitGroup
	wg.Go(func() { a = create("api", 1, 4) })
	wg.Go(func() { b = create("batch", 1, 3) })
	wg.Wait()
	settled([]*kpool.NodePool{web, a, b}, "3:5", "1:4", "1:3")

	if _, _, err := w.Svc.DeleteNodePool(w.Ctx(), a.ID, service.Delete{}); err != nil {
		t.Fatal(err)
	}
	w.WaitFor(time.Minute, func() (bool, string) {
		st, ok := emu.PoolOf(okesim.DemoClusterID, a.ProviderName)
		return !ok || st.LifecycleState == "DELETED", "api is still at OKE"
	})
	settled([]*kpool.NodePool{web, b}, "3:5", "1:3")
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		seen[s]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

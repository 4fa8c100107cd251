package driver_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
	gkesim "github.com/kpool/kpool/cloudsim/gke"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/gke/driver"
	"github.com/kpool/kpool/reconcile/reconciletest"
	"github.com/kpool/kpool/service"
)

// TestE2EGuideGPUPoolSettles: the guide's GPU pool, created through the
// controllers and the driver on the emulator (where GKE adds its
// nvidia.com/gpu taint, the demo cluster having a pool without GPUs),
// becomes Ready and stays so over many drift intervals with no further
// write: before, the driver sent GKE's taint back as the user's and the
// drift check re-sent nodePools.update on every pass (121 in 3 minutes).
func TestE2EGuideGPUPoolSettles(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test (emulator, wall clock); -short leaves it out")
	}
	emu, err := gkesim.Demo(sim.Options{OperationTime: 20 * time.Millisecond, NodeTime: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	w := reconciletest.New(t, emu, func(o provider.DriverOptions) provider.Driver { return driver.New(o) })
	w.Start(50 * time.Millisecond)
	spec := `{"nodeCount":2,"autoscaling":{"enabled":true,"minNodes":2,"maxNodes":6},"zones":["1","2"],` +
		`"labels":{"workload":"training"},"taints":[{"key":"workload-type","value":"gpu","effect":"NoSchedule"}],` +
		`"platform":{"gcp":{"machineType":"n1-standard-4","preemptible":true,"accelerators":[{"type":"nvidia-tesla-v100","count":1}]}}}`
	p, err := w.Svc.CreateNodePool(w.Ctx(), service.NodePoolCreate{Name: "gpu", ClusterID: w.Cluster.ID, Spec: json.RawMessage(spec)})
	if err != nil {
		t.Fatal(err)
	}
	ready := func() (bool, string) {
		got := w.Pool(p.ID)
		for _, c := range got.Status.Conditions {
			if c.Type == kpool.ConditionDrifted && c.Status == kpool.ConditionTrue {
				t.Fatalf("the GPU pool drifted: %s %s", c.Reason, c.Message)
			}
		}
		return got.Status.Phase == kpool.PhaseReady && got.Status.ObservedGeneration == got.Generation,
			fmt.Sprintf("%s at %d/%d: %s", got.Status.Phase, got.Status.ObservedGeneration, got.Generation, got.Status.Message)
	}
	w.WaitFor(time.Minute, ready)
	st, _ := emu.Pool(gkesim.DemoProject, gkesim.DemoLocation, gkesim.DemoCluster, p.ProviderName)
	var taints []string
	for _, tt := range st.Config.Taints {
		taints = append(taints, tt.Key+"="+tt.Value+":"+tt.Effect)
	}
	if strings.Join(taints, ",") != "workload-type=gpu:NO_SCHEDULE,nvidia.com/gpu=present:NO_SCHEDULE" || !st.Config.Preemptible && !st.Config.Spot {
		t.Fatalf("the pool at GKE: taints %v, %+v", taints, st.Config)
	}
	writes := func(c sim.Call) bool {
		return c.Method != "GET" && strings.Contains(c.Path, "/nodePools/"+p.ProviderName)
	}
	lists := func(c sim.Call) bool { return c.Method == "GET" && strings.HasSuffix(c.Path, "/nodePools") }
	before, listed := w.Calls(writes), w.Calls(lists)
	// Twenty more passes, each listing the cluster's pools.
	w.WaitFor(time.Minute, func() (bool, string) {
		n := w.Calls(lists) - listed
		return n >= 20, fmt.Sprintf("%d passes", n)
	})
	if after := w.Calls(writes); after != before {
		t.Fatalf("%d writes to the settled GPU pool over 20 drift passes", after-before)
	}
	if ok, why := ready(); !ok {
		t.Fatalf("no longer Ready: %s", why)
	}
}

package driver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
	gkesim "github.com/kpool/kpool/cloudsim/gke"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/provider/gke/driver"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/service"
	"github.com/kpool/kpool/store/storetest"
	"github.com/kpool/kpool/store/testdb"
)

// gkeWorld is a kpool service on a SQLite store and the GKE emulator's
// demo cluster (whose default-pool has no GPUs) on loopback TLS, on the
// wall clock with fast operations, driven by the GKE driver: what
// reconcile's aksWorld is for AKS.
type gkeWorld struct {
	t       *testing.T
	svc     *service.Service
	sim     *gkesim.Server
	drivers *provider.Registry
	cluster *kpool.Cluster
}

const e2eOwner = "alice@example.com"

func newGKEWorld(t *testing.T) *gkeWorld {
	emu, err := gkesim.Demo(sim.Options{OperationTime: 20 * time.Millisecond, NodeTime: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(emu)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	creds, err := provider.DefaultCredentials(catalog.Profiles(), []string{srv.URL})
	if err == nil {
		pt, id := emu.Identity()
		creds, err = provider.WithEmulators(creds, catalog.Profiles(), map[kpool.PlatformType]any{pt: id}, []string{srv.URL}, "")
	}
	if err != nil {
		t.Fatal(err)
	}
	w := &gkeWorld{t: t, sim: emu, drivers: catalog.Registry()}
	w.drivers.Add(driver.New(provider.DriverOptions{Credentials: creds, Transport: srv.Client().Transport, Retry: providertestRetry()}))
	w.svc = service.New(testdb.SQLite(t), w.drivers)
	w.svc.Endpoints, _ = kpool.ParseOrigins([]string{srv.URL})
	w.svc.Credentials = creds
	spec := fmt.Sprintf(`{"endpoint":%q,"platform":{"type":"gcp","gcp":{"projectId":%q,"location":%q,"clusterName":%q}}}`,
		srv.URL, gkesim.DemoProject, gkesim.DemoLocation, gkesim.DemoCluster)
	if w.cluster, err = w.svc.CreateCluster(storetest.Ctx(e2eOwner), service.ClusterCreate{Name: "prod", Spec: json.RawMessage(spec)}); err != nil {
		t.Fatal(err)
	}
	return w
}

// start runs a controller with a short drift interval until the test ends.
func (w *gkeWorld) start(drift time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	ctl := reconcile.New(reconcile.Config{
		Service: w.svc, Drivers: w.drivers, Log: slog.New(slog.DiscardHandler), Holder: "a",
		Workers: 2, ResyncFast: 25 * time.Millisecond, DriftInterval: drift, ResyncSlow: time.Second,
		BackoffBase: 5 * time.Millisecond, BackoffMax: 200 * time.Millisecond,
		LeaseTTL: 600 * time.Millisecond, PollEvents: 50 * time.Millisecond,
		Limits: map[kpool.PlatformType]reconcile.Limits{kpool.PlatformGCP: {Concurrency: 4, RequestsPerSecond: 2000, Burst: 200}},
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ctl.Run(ctx)
	}()
	w.t.Cleanup(func() { cancel(); <-done })
}

// waitFor re-checks cond after every committed write and every emulator
// call until it holds, failing after timeout.
func (w *gkeWorld) waitFor(timeout time.Duration, cond func() (bool, string)) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	wake := w.svc.Store.Subscribe(ctx)
	tick := time.NewTicker(20 * time.Millisecond) // the emulator's calls are no store writes
	defer tick.Stop()
	why := ""
	for {
		var ok bool
		if ok, why = cond(); ok {
			return
		}
		select {
		case <-wake:
		case <-tick.C:
		case <-ctx.Done():
			w.t.Fatalf("not reached after %v: %s", timeout, why)
		}
	}
}

// calls counts the emulator's calls that match.
func (w *gkeWorld) calls(match func(sim.Call) bool) int {
	n := 0
	for _, c := range w.sim.Calls() {
		if match(c) {
			n++
		}
	}
	return n
}

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
	w := newGKEWorld(t)
	w.start(50 * time.Millisecond)
	spec := `{"nodeCount":2,"autoscaling":{"enabled":true,"minNodes":2,"maxNodes":6},"zones":["1","2"],` +
		`"labels":{"workload":"training"},"taints":[{"key":"workload-type","value":"gpu","effect":"NoSchedule"}],` +
		`"platform":{"gcp":{"machineType":"n1-standard-4","preemptible":true,"accelerators":[{"type":"nvidia-tesla-v100","count":1}]}}}`
	p, err := w.svc.CreateNodePool(storetest.Ctx(e2eOwner), service.NodePoolCreate{Name: "gpu", ClusterID: w.cluster.ID, Spec: json.RawMessage(spec)})
	if err != nil {
		t.Fatal(err)
	}
	ready := func() (bool, string) {
		got, err := w.svc.Store.NodePool(context.Background(), p.ID)
		if err != nil {
			return false, err.Error()
		}
		for _, c := range got.Status.Conditions {
			if c.Type == kpool.ConditionDrifted && c.Status == kpool.ConditionTrue {
				w.t.Fatalf("the GPU pool drifted: %s %s", c.Reason, c.Message)
			}
		}
		return got.Status.Phase == kpool.PhaseReady && got.Status.ObservedGeneration == got.Generation,
			fmt.Sprintf("%s at %d/%d: %s", got.Status.Phase, got.Status.ObservedGeneration, got.Generation, got.Status.Message)
	}
	w.waitFor(time.Minute, ready)
	st, _ := w.sim.Pool(gkesim.DemoProject, gkesim.DemoLocation, gkesim.DemoCluster, p.ProviderName)
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
	before, listed := w.calls(writes), w.calls(lists)
	// Twenty more passes, each listing the cluster's pools.
	w.waitFor(time.Minute, func() (bool, string) {
		n := w.calls(lists) - listed
		return n >= 20, fmt.Sprintf("%d passes", n)
	})
	if after := w.calls(writes); after != before {
		t.Fatalf("%d writes to the settled GPU pool over 20 drift passes", after-before)
	}
	if ok, why := ready(); !ok {
		t.Fatalf("no longer Ready: %s", why)
	}
}

// providertestRetry is quick SDK retries: the emulator's Retry-After of 1s
// on a 503 would make the test wait on the wall clock for nothing.
func providertestRetry() *provider.Retry {
	r := provider.DefaultRetry()
	r.Delay, r.MaxDelay = 5*time.Millisecond, 20*time.Millisecond
	return &r
}

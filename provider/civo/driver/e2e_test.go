package driver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
	civosim "github.com/kpool/kpool/cloudsim/civo"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/provider/civo/driver"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/service"
	"github.com/kpool/kpool/store/storetest"
	"github.com/kpool/kpool/store/testdb"
)

// civoWorld is a kpool service on a SQLite store and the Civo emulator's
// demo cluster on loopback TLS (as kpool dev serves it: its kubeconfigs
// trust the emulator's CA), on the wall clock with fast operations,
// driven by the Civo driver and the controllers.
type civoWorld struct {
	t       *testing.T
	svc     *service.Service
	sim     *civosim.Server
	drivers *provider.Registry
	cluster *kpool.Cluster
}

const e2eOwner = "alice@example.com"

func newCivoWorld(t *testing.T) *civoWorld {
	emu, err := civosim.Demo(sim.Options{OperationTime: 20 * time.Millisecond, NodeTime: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ep, _, err := sim.TLSServer(emu, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ep.Close() })
	creds, err := provider.DefaultCredentials(catalog.Profiles(), []string{ep.URL})
	if err == nil {
		pt, id := emu.Identity()
		creds, err = provider.WithEmulators(creds, catalog.Profiles(), map[kpool.PlatformType]any{pt: id}, []string{ep.URL}, "")
	}
	if err != nil {
		t.Fatal(err)
	}
	retry := provider.DefaultRetry()
	retry.Delay, retry.MaxDelay = 5*time.Millisecond, 20*time.Millisecond
	w := &civoWorld{t: t, sim: emu, drivers: catalog.Registry()}
	w.drivers.Add(driver.New(provider.DriverOptions{Credentials: creds, Transport: ep.Transport(), Retry: &retry}))
	w.svc = service.New(testdb.SQLite(t), w.drivers)
	w.svc.Endpoints, _ = kpool.ParseOrigins([]string{ep.URL})
	w.svc.Credentials = creds
	spec := fmt.Sprintf(`{"endpoint":%q,"platform":{"type":"civo","civo":{"region":%q,"clusterId":%q}}}`, ep.URL, civosim.DemoRegion, civosim.DemoClusterID)
	if w.cluster, err = w.svc.CreateCluster(storetest.Ctx(e2eOwner), service.ClusterCreate{Name: "prod", Spec: json.RawMessage(spec)}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ctl := reconcile.New(reconcile.Config{
		Service: w.svc, Drivers: w.drivers, Log: slog.New(slog.DiscardHandler), Holder: "a",
		Workers: 2, ResyncFast: 25 * time.Millisecond, DriftInterval: 50 * time.Millisecond, ResyncSlow: time.Second,
		BackoffBase: 5 * time.Millisecond, BackoffMax: 200 * time.Millisecond,
		LeaseTTL: 600 * time.Millisecond, PollEvents: 50 * time.Millisecond,
		Limits: map[kpool.PlatformType]reconcile.Limits{kpool.PlatformCivo: {Concurrency: 4, RequestsPerSecond: 2000, Burst: 200}},
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ctl.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

// waitFor re-checks cond after every committed write, and on a short
// tick (the emulator's calls are no store writes), until it holds.
func (w *civoWorld) waitFor(cond func() (bool, string)) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	wake := w.svc.Store.Subscribe(ctx)
	tick := time.NewTicker(20 * time.Millisecond)
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
			w.t.Fatalf("not reached in a minute: %s", why)
		}
	}
}

// calls counts the emulator's calls of a method whose path ends so.
func (w *civoWorld) calls(method, suffix string) int {
	n := 0
	for _, c := range w.sim.Calls() {
		if c.Method == method && strings.HasSuffix(c.Path, suffix) {
			n++
		}
	}
	return n
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
	w.t.Helper()
	w.waitFor(func() (bool, string) {
		for _, p := range pools {
			got, err := w.svc.Store.NodePool(context.Background(), p.ID)
			if err != nil {
				return false, err.Error()
			}
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
// application's own 3:10:workers stays.
func TestE2EAutoscaledPools(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test (emulator, wall clock); -short leaves it out")
	}
	w := newCivoWorld(t)
	user := storetest.Ctx(e2eOwner)
	create := func(name string, lo, hi int) *kpool.NodePool {
		spec := fmt.Sprintf(`{"autoscaling":{"enabled":true,"minNodes":%d,"maxNodes":%d},"platform":{"civo":{"size":"g4s.kube.small"}}}`, lo, hi)
		p, err := w.svc.CreateNodePool(user, service.NodePoolCreate{Name: name, ClusterID: w.cluster.ID, Spec: json.RawMessage(spec)})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	bounds := func(p *kpool.NodePool, lo, hi int) {
		spec := fmt.Sprintf(`{"autoscaling":{"minNodes":%d,"maxNodes":%d}}`, lo, hi)
		if _, err := w.svc.UpdateNodePool(user, p.ID, service.Update{Patch: true, Spec: json.RawMessage(spec)}); err != nil {
			t.Fatal(err)
		}
	}
	web := create("web", 2, 6)
	w.settled([]string{"2:6:" + web.ProviderName, "3:10:workers"}, web)
	bounds(web, 3, 8)
	w.settled([]string{"3:10:workers", "3:8:" + web.ProviderName}, web)
	api := create("api", 1, 4)
	w.settled([]string{"1:4:" + api.ProviderName, "3:10:workers", "3:8:" + web.ProviderName}, web, api)
	bounds(web, 2, 5)
	bounds(api, 2, 7)
	w.settled([]string{"2:5:" + web.ProviderName, "2:7:" + api.ProviderName, "3:10:workers"}, web, api)

	// The autoscaler moves web; the controllers leave its count alone.
	w.waitFor(func() (bool, string) {
		n, err := w.sim.SetDemand(civosim.DemoRegion, civosim.DemoClusterID, web.ProviderName, 4)
		return err == nil && n == 4, fmt.Sprintf("SetDemand: %d, %v", n, err)
	})
	puts, lists := w.calls("PUT", "/pools/"+web.ProviderName), w.calls("GET", "/pools")
	w.waitFor(func() (bool, string) { // five more drift passes
		n := w.calls("GET", "/pools") - lists
		return n >= 5, fmt.Sprintf("%d passes", n)
	})
	w.settled([]string{"2:5:" + web.ProviderName, "2:7:" + api.ProviderName, "3:10:workers"}, web, api)
	if st, _ := w.sim.PoolOf(civosim.DemoRegion, civosim.DemoClusterID, web.ProviderName); st.Count != 4 || w.calls("PUT", "/pools/"+web.ProviderName) != puts {
		t.Fatalf("web has %d nodes after the autoscaler's 4, and %d more PUTs", st.Count, w.calls("PUT", "/pools/"+web.ProviderName)-puts)
	}

	if _, _, err := w.svc.DeleteNodePool(user, api.ID, service.Delete{}); err != nil {
		t.Fatal(err)
	}
	w.settled([]string{"2:5:" + web.ProviderName, "3:10:workers"}, web)
	w.waitFor(func() (bool, string) {
		_, found := w.sim.PoolOf(civosim.DemoRegion, civosim.DemoClusterID, api.ProviderName)
		return !found, "api is still at Civo"
	})
}

package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kpool/kpool/service"

	"github.com/prometheus/client_golang/prometheus"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/store/storetest"
	"github.com/kpool/kpool/store/testdb"
)

// The controllers' logic is tested here on the fake driver and a fake
// clock: each test runs in a synctest bubble, so that settle can tell when
// every goroutine is idle (the controllers waiting for the clock or for
// work), and the test moves the clock a tick at a time and looks after
// each. Nothing waits on the wall clock. The end-to-end tests with the AKS
// driver and its emulator are in e2e_test.go.

const owner = "alice@example.com"

// tick is how far the tests move the fake clock at a time.
const tick = time.Second

// warnings counts the controllers' warnings, which a clean run must not have.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) Enabled(context.Context, slog.Level) bool { return true }
func (w *warnings) WithAttrs([]slog.Attr) slog.Handler       { return w }
func (w *warnings) WithGroup(string) slog.Handler            { return w }
func (w *warnings) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		msg := r.Message
		r.Attrs(func(a slog.Attr) bool { msg += " " + a.String(); return true })
		w.mu.Lock()
		w.msgs = append(w.msgs, msg)
		w.mu.Unlock()
	}
	return nil
}

func (w *warnings) matching(s string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, m := range w.msgs {
		if strings.Contains(m, s) {
			out = append(out, m)
		}
	}
	return out
}

// world is a kpool service on a store, the fake driver standing for one
// platform, and the controllers, all on one fake clock. Make it inside a
// synctest bubble.
type world struct {
	t       *testing.T
	svc     *service.Service
	clock   *clocktesting.FakeClock
	drv     *fake.Driver
	drivers *provider.Registry
	cluster *kpool.Cluster
	block   string // a pool's platform block, as JSON
	warns   *warnings
	// metrics are the metrics of the controller started last.
	metrics *prometheus.Registry
}

// platforms are the clusters and pool blocks the tests use.
var platforms = map[kpool.PlatformType]struct{ cluster, pool string }{
	kpool.PlatformAzure: {
		`{"platform":{"type":"azure","azure":{"subscriptionId":"0b1f6471-1bf0-4dda-aec3-111122223333","resourceGroup":"rg","clusterName":"aks-prod","location":"westeurope"}}}`,
		`{"azure":{"vmSize":"Standard_D4s_v5"}}`,
	},
	kpool.PlatformOCI: {
		`{"platform":{"type":"oci","oci":{"region":"us-ashburn-1","compartmentId":"ocid1.compartment.oc1..aaaa","clusterId":"ocid1.cluster.oc1.iad.aaaa","imageId":"ocid1.image.oc1.iad.aaaa","subnets":{"Uocm:US-ASHBURN-AD-1":"ocid1.subnet.oc1.iad.aaaa"}}}}`,
		`{"oci":{"shape":"VM.Standard.E4.Flex","ocpus":2}}`,
	},
	kpool.PlatformCivo: {
		`{"platform":{"type":"civo","civo":{"region":"LON1","clusterId":"7c9e6679-7425-40de-944b-e07fc1f90ae7"}}}`,
		`{"civo":{"size":"g4s.kube.medium"}}`,
	},
}

func newWorld(t *testing.T, st kpool.Store, pt kpool.PlatformType) *world {
	t.Helper()
	clock := clocktesting.NewFakeClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	drivers := catalog.Registry()
	svc := service.New(st, drivers)
	w := &world{t: t, svc: svc, clock: clock, drv: fake.New(fake.Options{Platform: pt, Clock: clock, Seed: 1}),
		drivers: drivers, block: platforms[pt].pool, warns: &warnings{}}
	w.drivers.Add(w.drv)
	c, err := svc.CreateCluster(w.ctx(), service.ClusterCreate{Name: "prod", Spec: json.RawMessage(platforms[pt].cluster)})
	if err != nil {
		t.Fatal(err)
	}
	w.cluster = c
	return w
}

// start runs a controller until the returned stop is called; tweak, if
// any, changes its configuration first. It returns once the controller
// has settled: it holds the lease (when free) and has looked at every
// cluster once, so that what the test does next comes to it as an event.
func (w *world) start(holder string, tweak ...func(*reconcile.Config)) (stop func()) {
	w.metrics = prometheus.NewRegistry()
	cfg := reconcile.Config{
		Service: w.svc, Drivers: w.drivers, Log: slog.New(w.warns), Holder: holder, Clock: w.clock,
		Metrics: reconcile.NewMetrics(w.metrics), Workers: 4,
		Limits: map[kpool.PlatformType]reconcile.Limits{w.cluster.Spec.Platform.Type: {Concurrency: 4, RequestsPerSecond: 1000, Burst: 1000}},
	}
	for _, f := range tweak {
		f(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ctl := reconcile.New(cfg)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ctl.Run(ctx)
	}()
	w.settle()
	return func() {
		cancel()
		<-done
	}
}

func (w *world) ctx() context.Context { return storetest.Ctx(owner) }

// settle returns once every goroutine of the test is blocked: the
// controllers have done all they can until the clock moves or work comes.
func (w *world) settle() { synctest.Wait() }

// advance moves the clock by d, a tick at a time, settling after each.
func (w *world) advance(d time.Duration) {
	w.settle()
	for passed := time.Duration(0); passed < d; passed += tick {
		w.clock.Step(tick)
		w.settle()
	}
}

// until moves the clock a tick at a time until cond holds, failing once
// budget has passed on the clock without it.
func (w *world) until(budget time.Duration, cond func() (bool, string)) {
	w.t.Helper()
	end := w.clock.Now().Add(budget)
	for {
		w.settle()
		ok, why := cond()
		if ok {
			return
		}
		if !w.clock.Now().Before(end) {
			w.t.Fatalf("not so after %v on the clock: %s", budget, why)
		}
		w.clock.Step(tick)
	}
}

func (w *world) createPool(name string, count int, zones ...string) *kpool.NodePool {
	w.t.Helper()
	return w.createPoolWith(name, fmt.Sprintf(`"nodeCount":%d,"zones":%s`, count, must(json.Marshal(zones))))
}

// createPoolWith creates a pool of the world's platform with more fields
// of the spec (JSON members).
func (w *world) createPoolWith(name, fields string) *kpool.NodePool {
	w.t.Helper()
	spec := `{"platform":` + w.block + `,` + fields + `}`
	p, err := w.svc.CreateNodePool(w.ctx(), service.NodePoolCreate{Name: name, ClusterID: w.cluster.ID, Spec: json.RawMessage(spec)})
	if err != nil {
		w.t.Fatal(err)
	}
	return p
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func (w *world) patch(id, spec string) {
	w.t.Helper()
	if _, err := w.svc.UpdateNodePool(w.ctx(), id, service.Update{Patch: true, Spec: json.RawMessage(spec)}); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) delete(id string) {
	w.t.Helper()
	if _, _, err := w.svc.DeleteNodePool(w.ctx(), id, service.Delete{}); err != nil {
		w.t.Fatal(err)
	}
}

// pool reads a pool; nil once it is gone.
func (w *world) pool(id string) *kpool.NodePool {
	w.t.Helper()
	p, err := w.svc.NodePool(w.ctx(), id)
	if kpool.IsNotFound(err) {
		return nil
	}
	if err != nil {
		w.t.Fatal(err)
	}
	return p
}

// report is the in-process controller's last report on a pool.
func (w *world) report(id string) *kpool.ControllerStatus {
	w.t.Helper()
	doc, err := w.svc.NodePoolStatus(w.ctx(), id)
	if err != nil {
		w.t.Fatal(err)
	}
	for i := range doc.ControllerStatus {
		if doc.ControllerStatus[i].ControllerName == catalog.Registry().Profile(w.cluster.Spec.Platform.Type).ControllerName() {
			return &doc.ControllerStatus[i]
		}
	}
	return nil
}

// condition is a report's condition of a type: "status reason".
func condition(cs *kpool.ControllerStatus, typ string) string {
	if cs == nil {
		return ""
	}
	for _, c := range cs.Conditions {
		if c.Type == typ {
			return c.Status + " " + c.Reason
		}
	}
	return ""
}

func meta(cs *kpool.ControllerStatus) map[string]any {
	var m map[string]any
	if cs != nil {
		_ = json.Unmarshal(cs.Metadata, &m)
	}
	return m
}

// ready reports whether a pool is Ready at its generation.
func (w *world) ready(id string) func() (bool, string) {
	return func() (bool, string) {
		p := w.pool(id)
		if p == nil {
			return false, id + " is gone"
		}
		return p.Status.Phase == kpool.PhaseReady && p.Status.ObservedGeneration == p.Generation,
			fmt.Sprintf("%s is %s at %d/%d: %s", p.Name, p.Status.Phase, p.Status.ObservedGeneration, p.Generation, p.Status.Message)
	}
}

// calls counts the fake's calls of an operation on a provider name ("":
// any).
func (w *world) calls(op fake.Op, providerName string) int {
	n := 0
	for _, c := range w.drv.Calls() {
		if c.Op == op && (providerName == "" || c.ProviderName == providerName) {
			n++
		}
	}
	return n
}

// converged reports whether every pool is Ready at its generation and the
// provider's pool matches its spec, and the pools in gone are gone
// everywhere.
func (w *world) converged(gone map[string]string) func() (bool, string) {
	return func() (bool, string) {
		// Counting first spares reading every pool at every tick.
		f := kpool.NodePoolFilter{ClusterID: w.cluster.ID, Page: kpool.Page{Limit: 1}}
		_, all, err := w.svc.Store.NodePools(context.Background(), f)
		f.Phase = kpool.PhaseReady
		_, ready, err2 := w.svc.Store.NodePools(context.Background(), f)
		if err != nil || err2 != nil {
			return false, fmt.Sprint(err, err2)
		}
		if ready < all {
			return false, fmt.Sprintf("%d of %d pools Ready", ready, all)
		}
		pools, _, err := w.svc.Store.NodePools(context.Background(), kpool.NodePoolFilter{ClusterID: w.cluster.ID, Page: kpool.Page{Limit: 1000}})
		if err != nil {
			return false, err.Error()
		}
		for _, p := range pools {
			if _, ok := gone[p.ID]; ok {
				return false, p.Name + " still in kpool"
			}
			if p.Status.Phase != kpool.PhaseReady || p.Status.ObservedGeneration != p.Generation {
				return false, fmt.Sprintf("%s is %s at %d/%d: %s", p.Name, p.Status.Phase, p.Status.ObservedGeneration, p.Generation, p.Status.Message)
			}
			fp, ok := w.drv.Pool(w.cluster, p.ProviderName)
			if !ok {
				return false, p.Name + " missing at the provider"
			}
			if fp.Count != p.Spec.Count() || fp.State != provider.StateReady {
				return false, fmt.Sprintf("%s at the provider: count %d, %s", p.Name, fp.Count, fp.State)
			}
			for k, v := range p.Spec.Labels {
				if fp.Labels[k] != v {
					return false, fmt.Sprintf("%s at the provider lacks label %s=%s", p.Name, k, v)
				}
			}
		}
		for _, pn := range gone {
			if _, ok := w.drv.Pool(w.cluster, pn); ok {
				return false, pn + " still at the provider"
			}
		}
		return true, ""
	}
}

// noneCreatedTwice checks the fake's call log.
func (w *world) noneCreatedTwice() {
	w.t.Helper()
	creates := map[string]int{}
	for _, c := range w.drv.Calls() {
		if c.Created {
			creates[c.ProviderName]++
		}
	}
	for pn, n := range creates {
		if n > 1 {
			w.t.Errorf("pool %s created %d times", pn, n)
		}
	}
}

// histogram returns the sample count and sum of a histogram of the metrics.
func (w *world) histogram(name string) (uint64, float64) {
	w.t.Helper()
	mfs, err := w.metrics.Gather()
	if err != nil {
		w.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			h := mf.GetMetric()[0].GetHistogram()
			return h.GetSampleCount(), h.GetSampleSum()
		}
	}
	return 0, 0
}

// gauge returns the value of a gauge of the metrics.
func (w *world) gauge(name string) float64 {
	w.t.Helper()
	mfs, err := w.metrics.Gather()
	if err != nil {
		w.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return 0
}

// TestLifecycle: a pool is created, scaled, relabelled and deleted at the
// provider, each step reported: Creating, then Ready once the provider's
// operation ends; a delete keeps the record until the provider's pool is
// gone. Spec-to-Ready is measured on the controller's clock.
func TestLifecycle(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		stop := w.start("a")
		defer stop()
		p := w.createPool("web", 2, "1")
		w.settle()
		if n := w.calls(fake.Create, p.ProviderName); n != 1 {
			t.Fatalf("%d creates, want 1", n)
		}
		if got := condition(w.report(p.ID), kpool.ConditionReady); got != "False Creating" {
			t.Fatalf("Ready is %q while the provider creates, want False Creating", got)
		}
		w.until(5*time.Minute, w.ready(p.ID))
		fp, _ := w.drv.Pool(w.cluster, p.ProviderName)
		m := meta(w.report(p.ID))
		if fp.Count != 2 || fp.Zones[0] != "1" || m["active_nodes"] != 2.0 || m["desired_nodes"] != 2.0 || m["provisioning_state"] != "Ready" {
			t.Fatalf("ready: provider %+v, reported %v", fp, m)
		}

		w.patch(p.ID, `{"nodeCount":4}`)
		w.settle()
		if got := condition(w.report(p.ID), kpool.ConditionReady); got != "False Updating" {
			t.Fatalf("Ready is %q while the provider scales, want False Updating", got)
		}
		w.until(5*time.Minute, w.ready(p.ID))
		w.patch(p.ID, `{"labels":{"team":"web"}}`)
		w.until(5*time.Minute, w.ready(p.ID))
		if fp, _ := w.drv.Pool(w.cluster, p.ProviderName); fp.Count != 4 || fp.Labels["team"] != "web" || w.calls(fake.Update, "") != 2 {
			t.Fatalf("after two updates (%d calls): %+v", w.calls(fake.Update, ""), fp)
		}
		// Three generations readied: 50s, 50s and 30s of operations at least.
		if n, sum := w.histogram("kpool_spec_to_ready_seconds"); n != 3 || sum < 130 || sum > 300 {
			t.Fatalf("spec to ready: %d samples, %vs in all; want 3, from the clock", n, sum)
		}

		w.delete(p.ID)
		w.until(5*time.Minute, func() (bool, string) {
			_, atProvider := w.drv.Pool(w.cluster, p.ProviderName)
			if w.pool(p.ID) == nil {
				if atProvider {
					t.Fatal("the record went before the provider's pool")
				}
				return true, ""
			}
			return false, "still in kpool: " + condition(w.report(p.ID), kpool.ConditionDeleted)
		})
		if n := w.calls(fake.Delete, ""); n != 1 {
			t.Fatalf("%d deletes, want 1", n)
		}
		w.noneCreatedTwice()
		if warns := w.warns.matching(""); len(warns) > 0 {
			t.Fatalf("warnings: %v", warns)
		}
	})
}

// TestNewNodesOnlyReportsStaleNodes: on a provider that applies a change
// to new nodes only (OKE), the pool is Ready once the provider has the
// change, and its status says how many nodes still run the earlier
// configuration until they are gone.
func TestNewNodesOnlyReportsStaleNodes(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformOCI)
		stop := w.start("a")
		defer stop()
		p := w.createPool("batch", 3)
		w.until(10*time.Minute, w.ready(p.ID))
		if got := condition(w.report(p.ID), kpool.ConditionNodesCurrent); got != "True AllNodesCurrent" {
			t.Fatalf("new pool: NodesCurrent %q", got)
		}
		w.patch(p.ID, `{"platform":{"oci":{"shape":"VM.Standard.E5.Flex"}}}`)
		w.until(10*time.Minute, w.ready(p.ID))
		st := w.pool(p.ID).Status
		var nc *kpool.Condition
		for i := range st.Conditions {
			if st.Conditions[i].Type == kpool.ConditionNodesCurrent {
				nc = &st.Conditions[i]
			}
		}
		if nc == nil || nc.Status != kpool.ConditionFalse || !strings.Contains(nc.Message, "3 of 3 nodes still run an earlier configuration") {
			t.Fatalf("after a shape change: %+v", nc)
		}
		if m := meta(w.report(p.ID)); m["stale_nodes"] != float64(3) {
			t.Fatalf("stale_nodes %v", m["stale_nodes"])
		}
		// A scale-down removes old nodes first.
		w.patch(p.ID, `{"nodeCount":1}`)
		w.until(10*time.Minute, w.ready(p.ID))
		if got := condition(w.report(p.ID), kpool.ConditionNodesCurrent); got != "False NewNodesOnly" || meta(w.report(p.ID))["stale_nodes"] != float64(1) {
			t.Fatalf("after scaling to 1: %q %v", got, meta(w.report(p.ID)))
		}
	})
}

// TestPlacementLabelsReported: the pool's status says which kompox.dev
// labels its nodes carry, as the provider has them: what placement
// selects by.
func TestPlacementLabelsReported(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		stop := w.start("a")
		defer stop()
		p := w.createPool("edge", 1, "2")
		w.until(5*time.Minute, w.ready(p.ID))
		got := w.pool(p.ID).Status.PlacementLabels
		if got == nil || (*got)[provider.LabelPool] != "edge" || (*got)[provider.LabelZone] != "2" || len(*got) != 2 {
			t.Fatalf("placementLabels %v", got)
		}
		// Lost at the provider (someone relabelled the pool): the status
		// follows.
		if err := w.drv.Mutate(w.cluster, p.ProviderName, func(s *provider.PoolSpec) { delete(s.Labels, provider.LabelZone) }); err != nil {
			t.Fatal(err)
		}
		w.until(10*time.Minute, func() (bool, string) {
			l := w.pool(p.ID).Status.PlacementLabels
			return l != nil && (*l)[provider.LabelZone] == "", fmt.Sprintf("placementLabels %v", l)
		})
	})
}

// TestDeletionPolicyAbandon: a pool whose policy abandons it leaves kpool
// and stays at the provider, untouched.
func TestDeletionPolicyAbandon(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		stop := w.start("a")
		defer stop()
		p := w.createPoolWith("kept", `"nodeCount":1,"deletionPolicy":"Abandon"`)
		w.until(5*time.Minute, w.ready(p.ID))
		w.delete(p.ID)
		w.until(time.Minute, func() (bool, string) { return w.pool(p.ID) == nil, "still in kpool" })
		w.advance(time.Minute)
		fp, ok := w.drv.Pool(w.cluster, p.ProviderName)
		if !ok || fp.State != provider.StateReady || w.calls(fake.Delete, "") != 0 || w.calls(fake.Update, "") != 0 {
			t.Fatalf("abandoned pool at the provider: %+v (%v), %d deletes", fp, ok, w.calls(fake.Delete, ""))
		}
	})
}

// TestObserveModeNeverWrites: a pool in observe mode that the provider
// does not have fails as NotFound and is never created; one it has is
// reported, and deleting it in kpool leaves it there.
func TestObserveModeNeverWrites(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		ctx := context.Background()
		legacy := provider.PoolSpec{ProviderName: "legacy", MachineType: "Standard_D4s_v5", Count: 1, Mode: kpool.ModeUser,
			Labels: map[string]string{provider.LabelPool: "legacy"}}
		if _, err := w.drv.NodePoolCreate(ctx, w.cluster, legacy); err != nil {
			t.Fatal(err)
		}
		stop := w.start("a")
		defer stop()
		missing := w.createPoolWith("ghost", `"nodeCount":1,"management":"observe"`)
		present := w.createPoolWith("legacy", `"nodeCount":1,"management":"observe"`)
		w.until(5*time.Minute, w.ready(present.ID))
		w.until(time.Minute, func() (bool, string) {
			p := w.pool(missing.ID)
			return p.Status.Phase == kpool.PhaseFailed && condition(w.report(missing.ID), kpool.ConditionReady) == "False NotFound", string(p.Status.Phase)
		})
		w.delete(present.ID)
		w.until(time.Minute, func() (bool, string) { return w.pool(present.ID) == nil, "still in kpool" })
		w.advance(10 * time.Minute)
		if n := w.calls(fake.Create, "") + w.calls(fake.Update, "") + w.calls(fake.Delete, ""); n != 1 {
			t.Fatalf("%d writes to the provider, want only the test's own create", n)
		}
		if _, ok := w.drv.Pool(w.cluster, "legacy"); !ok {
			t.Fatal("an observed pool was deleted at the provider")
		}
	})
}

// TestDrift: a pool changed behind kpool's back is corrected and marked
// Drifted until it is; in observe mode it is only reported.
func TestDrift(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		stop := w.start("a")
		defer stop()
		managed := w.createPool("managed", 2, "1")
		observed := w.createPool("observed", 2, "1")
		w.until(5*time.Minute, w.converged(nil))
		w.patch(observed.ID, `{"management":"observe"}`)
		w.until(5*time.Minute, w.converged(nil))
		updates := w.calls(fake.Update, observed.ProviderName)

		for _, p := range []*kpool.NodePool{managed, observed} {
			if err := w.drv.Mutate(w.cluster, p.ProviderName, func(s *provider.PoolSpec) {
				s.Count = 5
				s.Labels["team"] = "intruder"
			}); err != nil {
				t.Fatal(err)
			}
		}
		sawDrift := false
		w.until(10*time.Minute, func() (bool, string) {
			sawDrift = sawDrift || condition(w.report(managed.ID), kpool.ConditionDrifted) == "True ChangedAtProvider"
			fp, _ := w.drv.Pool(w.cluster, managed.ProviderName)
			_, intruder := fp.Labels["team"]
			ok, why := w.ready(managed.ID)()
			return sawDrift && ok && fp.Count == 2 && !intruder && strings.HasPrefix(condition(w.report(managed.ID), kpool.ConditionDrifted), "False"),
				fmt.Sprintf("drift seen %v, count %d, %s", sawDrift, fp.Count, why)
		})
		w.until(time.Minute, func() (bool, string) {
			return condition(w.report(observed.ID), kpool.ConditionDrifted) == "True Observed", "observed pool not reported drifted"
		})
		if fp, _ := w.drv.Pool(w.cluster, observed.ProviderName); fp.Count != 5 || w.calls(fake.Update, observed.ProviderName) != updates {
			t.Fatalf("an observed pool was written: count %d", fp.Count)
		}
	})
}

// TestImport: a cluster that imports pools gets the provider's pools kpool
// did not know, in observe mode.
func TestImport(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		ctx := context.Background()
		// A pool made outside kpool.
		if _, err := w.drv.NodePoolCreate(ctx, w.cluster, provider.PoolSpec{ProviderName: "legacy", MachineType: "Standard_D2s_v5", Count: 3, Mode: "user",
			Labels: map[string]string{"team": "old"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.svc.UpdateCluster(w.ctx(), w.cluster.ID, service.Update{Spec: json.RawMessage(`{"importPools":true}`)}); err != nil {
			t.Fatal(err)
		}
		stop := w.start("a")
		defer stop()
		w.until(10*time.Minute, func() (bool, string) {
			pools, _, _ := w.svc.Store.NodePools(ctx, kpool.NodePoolFilter{ClusterID: w.cluster.ID, Page: kpool.Page{Limit: 10}})
			for _, p := range pools {
				if p.ProviderName == "legacy" {
					ok := p.Spec.Observed() && p.Spec.Count() == 3 && p.Spec.Labels["team"] == "old" && p.Spec.Platform.Azure.VMSize == "Standard_D2s_v5"
					return ok && p.Status.Phase == kpool.PhaseReady, fmt.Sprintf("imported as %+v, %s", p.Spec, p.Status.Phase)
				}
			}
			return false, "legacy not imported"
		})
		if n := w.calls(fake.Create, "") + w.calls(fake.Update, "") + w.calls(fake.Delete, ""); n != 1 {
			t.Fatalf("%d writes to the provider, want only the test's own create", n)
		}
	})
}

// TestRetryAfter: a throttled call is not made again before the provider's
// Retry-After has passed, and is made once it has; for a list as for a
// create.
func TestRetryAfter(t *testing.T) {
	t.Parallel()
	for _, op := range []fake.Op{fake.List, fake.Create} {
		t.Run(string(op), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
				wait := 90 * time.Second
				w.drv.FailNext(op, 1, &provider.Error{Kind: provider.KindThrottled, Provider: kpool.PlatformAzure, Reason: "slow down", RetryAfter: wait})
				stop := w.start("a")
				defer stop()
				p := w.createPool("web", 1)
				w.until(time.Minute, func() (bool, string) { return w.calls(op, "") == 1, "no call yet" })
				first := w.clock.Now()
				w.until(5*time.Minute, func() (bool, string) { return w.calls(op, "") >= 2, "not called again" })
				if waited := w.clock.Since(first); waited < wait || waited > wait+tick {
					t.Fatalf("called again after %v; Retry-After was %v", waited, wait)
				}
				w.until(5*time.Minute, w.ready(p.ID))
			})
		})
	}
}

// TestBackoff: a call that keeps failing with a transient error is retried
// after delays that double from BackoffBase (half fixed, half jitter), and
// the first success resets them.
func TestBackoff(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		fail := &provider.Error{Kind: provider.KindTransient, Provider: kpool.PlatformAzure, Reason: "try again"}
		w.drv.FailNext(fake.Create, 4, fail)
		base := 10 * time.Second
		stop := w.start("a", func(c *reconcile.Config) { c.BackoffBase, c.BackoffMax = base, 5*time.Minute })
		defer stop()
		p := w.createPool("web", 1)
		w.until(10*time.Minute, w.ready(p.ID))
		var at []time.Time
		for _, c := range w.drv.Calls() {
			if c.Op == fake.Create {
				at = append(at, c.At)
			}
		}
		if len(at) != 5 {
			t.Fatalf("%d creates, want 4 failures and a success", len(at))
		}
		for i := 1; i < len(at); i++ {
			delay := base << (i - 1)
			if got := at[i].Sub(at[i-1]); got < delay/2 || got > delay+tick {
				t.Fatalf("retry %d after %v, want %v to %v", i, got, delay/2, delay)
			}
		}
		if got := condition(w.report(p.ID), kpool.ConditionReady); got != "True NodesReady" {
			t.Fatalf("Ready %q", got)
		}
	})
}

// TestConvergesUnderFaults: 100 pools, scale 50, relabel 25, delete 25, with
// a 20% fault rate (refusals, lost replies, failed operations) and
// throttling; every pool converges, none is created twice, no delete is
// left undone, no status runs ahead of its generation.
func TestConvergesUnderFaults(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		w.drv.SetFaultRate(0.2)
		w.drv.SetRateLimit(1, 1) // throttle hard until throttling is seen
		stop := w.start("a", func(c *reconcile.Config) { c.BackoffMax = 30 * time.Second })
		defer stop()
		runWorkload(t, w, func() {
			w.until(10*time.Minute, func() (bool, string) {
				n := faults(w, fake.FaultThrottled)
				return n >= 10, fmt.Sprintf("%d throttled calls", n)
			})
			w.drv.SetRateLimit(250, 25)
		})
		if ahead := w.warns.matching("ahead"); len(ahead) > 0 {
			t.Fatalf("reports ahead of the generation: %v", ahead)
		}
		all, throttled := faults(w, ""), faults(w, fake.FaultThrottled)
		if all == throttled || throttled == 0 || faults(w, fake.FaultLostReply) == 0 {
			t.Fatalf("the run saw %d faults, %d throttled calls, %d lost replies; the test must exercise them", all, throttled, faults(w, fake.FaultLostReply))
		}
		t.Logf("%d provider calls, %d faulted, %d throttled, %v on the clock", len(w.drv.Calls()), all, throttled, w.clock.Since(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)))
	})
}

// faults counts the calls with a fault of a kind ("": any).
func faults(w *world, kind fake.Fault) int {
	n := 0
	for _, c := range w.drv.Calls() {
		if c.Fault != "" && (kind == "" || c.Fault == kind) {
			n++
		}
	}
	return n
}

// workloadWorld is a world runWorkload drives: the fake's, on its clock,
// or the AKS emulator's, on the wall clock.
type workloadWorld interface {
	createPool(name string, count int, zones ...string) *kpool.NodePool
	patch(id, spec string)
	delete(id string)
	converged(gone map[string]string) func() (bool, string)
	// reach waits until cond holds.
	reach(cond func() (bool, string))
	noneCreatedTwice()
}

// reach moves the clock until cond holds.
func (w *world) reach(cond func() (bool, string)) { w.until(2*time.Hour, cond) }

// runWorkload creates 100 pools and changes them; mid, when set, runs
// after the creates are issued.
func runWorkload(t *testing.T, w workloadWorld, mid func()) {
	var pools []*kpool.NodePool
	for i := range 100 {
		zones := []string{fmt.Sprint(i%3 + 1)}
		if i%10 == 0 {
			zones = []string{"1", "2", "3"}
		}
		pools = append(pools, w.createPool(fmt.Sprintf("pool-%03d", i), 1+i%3, zones...))
	}
	if mid != nil {
		mid()
	}
	w.reach(w.converged(nil))
	gone := map[string]string{}
	for i, p := range pools {
		switch {
		case i < 50:
			w.patch(p.ID, fmt.Sprintf(`{"nodeCount":%d}`, 2+i%4))
		case i < 75:
			w.patch(p.ID, fmt.Sprintf(`{"labels":{"team":"t%d"}}`, i))
		default:
			w.delete(p.ID)
			gone[p.ID] = p.ProviderName
		}
	}
	w.reach(w.converged(gone))
	w.noneCreatedTwice()
}

// TestRestartMidway: the controller is stopped in the middle of a pass,
// after 30 creates, and a new one finishes the work, with no pool created
// twice.
func TestRestartMidway(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		w.drv.SetFaultRate(0.2)
		// Ten calls a second: a pass over 100 pools takes ten seconds on
		// the clock, and the first controller stops inside it.
		slow := func(c *reconcile.Config) {
			c.Limits = map[kpool.PlatformType]reconcile.Limits{kpool.PlatformAzure: {Concurrency: 4, RequestsPerSecond: 10, Burst: 10}}
			c.BackoffMax = 30 * time.Second
		}
		stop := w.start("first", slow)
		runWorkload(t, w, func() {
			w.until(10*time.Minute, func() (bool, string) {
				n := w.calls(fake.Create, "")
				return n >= 30, fmt.Sprintf("%d creates so far", n)
			})
			if n := w.calls(fake.Create, ""); n >= 100 {
				t.Fatalf("%d creates before the restart; the first controller must stop midway", n)
			}
			stop()
			stop = w.start("second", slow)
		})
		stop()
	})
}

// TestDeadLeaderExpires: a lease left by a process that died keeps the
// controllers idle until it expires; then they take it and act.
func TestDeadLeaderExpires(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := testdb.SQLite(t)
		if held, err := st.AcquireLease(context.Background(), reconcile.LeaseName, "dead", time.Minute); err != nil || !held {
			t.Fatal(held, err)
		}
		w := newWorld(t, st, kpool.PlatformAzure)
		stop := w.start("alive")
		defer stop()
		p := w.createPool("workers", 1)
		w.advance(2 * time.Minute)
		if n := len(w.drv.Calls()); n != 0 || w.pool(p.ID).Status.Phase != kpool.PhasePending {
			t.Fatalf("%d provider calls while another process holds the lease", n)
		}
		// The store times leases on its own clock, the wall clock, which
		// in this bubble is synctest's: sleeping moves it at once, and the
		// dead holder's minute runs out.
		time.Sleep(time.Minute + time.Second)
		w.until(5*time.Minute, w.ready(p.ID))
	})
}

// counting counts the calls a controller makes through its own registry.
type counting struct {
	provider.Driver
	mu sync.Mutex
	n  int
}

func (c *counting) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func (c *counting) add() {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
}

func (c *counting) NodePoolList(ctx context.Context, cl *kpool.Cluster) ([]provider.Pool, error) {
	c.add()
	return c.Driver.NodePoolList(ctx, cl)
}

func (c *counting) NodePoolCreate(ctx context.Context, cl *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	c.add()
	return c.Driver.NodePoolCreate(ctx, cl, s)
}

func (c *counting) NodePoolUpdate(ctx context.Context, cl *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	c.add()
	return c.Driver.NodePoolUpdate(ctx, cl, s)
}

func (c *counting) NodePoolDelete(ctx context.Context, cl *kpool.Cluster, name string) error {
	c.add()
	return c.Driver.NodePoolDelete(ctx, cl, name)
}

// TestOneLeader: two controllers on one store; one acts and the other
// makes no call; when the first stops, the other takes over and finishes
// the work.
func TestOneLeader(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		stopA := w.start("a")
		p := w.createPool("first", 2, "1")
		w.until(5*time.Minute, w.converged(nil))
		b := &counting{Driver: w.drv}
		regB := catalog.Registry()
		regB.Add(b)
		stopB := w.start("b", func(c *reconcile.Config) { c.Drivers = regB })
		defer stopB()
		w.patch(p.ID, `{"nodeCount":3}`)
		w.until(5*time.Minute, w.converged(nil))
		if n := b.count(); n != 0 {
			t.Fatalf("the standby made %d provider calls while the leader held the lease", n)
		}
		stopA()
		q := w.createPool("second", 1)
		w.patch(p.ID, `{"nodeCount":4}`)
		w.until(5*time.Minute, w.converged(nil))
		if _, ok := w.drv.Pool(w.cluster, q.ProviderName); !ok || b.count() == 0 {
			t.Fatalf("b did not take over: %d calls", b.count())
		}
		w.noneCreatedTwice()
	})
}

// flakyReports is a store whose reads of a pool's controller reports fail
// when told to.
type flakyReports struct {
	kpool.Store
	mu    sync.Mutex
	fail  map[string]int // pool id → reads still to fail
	reads map[string]int // pool id → reads
}

func (s *flakyReports) ControllerStatuses(ctx context.Context, poolID string) ([]kpool.ControllerStatus, error) {
	s.mu.Lock()
	s.reads[poolID]++
	failing := s.fail[poolID] > 0
	if failing {
		s.fail[poolID]--
	}
	s.mu.Unlock()
	if failing {
		return nil, fmt.Errorf("store: reading the reports of %s: connection reset", poolID)
	}
	return s.Store.ControllerStatuses(ctx, poolID)
}

func (s *flakyReports) failNext(poolID string) (reads int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[poolID]++
	return s.reads[poolID]
}

func (s *flakyReports) readsOf(poolID string) (reads, failing int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads[poolID], s.fail[poolID]
}

// TestReportReadFails: when the last report cannot be read, the controller
// retries the cluster rather than acting as if there were none; a create
// the provider refused is not sent again.
func TestReportReadFails(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := &flakyReports{Store: testdb.SQLite(t), fail: map[string]int{}, reads: map[string]int{}}
		w := newWorld(t, st, kpool.PlatformAzure)
		w.drv.FailNext(fake.Create, 1, provider.ValidationError(kpool.PlatformAzure, "spec.platform.azure.vmSize", "not offered in westeurope"))
		stop := w.start("a")
		defer stop()
		p := w.createPool("web", 1)
		w.until(time.Minute, func() (bool, string) {
			return w.pool(p.ID).Status.Phase == kpool.PhaseFailed, string(w.pool(p.ID).Status.Phase)
		})
		before := st.failNext(p.ID)
		// The next resync's read fails; the cluster is retried, and the
		// retry reads the report and leaves the refused create alone.
		w.advance(6 * time.Minute)
		reads, failing := st.readsOf(p.ID)
		if failing != 0 || reads < before+2 {
			t.Fatalf("%d reads since the failure was set (%d still to fail); want the failed one and a retry", reads-before, failing)
		}
		if n := w.calls(fake.Create, ""); n != 1 {
			t.Fatalf("%d creates; a refused create was sent again after a failed read", n)
		}
		if got := w.pool(p.ID).Status.Phase; got != kpool.PhaseFailed {
			t.Fatalf("phase %s, want Failed", got)
		}
	})
}

// leaseTrouble is a store whose leases can be refused (as when another
// process has taken the lease) or fail (as when the database is
// unreachable) for a holder; it counts the calls.
type leaseTrouble struct {
	kpool.Store
	mu       sync.Mutex
	acquires map[string]int
	trouble  map[string]string // holder → "taken" or "unreachable"
}

func (s *leaseTrouble) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	s.mu.Lock()
	s.acquires[holder]++
	trouble := s.trouble[holder]
	s.mu.Unlock()
	switch trouble {
	case "taken":
		return false, nil
	case "unreachable":
		return false, fmt.Errorf("store: connection refused")
	}
	return s.Store.AcquireLease(ctx, name, holder, ttl)
}

func (s *leaseTrouble) set(holder, trouble string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.trouble[holder] = trouble
}

func (s *leaseTrouble) count(holder string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.acquires[holder]
}

// TestLease: the leader renews its lease every LeaseTTL/3 on its clock;
// when the lease is taken, or cannot be renewed before it would expire, it
// stops acting at once, and acts again once it holds the lease again.
func TestLease(t *testing.T) {
	t.Parallel()
	tests := []struct {
		trouble string
		warning string
		within  time.Duration // when the leader must have stopped
	}{
		{"taken", "lease taken by another process", 4 * time.Second},
		{"unreachable", "lease could not be renewed in time", 10 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.trouble, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				st := &leaseTrouble{Store: testdb.SQLite(t), acquires: map[string]int{}, trouble: map[string]string{}}
				w := newWorld(t, st, kpool.PlatformAzure)
				stop := w.start("a")
				defer stop()
				p := w.createPool("web", 1)
				w.until(5*time.Minute, w.ready(p.ID))
				before := st.count("a")
				w.advance(time.Minute)
				// One every LeaseTTL/3 (3.3s), which a clock moving in
				// whole seconds makes every 4s.
				if n := st.count("a") - before; n < 15 || n > 19 {
					t.Fatalf("%d renewals in a minute, want one every 3.3 to 4s", n)
				}
				if w.gauge("kpool_controller_leader") != 1 {
					t.Fatal("the leader does not say so")
				}

				st.set("a", tc.trouble)
				w.advance(tc.within)
				if w.gauge("kpool_controller_leader") != 0 || len(w.warns.matching(tc.warning)) == 0 {
					t.Fatalf("still leading %v after the lease was %s (warnings %v)", tc.within, tc.trouble, w.warns.matching(""))
				}
				calls := len(w.drv.Calls())
				w.patch(p.ID, `{"nodeCount":2}`)
				w.advance(time.Minute)
				if n := len(w.drv.Calls()) - calls; n != 0 {
					t.Fatalf("%d provider calls without the lease", n)
				}

				st.set("a", "")
				w.until(5*time.Minute, w.ready(p.ID))
				if fp, _ := w.drv.Pool(w.cluster, p.ProviderName); fp.Count != 2 {
					t.Fatalf("count %d at the provider once leading again, want 2", fp.Count)
				}
			})
		})
	}
}

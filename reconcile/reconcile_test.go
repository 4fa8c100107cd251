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
	dto "github.com/prometheus/client_model/go"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/store/storetest"
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

// family returns the metrics of a name, over their labels.
func (w *world) family(name string) []*dto.Metric {
	w.t.Helper()
	mfs, err := w.metrics.Gather()
	if err != nil {
		w.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()
		}
	}
	return nil
}

// histogram returns the sample count and sum of a histogram of the metrics.
func (w *world) histogram(name string) (uint64, float64) {
	w.t.Helper()
	if ms := w.family(name); len(ms) > 0 {
		return ms[0].GetHistogram().GetSampleCount(), ms[0].GetHistogram().GetSampleSum()
	}
	return 0, 0
}

// gauge returns the value of a gauge of the metrics.
func (w *world) gauge(name string) float64 {
	w.t.Helper()
	if ms := w.family(name); len(ms) > 0 {
		return ms[0].GetGauge().GetValue()
	}
	return 0
}

// counter returns the sum of a counter of the metrics over its labels.
func (w *world) counter(name string) float64 {
	w.t.Helper()
	sum := 0.0
	for _, m := range w.family(name) {
		sum += m.GetCounter().GetValue()
	}
	return sum
}

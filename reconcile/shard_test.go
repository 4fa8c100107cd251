package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/service"
	"github.com/kpool/kpool/store/storetest"
)

// The sharding tests run several controllers on one store as separate
// processes would (a Controller, a service and metrics each), on the wall
// clock with a short lease, and check the history of who handled what.

// mark is a Handling at a time.
type mark struct {
	reconcile.Handling
	at time.Time
}

// history records every process's marks.
type history struct {
	mu    sync.Mutex
	marks []mark
}

func (h *history) add(m reconcile.Handling) {
	at := time.Now()
	h.mu.Lock()
	h.marks = append(h.marks, mark{m, at})
	h.mu.Unlock()
}

// span is one holder's hold of a key (a cluster's pass, or a shard).
type span struct {
	holder     string
	from, till time.Time
}

// spans pairs the marks into spans by key: clusters' passes, or shards
// (key "shard/N"); one not ended yet ends now.
func (h *history) spans() map[string][]span {
	h.mu.Lock()
	defer h.mu.Unlock()
	open := map[string]time.Time{}
	out := map[string][]span{}
	for _, m := range h.marks {
		key := m.Cluster
		if key == "" {
			key = fmt.Sprintf("shard/%d", m.Shard)
		}
		if m.Begin {
			open[m.Holder+" "+key] = m.at
			continue
		}
		if from, ok := open[m.Holder+" "+key]; ok {
			out[key] = append(out[key], span{m.Holder, from, m.at})
			delete(open, m.Holder+" "+key)
		}
	}
	now := time.Now()
	for k, from := range open {
		holder, key, _ := strings.Cut(k, " ")
		out[key] = append(out[key], span{holder, from, now})
	}
	return out
}

// overlaps returns the first two spans of a key held by different holders
// at once, or "".
func overlaps(spans map[string][]span) string {
	for key, ss := range spans {
		for i, a := range ss {
			for _, b := range ss[i+1:] {
				if a.holder != b.holder && a.from.Before(b.till) && b.from.Before(a.till) {
					return fmt.Sprintf("%s: %s %v–%v and %s %v–%v", key, a.holder, a.from.Format("15:04:05.000"), a.till.Format("15:04:05.000"),
						b.holder, b.from.Format("15:04:05.000"), b.till.Format("15:04:05.000"))
				}
			}
		}
	}
	return ""
}

// fleet is a store with many clusters of pools on the fake driver, and
// the controller processes running on it.
type fleet struct {
	t        *testing.T
	st       kpool.Store
	drv      *fake.Driver
	clusters []*kpool.Cluster
	hist     *history
	procs    map[string]*proc
	ttl      time.Duration // the processes' lease period
}

// proc is one controller process.
type proc struct {
	metrics *prometheus.Registry
	stop    func()
}

func newFleet(t *testing.T, st kpool.Store, clusters, pools int) *fleet {
	f := &fleet{t: t, st: st, hist: &history{}, procs: map[string]*proc{}, ttl: leaseTTL,
		drv: fake.New(fake.Options{Platform: fleetPT, OperationTime: 20 * time.Millisecond, NodeTime: 5 * time.Millisecond})}
	svc, _ := f.service(st)
	ctx := storetest.Ctx(owner)
	for i := range clusters {
		spec := strings.Replace(platforms[fleetPT].cluster, "aks-prod", fmt.Sprintf("aks-%d", i), 1)
		c, err := svc.CreateCluster(ctx, service.ClusterCreate{Name: fmt.Sprintf("c%d", i), Spec: json.RawMessage(spec)})
		if err != nil {
			t.Fatal(err)
		}
		f.clusters = append(f.clusters, c)
		for j := range pools {
			f.createPool(svc, c, fmt.Sprintf("p%d", j))
		}
	}
	return f
}

func (f *fleet) service(st kpool.Store) (*service.Service, *provider.Registry) {
	reg := catalog.Registry()
	reg.Add(f.drv)
	return service.New(st, reg), reg
}

func (f *fleet) createPool(svc *service.Service, c *kpool.Cluster, name string) {
	spec := fmt.Sprintf(`{"platform":%s,"nodeCount":1}`, platforms[fleetPT].pool)
	if _, err := svc.CreateNodePool(storetest.Ctx(owner), service.NodePoolCreate{Name: name, ClusterID: c.ID, Spec: json.RawMessage(spec)}); err != nil {
		f.t.Fatal(err)
	}
}

// start runs a controller process named holder on st (the fleet's store,
// or one wrapping it) until stop or the test's end.
func (f *fleet) start(holder string, st kpool.Store) {
	svc, drivers := f.service(st)
	p := &proc{metrics: prometheus.NewRegistry()}
	ctl := reconcile.New(reconcile.Config{Service: svc, Drivers: drivers, Log: debugLog(), Holder: holder,
		Metrics: reconcile.NewMetrics(p.metrics), Workers: 4, ResyncFast: 25 * time.Millisecond, DriftInterval: 300 * time.Millisecond,
		BackoffBase: 5 * time.Millisecond, BackoffMax: 200 * time.Millisecond, LeaseTTL: f.ttl, PollEvents: 50 * time.Millisecond,
		Limits:     map[kpool.PlatformType]reconcile.Limits{fleetPT: {Concurrency: 8, RequestsPerSecond: 5000, Burst: 500}},
		OnHandling: f.hist.add})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := ctl.Run(ctx); err != nil {
			f.t.Error(err)
		}
	}()
	var once sync.Once
	p.stop = func() { once.Do(func() { cancel(); <-done }) }
	f.procs[holder] = p
	f.t.Cleanup(p.stop)
}

// leaseTTL is the tests' lease period: a third of it is the renewal.
const leaseTTL = time.Second

// shards returns how many shards each running process says it holds.
func (f *fleet) shards() map[string]int { return f.gauge("kpool_controller_shards") }

// gauge returns a gauge of each running process.
func (f *fleet) gauge(name string) map[string]int {
	out := map[string]int{}
	for h, p := range f.procs {
		mfs, err := p.metrics.Gather()
		if err != nil {
			f.t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == name {
				out[h] = int(mf.GetMetric()[0].GetGauge().GetValue())
			}
		}
	}
	return out
}

// balanced says whether the running processes hold every shard and every
// cluster, the most clusters a process holds within the largest shard of
// the fewest.
func (f *fleet) balanced() (bool, string) {
	shards, clusters := f.shards(), f.gauge("kpool_controller_clusters")
	weights := map[int]int{}
	for _, c := range f.clusters {
		weights[reconcile.ShardOf(c.ID, 32)]++
	}
	largest := max(1, slices.Max(slices.Collect(maps.Values(weights))))
	held, all := 0, 0
	for h := range f.procs {
		held, all = held+shards[h], all+clusters[h]
	}
	cs := slices.Collect(maps.Values(clusters))
	why := fmt.Sprint("shards by process ", shards, ", clusters ", clusters)
	return held == 32 && all == len(f.clusters) && len(cs) > 0 && slices.Max(cs)-slices.Min(cs) <= largest, why
}

// converged says whether every pool is Ready.
func (f *fleet) converged() (bool, string) {
	_, all, err := f.st.NodePools(context.Background(), kpool.NodePoolFilter{Page: kpool.Page{Limit: 1}})
	_, ready, err2 := f.st.NodePools(context.Background(), kpool.NodePoolFilter{Phase: kpool.PhaseReady, Page: kpool.Page{Limit: 1}})
	if err != nil || err2 != nil {
		return false, fmt.Sprint(err, err2)
	}
	return ready == all, fmt.Sprintf("%d of %d pools Ready", ready, all)
}

// waitFor polls cond until it holds, failing after timeout; it returns
// how long it took.
func (f *fleet) waitFor(timeout time.Duration, cond func() (bool, string)) time.Duration {
	f.t.Helper()
	start := time.Now()
	for {
		ok, why := cond()
		if ok {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			f.t.Fatalf("not so after %v: %s", timeout, why)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, not waiting for state
	}
}

// check fails on a cluster or shard held by two processes at once, a pass
// outside its holder's shard, a cluster never handled, or a pool created
// twice at the provider.
func (f *fleet) check() {
	f.t.Helper()
	spans := f.hist.spans()
	if o := overlaps(spans); o != "" {
		f.t.Fatalf("held by two processes at once: %s", o)
	}
	for _, c := range f.clusters {
		ss := spans[c.ID]
		if len(ss) == 0 {
			f.t.Fatalf("cluster %s never handled", c.Name)
		}
		shard := spans[fmt.Sprintf("shard/%d", reconcile.ShardOf(c.ID, 32))]
		for _, p := range ss {
			if !within(p, shard) {
				f.t.Fatalf("%s handled %s at %v without holding its shard", p.holder, c.Name, p.from)
			}
		}
	}
	creates := map[string]int{}
	for _, c := range f.drv.Calls() {
		if c.Created {
			if creates[c.Cluster+"/"+c.ProviderName]++; creates[c.Cluster+"/"+c.ProviderName] > 1 {
				f.t.Fatalf("pool %s of %s created twice", c.ProviderName, c.Cluster)
			}
		}
	}
}

// within says whether a pass lies in a span of its holder's.
func within(p span, holds []span) bool {
	for _, h := range holds {
		if h.holder == p.holder && !p.from.Before(h.from) && !p.till.After(h.till) {
			return true
		}
	}
	return false
}

// debugLog is the processes' log: stderr with SHARD_DEBUG set.
func debugLog() *slog.Logger {
	if os.Getenv("SHARD_DEBUG") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, nil))
}

// dying is a store whose process, once dead, gives no lease back, as a
// killed one does not.
type dying struct {
	kpool.Store
	dead atomic.Bool
}

func (d *dying) ReleaseLease(ctx context.Context, name, holder string) error {
	if d.dead.Load() {
		return nil
	}
	return d.Store.ReleaseLease(ctx, name, holder)
}

// fleetPT is the platform of the tests' clusters: the one whose cluster
// spec names its cloud cluster "aks-prod", which the fleet renames.
var fleetPT = func() kpool.PlatformType {
	for pt, p := range platforms {
		if strings.Contains(p.cluster, `"aks-prod"`) {
			return pt
		}
	}
	panic("no platform names its cluster aks-prod")
}()

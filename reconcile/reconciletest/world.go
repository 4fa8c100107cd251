// Package reconciletest runs kpool end to end on one cloud's demo
// emulator: a service on a SQLite store with the demo's first cluster
// registered, the cloud's driver on the emulator's loopback TLS listener,
// and the controllers on the wall clock with fast operations. Drivers'
// end-to-end tests use it, each with its own emulator.
package reconciletest

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/service"
	"github.com/kpool/kpool/store/storetest"
	"github.com/kpool/kpool/store/testdb"
)

// Demo is what a cloud's demo emulator offers: its handler, the identity
// its clusters take, the clusters (at an endpoint) and its call log.
type Demo interface {
	http.Handler
	Identity() (kpool.PlatformType, any)
	Clusters(endpoint string) []kpool.Cluster
	Calls() []sim.Call
}

// Owner is the user who registers the cluster and owns its pools.
const Owner = "alice@example.com"

// World is the service, the drivers and the registered demo cluster.
type World struct {
	T        *testing.T
	Svc      *service.Service
	Drivers  *provider.Registry
	Cluster  *kpool.Cluster
	Demo     Demo
	platform kpool.PlatformType
	srv      *sim.TLSEndpoint
}

// New registers demo's first cluster with a service whose driver for its
// platform is newDriver's, on the emulator's listener.
func New(t *testing.T, demo Demo, newDriver func(provider.DriverOptions) provider.Driver) *World {
	t.Helper()
	srv, _, err := sim.TLSServer(demo, "127.0.0.1:0") // a CA of its own, which emulated Kubernetes APIs hand out
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	pt, id := demo.Identity()
	creds, err := provider.DefaultCredentials(catalog.Profiles(), []string{srv.URL})
	if err == nil {
		creds, err = provider.WithEmulators(creds, catalog.Profiles(), map[kpool.PlatformType]any{pt: id}, []string{srv.URL}, "")
	}
	if err != nil {
		t.Fatal(err)
	}
	retry := provider.DefaultRetry()
	retry.Delay, retry.MaxDelay = 5*time.Millisecond, 20*time.Millisecond // no wall-clock waits on a 503's Retry-After
	w := &World{T: t, Demo: demo, Drivers: catalog.Registry(), platform: pt, srv: srv}
	w.Drivers.Add(newDriver(provider.DriverOptions{Credentials: creds, Transport: srv.Transport(), Retry: &retry}))
	w.Svc = service.New(testdb.SQLite(t), w.Drivers)
	w.Svc.Endpoints, _ = kpool.ParseOrigins([]string{srv.URL})
	w.Svc.Credentials = creds
	c := demo.Clusters(srv.URL)[0]
	spec, err := json.Marshal(c.Spec)
	if err != nil {
		t.Fatal(err)
	}
	if w.Cluster, err = w.Svc.CreateCluster(w.Ctx(), service.ClusterCreate{Name: "prod", Spec: spec}); err != nil {
		t.Fatal(err)
	}
	return w
}

// Ctx is the owner's context.
func (w *World) Ctx() context.Context { return storetest.Ctx(Owner) }

// Start runs the controllers, drift checked every drift, until the test
// ends; tweak, if any, changes their configuration first.
func (w *World) Start(drift time.Duration, tweak ...func(*reconcile.Config)) {
	ctx, cancel := context.WithCancel(context.Background())
	cfg := reconcile.Config{
		Service: w.Svc, Drivers: w.Drivers, Log: slog.New(slog.DiscardHandler), Holder: "a",
		Workers: 2, ResyncFast: 25 * time.Millisecond, DriftInterval: drift, ResyncSlow: time.Second,
		BackoffBase: 5 * time.Millisecond, BackoffMax: 200 * time.Millisecond,
		PollEvents: 50 * time.Millisecond,
		// LeaseTTL is the default (10s): one process holds every shard, and
		// a short lease lost to a busy machine (CI's parallel packages)
		// cancelled passes and dropped node watches mid-test.
		Limits: map[kpool.PlatformType]reconcile.Limits{w.platform: {Concurrency: 4, RequestsPerSecond: 2000, Burst: 200}},
	}
	for _, f := range tweak {
		f(&cfg)
	}
	ctl := reconcile.New(cfg)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ctl.Run(ctx)
	}()
	w.T.Cleanup(func() { cancel(); <-done })
}

// WaitFor re-checks cond after every committed write, and every 20 ms for
// the emulator's own changes, until it holds; it fails after timeout with
// what cond last said.
func (w *World) WaitFor(timeout time.Duration, cond func() (bool, string)) {
	w.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	wake := w.Svc.Store.Subscribe(ctx)
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
			w.T.Fatalf("not reached after %v: %s", timeout, why)
		}
	}
}

// StopEmulator closes the emulator's listener: the cloud no longer
// answers.
func (w *World) StopEmulator() { _ = w.srv.Close() }

// Calls counts the emulator's calls that match.
func (w *World) Calls(match func(sim.Call) bool) int {
	n := 0
	for _, c := range w.Demo.Calls() {
		if match(c) {
			n++
		}
	}
	return n
}

// Pool reads a pool from the store.
func (w *World) Pool(id string) *kpool.NodePool {
	w.T.Helper()
	p, err := w.Svc.Store.NodePool(context.Background(), id)
	if err != nil {
		w.T.Fatal(err)
	}
	return p
}

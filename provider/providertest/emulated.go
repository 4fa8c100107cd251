package providertest

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
)

// What every driver's tests start from: the cloud's emulator on a loopback
// TLS port, on a clock the test moves, a cluster there and the driver.

// Emulator is what driver tests need of a cloud's emulator: every one is
// built on the cloudsim engine.
type Emulator interface {
	http.Handler
	Calls() []sim.Call
	SetFaultRate(rate float64)
	SetRateLimit(perSecond float64, burst int)
}

// Emulated is a driver under test, D, against its cloud's emulator, E.
type Emulated[E Emulator, D provider.Driver] struct {
	Sim     E
	Clock   *sim.ManualClock
	Driver  D
	Cluster *kpool.Cluster
	// Client trusts the emulator's certificate; its Transport is the
	// driver's.
	Client *http.Client
	// URL is the emulator's, the cluster's spec.endpoint.
	URL    string
	Server *httptest.Server

	setup Setup[E, D]
}

// Setup is how one cloud's driver tests start an Emulated.
type Setup[E Emulator, D provider.Driver] struct {
	Profile provider.Profile
	// Emulator makes the emulator on the engine options it is given,
	// holding the cluster of the tests.
	Emulator func(sim.Options) E
	// Cluster is the tests' cluster at the emulator's endpoint.
	Cluster func(endpoint string) *kpool.Cluster
	// Identity is what the driver reaches the emulator with, of the type
	// its credentials of kind emulator carry (provider.IdentityOf).
	Identity any
	// New is the driver package's constructor.
	New func(provider.DriverOptions) D

	// What the conformance suite's Harness needs besides what every
	// emulator has: a valid spec of a pool named name in zones; how many
	// creates of a provider name reached the emulator; removing a label
	// from a pool behind the driver's back; and a change of a spec the
	// cloud makes only in a new pool, and the field it names.
	Spec           func(e *Emulated[E, D], name string, zones ...string) provider.PoolSpec
	Creates        func(e *Emulated[E, D], providerName string) int
	Unlabel        func(e *Emulated[E, D], providerName, label string) error
	ImmutableField func(s *provider.PoolSpec) string
}

// Start serves the emulator on a clock at 2026-11-22 whose operations
// take 30 s and 10 s a node, until the test ends, and makes the driver:
// with the setup's identity at the emulator (Allow), its certificate
// trusted, quick retries (FastRetry).
func (s Setup[E, D]) Start(t testing.TB) *Emulated[E, D] {
	t.Helper()
	clock := sim.NewManualClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	emu := s.Emulator(sim.Options{Clock: clock, OperationTime: 30 * time.Second, NodeTime: 10 * time.Second})
	srv := Serve(t, emu)
	d := s.New(provider.DriverOptions{Credentials: Allow(t, s.Profile, s.Identity, srv.URL), Transport: srv.Client().Transport, Retry: FastRetry()})
	return &Emulated[E, D]{Sim: emu, Clock: clock, Driver: d, Cluster: s.Cluster(srv.URL), Client: srv.Client(), URL: srv.URL, Server: srv, setup: s}
}

// Driver returns another driver of the setup's, sending over transport,
// with the setup's identity allowed to go to urls (Allow) and retry (nil:
// the driver's default).
func (s Setup[E, D]) Driver(t testing.TB, transport http.RoundTripper, retry *provider.Retry, urls ...string) D {
	t.Helper()
	return s.New(provider.DriverOptions{Credentials: Allow(t, s.Profile, s.Identity, urls...), Transport: transport, Retry: retry})
}

// Harness is the conformance suite's harness of the driver: what every
// emulator controls (its time, its rate limit, its faults) and what the
// setup says of its cloud.
func (e *Emulated[E, D]) Harness(t testing.TB) *Harness {
	return &Harness{Driver: e.Driver, Cluster: e.Cluster, Settle: func() { e.Clock.Advance(time.Hour) },
		Throttle: e.Sim.SetRateLimit, Faults: e.Sim.SetFaultRate,
		Spec:    func(name string, zones ...string) provider.PoolSpec { return e.setup.Spec(e, name, zones...) },
		Creates: func(pn string) int { return e.setup.Creates(e, pn) },
		Unlabel: func(pn, label string) {
			if err := e.setup.Unlabel(e, pn, label); err != nil {
				t.Fatal(err)
			}
		},
		ImmutableField: e.setup.ImmutableField}
}

// RunConformance runs the conformance suite (Run) on the setup's driver
// against its emulator.
func (s Setup[E, D]) RunConformance(t *testing.T) {
	Run(t, func(t *testing.T) *Harness { return s.Start(t).Harness(t) })
	t.Run("CallsCounted", s.runCalls)
	t.Run("AtRest", s.runAtRest)
}

// runCalls checks that the emulator says what it was sent: after a driver's
// create and list, GET <endpoint>/_cloudsim/calls counts every call by a
// named operation (none unrouted), as many as the call log holds.
func (s Setup[E, D]) runCalls(t *testing.T) {
	e := s.Start(t)
	ctx := context.Background()
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s.Spec(e, "counted")); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	if _, err := e.Driver.NodePoolList(ctx, e.Cluster); err != nil {
		t.Fatal(err)
	}
	res, err := e.Client.Get(e.URL + sim.AdminPrefix + "calls")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var got sim.CallCounts
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET calls: %d %v", res.StatusCode, err)
	}
	sum := 0
	for _, o := range got.Operations {
		sum += o.Calls
		if o.Operation == sim.Unrouted || o.Operation == "" {
			t.Errorf("%d calls no route named: %+v", o.Calls, e.Sim.Calls())
		}
	}
	if n := len(e.Sim.Calls()); got.Total == 0 || got.Total != sum || got.Total != n {
		t.Errorf("calls: total %d, operations sum to %d, the call log holds %d: %+v", got.Total, sum, n, got.Operations)
	}
}

// CreateFailing creates s at a fault rate of one half until the emulator
// accepts a create it will fail (sim.FaultFail), deleting in between each
// pool it made whole: a pool whose create failed, for the tests of its
// repair. The failed create's operation is left running.
func (e *Emulated[E, D]) CreateFailing(t *testing.T, s provider.PoolSpec) {
	t.Helper()
	ctx := context.Background()
	for range 100 {
		e.Sim.SetFaultRate(0.5)
		_, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s)
		e.Sim.SetFaultRate(0)
		calls := e.Sim.Calls()
		if err == nil && calls[len(calls)-1].Fault == sim.FaultFail {
			return
		}
		e.Clock.Advance(time.Hour)
		_ = e.Driver.NodePoolDelete(ctx, e.Cluster, s.ProviderName)
		e.Clock.Advance(time.Hour)
	}
	t.Fatal("no create failed in 100 tries")
}

// Creates counts the calls to the emulator that created a resource and
// match.
func (e *Emulated[E, D]) Creates(match func(sim.Call) bool) int {
	n := 0
	for _, c := range e.Sim.Calls() {
		if c.Created && match(c) {
			n++
		}
	}
	return n
}

// RunWire runs RunWire with the harness of a started Emulated whose
// driver and cluster go to the wire suite's endpoint instead.
func (s Setup[E, D]) RunWire(t *testing.T) {
	RunWire(t, func(t *testing.T, endpoint string, client *http.Client) *Harness {
		h := s.Start(t).Harness(t)
		h.Driver, h.Cluster = s.Driver(t, client.Transport, FastRetry(), endpoint), s.Cluster(endpoint)
		return h
	})
}

// RunTarpit runs RunTarpit on the setup's driver: short, it tries for 50
// ms and waits 1 ms between tries.
func (s Setup[E, D]) RunTarpit(t *testing.T, also ...func(error) bool) {
	RunTarpit(t, func(t *testing.T, endpoint string, client *http.Client, short bool) (provider.Driver, *kpool.Cluster) {
		var r *provider.Retry
		if short {
			o := provider.DefaultRetry()
			o.TryTimeout, o.Delay, o.MaxDelay = 50*time.Millisecond, time.Millisecond, time.Millisecond
			r = &o
		}
		return s.Driver(t, client.Transport, r, endpoint), s.Cluster(endpoint)
	}, also...)
}

// Serve serves h on a loopback TLS port until the test ends. An emulator
// that hands out kubeconfigs of its clusters' emulated Kubernetes APIs
// (cloudsim/kube: SetCA) is told the certificate to have them trust.
func Serve(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.StartTLS()
	if ca, ok := h.(interface{ SetCA(pem []byte) }); ok {
		ca.SetCA(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	}
	t.Cleanup(srv.Close)
	return srv
}

// Allow returns the credentials of a profile's clusters in driver tests:
// at urls, a credential of kind emulator carrying id (what kpool dev gives
// a cluster on an emulator); elsewhere, and everywhere when id is nil, the
// default credential, which goes to urls and the cloud's public endpoints
// (provider.DefaultCredentials).
func Allow(t testing.TB, p provider.Profile, id any, urls ...string) provider.Credentials {
	t.Helper()
	set, err := provider.DefaultCredentials([]provider.Profile{p}, urls)
	if err == nil && id != nil {
		set, err = provider.WithEmulators(set, []provider.Profile{p}, map[kpool.PlatformType]any{p.Type(): id}, urls, "")
	}
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// FastRetry keeps a driver's retries but not their waits: the emulator's
// faults are answered at once. Its MaxDelay is under the emulator's
// one-second Retry-After, which an SDK that honours it then hands back.
func FastRetry() *provider.Retry {
	r := provider.DefaultRetry()
	r.Delay, r.MaxDelay = time.Millisecond, 100*time.Millisecond
	return &r
}

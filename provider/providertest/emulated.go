package providertest

import (
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

// Emulated is a driver under test, D, against its cloud's emulator, E.
type Emulated[E http.Handler, D provider.Driver] struct {
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
}

// Setup is how one cloud's driver tests start an Emulated.
type Setup[E http.Handler, D provider.Driver] struct {
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
	return &Emulated[E, D]{Sim: emu, Clock: clock, Driver: d, Cluster: s.Cluster(srv.URL), Client: srv.Client(), URL: srv.URL, Server: srv}
}

// Driver returns another driver of the setup's, sending over transport,
// with the setup's identity allowed to go to urls (Allow) and retry (nil:
// the driver's default).
func (s Setup[E, D]) Driver(t testing.TB, transport http.RoundTripper, retry *provider.Retry, urls ...string) D {
	t.Helper()
	return s.New(provider.DriverOptions{Credentials: Allow(t, s.Profile, s.Identity, urls...), Transport: transport, Retry: retry})
}

// Serve serves h on a loopback TLS port until the test ends.
func Serve(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.StartTLS()
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

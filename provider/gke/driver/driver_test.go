package driver_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	container "google.golang.org/api/container/v1"

	"github.com/kpool/kpool"
	gkesim "github.com/kpool/kpool/cloudsim/gke"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/gke"
	"github.com/kpool/kpool/provider/gke/driver"
	"github.com/kpool/kpool/provider/providertest"
)

const (
	project     = "kpool-prod-1"
	location    = "us-central1"
	clusterName = "gke-prod"
	version     = "1.30.5-gke.1014001"
)

var ctx = context.Background()

// emulated is a GKE emulator on a loopback TLS port with a driver and a
// cluster pointing at it.
type emulated struct {
	sim     *gkesim.Server
	clock   *sim.ManualClock
	driver  *driver.Driver
	cluster *kpool.Cluster
	url     string
}

// allow is the default credential, allowed to go to urls besides
// Google's public endpoints.
func allow(t testing.TB, urls ...string) provider.Credentials {
	t.Helper()
	set, err := provider.DefaultCredentials([]provider.Profile{gke.Profile{}}, urls)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func static(tok string) oauth2.TokenSource {
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: tok, TokenType: "Bearer"})
}

// fastRetry keeps the SDK's retries but not their waits.
func fastRetry() *driver.Retry {
	r := driver.DefaultRetry()
	r.Delay = time.Millisecond
	return &r
}

func newEmulated(t *testing.T) *emulated {
	t.Helper()
	clock := sim.NewManualClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	emu := gkesim.New(gkesim.Options{Engine: sim.Options{Clock: clock, OperationTime: 30 * time.Second, NodeTime: 10 * time.Second}, Token: "kpool-cloudsim"})
	emu.AddCluster(project, location, clusterName, version)
	srv := httptest.NewUnstartedServer(emu)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	c := &kpool.Cluster{Name: "prod", Spec: kpool.ClusterSpec{
		Endpoint: srv.URL,
		Platform: kpool.ClusterPlatform{Type: kpool.PlatformGCP, GCP: &kpool.GCPCluster{ProjectID: project, Location: location, ClusterName: clusterName}},
	}}
	d := driver.New(driver.Options{TokenSource: static("kpool-cloudsim"), Credentials: allow(t, srv.URL), Transport: srv.Client().Transport, Retry: fastRetry()})
	return &emulated{sim: emu, clock: clock, driver: d, cluster: c, url: srv.URL}
}

func ptr[T any](v T) *T { return &v }

func (e *emulated) spec(name string, zones ...string) provider.PoolSpec {
	return providertest.Spec(e.cluster, name, kpool.NodePoolSpec{
		NodeCount: ptr(len(zones)*2 + 3*(1-min(len(zones), 1))*2/2*1), Zones: zones,
		Platform: kpool.NodePoolPlatform{GCP: &kpool.GCPNodePool{MachineType: "n2-standard-4", DiskSize: 100, DiskType: "pd-balanced"}},
	})
}

func (e *emulated) harness(t *testing.T) *providertest.Harness {
	return &providertest.Harness{
		Driver:  e.driver,
		Cluster: e.cluster,
		Spec: func(name string, zones ...string) provider.PoolSpec {
			s := e.spec(name, zones...)
			return s
		},
		Settle:   func() { e.clock.Advance(time.Hour) },
		Throttle: e.sim.SetRateLimit,
		Faults:   e.sim.SetFaultRate,
		Creates: func(pn string) int {
			n := 0
			for _, c := range e.sim.Calls() {
				if c.Created && strings.HasSuffix(c.Path, "/nodePools") && c.Status == http.StatusOK {
					n++
				}
			}
			return n
		},
		Unlabel: func(pn, label string) {
			if err := e.sim.Mutate(project, location, clusterName, pn, func(np *container.NodePool) {
				delete(np.Config.Labels, label)
			}); err != nil {
				t.Fatal(err)
			}
		},
		ImmutableField: func(s *provider.PoolSpec) string {
			s.Spot = !s.Spot
			return "spec.platform.gcp.preemptible"
		},
	}
}

func TestConformance(t *testing.T) {
	providertest.Run(t, func(t *testing.T) *providertest.Harness { return newEmulated(t).harness(t) })
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

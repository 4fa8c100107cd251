package driver_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	container "google.golang.org/api/container/v1"
	"k8s.io/utils/ptr"

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

// setup starts the GKE emulator, with the test's cluster and token, and
// the driver sending that token (providertest.Setup).
var setup = providertest.Setup[*gkesim.Server, *driver.Driver]{
	Profile: gke.Profile{},
	Emulator: func(o sim.Options) *gkesim.Server {
		emu := gkesim.New(gkesim.Options{Engine: o, Token: "kpool-cloudsim"})
		emu.AddCluster(project, location, clusterName, version)
		return emu
	},
	Cluster:  clusterAt,
	Identity: static("kpool-cloudsim"),
	New:      driver.New,
	Spec: func(e *fixture, name string, zones ...string) provider.PoolSpec {
		s := (&emulated{e}).spec(name, zones...)
		return s
	},
	Creates: func(e *fixture, pn string) int {
		return e.Creates(func(c sim.Call) bool { return strings.HasSuffix(c.Path, "/nodePools") && c.Status == http.StatusOK })
	},
	Unlabel: func(e *fixture, pn, label string) error {
		return e.Sim.Mutate(project, location, clusterName, pn, func(np *container.NodePool) {
			delete(np.Config.Labels, label)
		})
	},
	ImmutableField: func(s *provider.PoolSpec) string {
		s.Spot = !s.Spot
		return "spec.platform.gcp.preemptible"
	},
}

// fixture is the emulator, driver and cluster of a test.
type fixture = providertest.Emulated[*gkesim.Server, *driver.Driver]

// emulated is a fixture with the tests' own helpers.
type emulated struct{ *fixture }

func newEmulated(t *testing.T) *emulated { return &emulated{setup.Start(t)} }

func clusterAt(endpoint string) *kpool.Cluster {
	return providertest.ClusterAt(endpoint, kpool.ClusterPlatform{Type: kpool.PlatformGCP, GCP: &kpool.GCPCluster{ProjectID: project, Location: location, ClusterName: clusterName}})
}

func static(tok string) oauth2.TokenSource {
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: tok, TokenType: "Bearer"})
}

// allow is the credentials of a driver that sends the token tok to urls.
func allow(t *testing.T, tok string, urls ...string) provider.Credentials {
	return providertest.Allow(t, gke.Profile{}, static(tok), urls...)
}

func (e *emulated) spec(name string, zones ...string) provider.PoolSpec {
	return providertest.Spec(e.Cluster, name, kpool.NodePoolSpec{
		NodeCount: ptr.To(len(zones)*2 + 3*(1-min(len(zones), 1))*2/2*1), Zones: zones,
		Platform: kpool.NodePoolPlatform{GCP: &kpool.GCPNodePool{MachineType: "n2-standard-4", DiskSize: 100, DiskType: "pd-balanced"}},
	})
}

func TestConformance(t *testing.T) { setup.RunConformance(t) }

// TestWire: an allowed GKE endpoint that redirects gets its OAuth2 token
// sent nowhere else, and one that echoes it leaves none in the scrubbed
// error (providertest.RunWire).
func TestWire(t *testing.T) { setup.RunWire(t) }

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

// TestMapping checks the fields the GKE driver maps both ways, per-zone
// counts and total autoscaling bounds included.
func TestMapping(t *testing.T) {
	e := newEmulated(t)
	s := providertest.Spec(e.Cluster, "spot-gpu", kpool.NodePoolSpec{
		NodeCount:         ptr.To(4),
		Autoscaling:       &kpool.Autoscaling{Enabled: true, MinNodes: ptr.To(1), MaxNodes: ptr.To(9)},
		Zones:             []string{"1", "3"}, // G2 is not offered in us-central1-f ("4")
		KubernetesVersion: "1.30.5",
		Labels:            map[string]string{"team": "ml"},
		Taints:            []kpool.Taint{{Key: "dedicated", Value: "ml", Effect: kpool.EffectNoExecute}},
		Tags:              map[string]string{"cost-center": "42"},
		Platform: kpool.NodePoolPlatform{GCP: &kpool.GCPNodePool{MachineType: "g2-standard-8", DiskSize: 200, DiskType: "pd-ssd",
			Preemptible: true, Accelerators: []kpool.Accelerator{{Type: "nvidia-l4", Count: 1}}}},
	})
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	st, ok := e.Sim.Pool(project, location, clusterName, s.ProviderName)
	if !ok {
		t.Fatal("the emulator has no such pool")
	}
	cfg := st.Config
	if st.InitialNodeCount != 2 || strings.Join(st.Locations, ",") != "us-central1-a,us-central1-c" || cfg.MachineType != "g2-standard-8" ||
		cfg.DiskSizeGb != 200 || cfg.DiskType != "pd-ssd" || !cfg.Spot || cfg.Accelerators[0].AcceleratorType != "nvidia-l4" ||
		!st.Autoscaling.Enabled || st.Autoscaling.TotalMinNodeCount != 1 || st.Autoscaling.TotalMaxNodeCount != 9 ||
		cfg.ResourceLabels["cost-center"] != "42" || cfg.Labels[provider.LabelPool] != "spot-gpu" || st.Version != version ||
		st.Management.AutoUpgrade || st.Status != "PROVISIONING" {
		t.Fatalf("sent node pool: %+v config %+v", st.NodePool, cfg)
	}
	var effects []string
	for _, tt := range cfg.Taints {
		effects = append(effects, tt.Key+"="+tt.Effect)
	}
	// GKE taints GPU nodes itself: the driver does not send that taint,
	// and reports it (below).
	if strings.Join(effects, ",") != "dedicated=NO_EXECUTE" {
		t.Fatalf("taints sent: %v", effects)
	}
	pools, err := e.Driver.NodePoolList(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := provider.Find(pools, s.ProviderName)
	if p.State != provider.StateCreating || p.Count != 4 {
		t.Fatalf("while provisioning: %+v", p)
	}
	e.Clock.Advance(time.Hour)
	pools, err = e.Driver.NodePoolList(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	p, _ = provider.Find(pools, s.ProviderName)
	if p.State != provider.StateReady || p.Count != 4 || p.ReadyNodes != 4 || p.NodesByZone["1"] != 2 || p.NodesByZone["3"] != 2 ||
		!p.Spot || p.MinCount != 1 || p.MaxCount != 9 || p.Version != "1.30.5" || strings.Join(p.Zones, ",") != "1,3" ||
		len(p.Accelerators) != 1 || p.Tags["cost-center"] != "42" || p.Labels["team"] != "ml" || len(p.Problems) != 0 || len(p.Taints) != 2 {
		t.Fatalf("observed: %+v", p)
	}

	// A machine type change rolls the nodes through nodePools.update.
	s.MachineType = "g2-standard-16"
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	if st, _ := e.Sim.Pool(project, location, clusterName, s.ProviderName); st.Operation != "UPGRADE_NODES" {
		t.Fatalf("machine type change started %q", st.Operation)
	}
	pools, _ = e.Driver.NodePoolList(ctx, e.Cluster)
	if p, _ := provider.Find(pools, s.ProviderName); p.State != provider.StateUpdating {
		t.Fatalf("while rolling: %+v", p)
	}
	// A second operation while one runs is transient (FAILED_PRECONDITION
	// at GKE; the driver does not even send it).
	s.Labels["team"] = "other"
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); !provider.IsTransient(err) {
		t.Fatalf("update while rolling: %v, want transient", err)
	}
	e.Clock.Advance(time.Hour)
	if st, _ := e.Sim.Pool(project, location, clusterName, s.ProviderName); st.Config.MachineType != "g2-standard-16" {
		t.Fatalf("machine type after the roll: %s", st.Config.MachineType)
	}
}

// TestPerZoneRefused: a count that does not divide over the zones is
// refused before anything is sent.
func TestPerZoneRefused(t *testing.T) {
	e := newEmulated(t)
	s := e.spec("uneven", "1", "2", "3")
	s.Count = 4
	_, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s)
	var pe *provider.Error
	if !provider.IsValidation(err) || !errorsAs(err, &pe) || pe.Field != "spec.nodeCount" {
		t.Fatalf("4 nodes over 3 zones: %v", err)
	}
	for _, c := range e.Sim.Calls() {
		if c.Method != http.MethodGet {
			t.Fatalf("sent %s %s", c.Method, c.Path)
		}
	}
}

func errorsAs(err error, pe **provider.Error) bool {
	e, ok := err.(*provider.Error)
	*pe = e
	return ok
}

// TestRefusedByTheService: the emulator refuses what GKE refuses even if
// a driver sent it, with errors the driver maps by kind and field.
func TestRefusedByTheService(t *testing.T) {
	e := newEmulated(t)
	for name, tc := range map[string]struct {
		mut   func(*provider.PoolSpec)
		field string
	}{
		"disk type":   {func(s *provider.PoolSpec) { s.DiskType = "pd-fast" }, "spec.platform.gcp.diskType"},
		"disk size":   {func(s *provider.PoolSpec) { s.DiskSizeGB = 5 }, "spec.platform.gcp.diskSize"},
		"accelerator": {func(s *provider.PoolSpec) { s.Accelerators = []kpool.Accelerator{{Type: "nvidia-tesla-z9", Count: 1}} }, "spec.platform.gcp.accelerators"},
		"version":     {func(s *provider.PoolSpec) { s.Version = "1.31.0" }, "spec.kubernetesVersion"},
		"bad version": {func(s *provider.PoolSpec) { s.Version = "1.30.x" }, "spec.kubernetesVersion"},
		"autoscaling": {func(s *provider.PoolSpec) { s.Autoscaling, s.MinCount, s.MaxCount = true, 5, 2 }, "spec.autoscaling"},
	} {
		t.Run(name, func(t *testing.T) {
			s := e.spec("bad", "1")
			tc.mut(&s)
			_, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s)
			var pe *provider.Error
			if !provider.IsValidation(err) || !errorsAs(err, &pe) || pe.Field != tc.field {
				t.Fatalf("%v, want a validation error on %s", err, tc.field)
			}
		})
	}
	missing := *e.Cluster
	missing.Spec.Platform.GCP = &kpool.GCPCluster{ProjectID: project, Location: location, ClusterName: "nope"}
	if _, err := e.Driver.NodePoolList(ctx, &missing); !provider.IsNotFound(err) {
		t.Fatalf("list in a missing cluster: %v", err)
	}
	if err := e.Driver.NodePoolDelete(ctx, &missing, "x"); !provider.IsNotFound(err) {
		t.Fatalf("delete in a missing cluster: %v (a missing cluster is not a deleted pool)", err)
	}
}

// TestFailedOperation: an operation that ends in error leaves the pool
// Failed with GKE's message, and its repair deletes it.
func TestFailedOperation(t *testing.T) {
	e := newEmulated(t)
	// Faults on creates only: one in four of them is accepted and fails.
	rt := roundTrip(func(r *http.Request) (*http.Response, error) {
		rate := 0.0
		if r.Method == http.MethodPost {
			rate = 1
		}
		e.Sim.SetFaultRate(rate)
		return e.driverTransport().RoundTrip(r)
	})
	retry := provider.Retry{Attempts: 1, TryTimeout: time.Minute}
	d := driver.New(provider.DriverOptions{Credentials: allow(t, "kpool-cloudsim", e.URL), Transport: rt, Retry: &retry})
	name := ""
	for i := 0; i < 40 && name == ""; i++ {
		s := e.spec(fmt.Sprintf("doomed-%d", i), "1")
		if _, err := d.NodePoolCreate(ctx, e.Cluster, s); err != nil {
			if !provider.Retryable(err) {
				t.Fatalf("an injected fault: %v", err)
			}
			continue
		}
		for _, c := range e.Sim.Calls() {
			if c.Fault == sim.FaultFail {
				name = s.ProviderName
			}
		}
	}
	if name == "" {
		t.Fatal("no create failed")
	}
	e.Sim.SetFaultRate(0)
	e.Clock.Advance(time.Hour)
	pools, err := e.Driver.NodePoolList(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := provider.Find(pools, name)
	if !ok || p.State != provider.StateFailed || !strings.Contains(p.Message, "does not have enough resources") {
		t.Fatalf("failed create: %+v", p)
	}
	// A pool in ERROR takes no update: its repair is its delete, and once
	// it is gone it can be created again.
	spec := p.PoolSpec
	fixed, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, spec)
	if err != nil || fixed.State != provider.StateDeleting {
		t.Fatalf("repairing the failed pool: %+v, %v", fixed, err)
	}
	e.Clock.Advance(time.Hour)
	if pools, err = e.Driver.NodePoolList(ctx, e.Cluster); err != nil {
		t.Fatal(err)
	}
	if p, ok := provider.Find(pools, name); ok {
		t.Fatalf("after the repair's delete: %+v", p)
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestTarpit: a server that accepts and never answers costs a bounded
// time, and the error is transient.
func TestTarpit(t *testing.T) { setup.RunTarpit(t) }

// TestListSurvivesFailedInstanceGroups: a pool whose instance groups do
// not answer (after the retries) is reported Unknown, which the
// controllers wait on, instead of failing the whole list.
func TestListSurvivesFailedInstanceGroups(t *testing.T) {
	e := newEmulated(t)
	for _, n := range []string{"a", "b"} {
		if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, e.spec(n, "1")); err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(time.Hour) // GKE creates one pool of a cluster at a time
	}
	e.Clock.Advance(time.Hour)
	rt := roundTrip(func(r *http.Request) (*http.Response, error) {
		rate := 0.0
		if strings.Contains(r.URL.Path, "/instanceGroupManagers") {
			rate = 1
		}
		e.Sim.SetFaultRate(rate)
		return e.driverTransport().RoundTrip(r)
	})
	d := setup.Driver(t, rt, providertest.FastRetry(), e.URL)
	pools, err := d.NodePoolList(ctx, e.Cluster)
	if err != nil {
		t.Fatalf("a list whose instance groups fail: %v", err)
	}
	n := 0
	for _, p := range pools {
		if p.ProviderName == "a" || p.ProviderName == "b" {
			n++
			if p.State != provider.StateUnknown || !p.ReadyUnknown || !strings.HasPrefix(p.Message, "reading its instance groups failed") {
				t.Errorf("%s: %s %q", p.ProviderName, p.State, p.Message)
			}
		}
	}
	if n != 2 {
		t.Fatalf("pools %+v", pools)
	}
}

// TestListSurvivesGoneInstanceGroups: a pool whose instance group Compute
// no longer has (deleted ahead of its pool, as a pool's delete does: its
// zone answers the aggregated list without it) is listed with no nodes in
// that group, read with no call of its own; it does not fail the
// cluster's whole list, which the controllers would take for the cluster
// missing.
func TestListSurvivesGoneInstanceGroups(t *testing.T) {
	e := newEmulated(t)
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, e.spec("a", "1")); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	gets := 0
	rt := roundTrip(func(r *http.Request) (*http.Response, error) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/aggregated/instanceGroupManagers"):
			return aggregated(r, map[string]string{"us-central1-a": "NO_RESULTS_ON_PAGE", "us-central1-b": "NO_RESULTS_ON_PAGE"}), nil
		case strings.Contains(r.URL.Path, "/instanceGroupManagers/"):
			gets++
		}
		return e.driverTransport().RoundTrip(r)
	})
	d := setup.Driver(t, rt, providertest.FastRetry(), e.URL)
	pools, err := d.NodePoolList(ctx, e.Cluster)
	if err != nil {
		t.Fatalf("a list whose instance group is gone: %v", err)
	}
	p, ok := provider.Find(pools, "a")
	if !ok || p.Count != 0 || p.ReadyNodes != 0 || gets != 0 {
		t.Fatalf("a: %+v after %d gets; want no nodes for a group that is gone, and no get", p, gets)
	}
}

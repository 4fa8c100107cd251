package driver_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	civosim "github.com/kpool/kpool/cloudsim/civo"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/civo"
	"github.com/kpool/kpool/provider/civo/driver"
	"github.com/kpool/kpool/provider/providertest"
)

const (
	region    = "LON1"
	clusterID = "0f4c7a52-3b1e-4d6a-8c9f-1a2b3c4d5e6f"
	apiKey    = "test-civo-api-key-0001"
)

// setup starts the Civo emulator, with the test's cluster and key, and
// the driver sending that key (providertest.Setup).
var setup = providertest.Setup[*civosim.Server, *driver.Driver]{
	Profile: civo.Profile{},
	Emulator: func(o sim.Options) *civosim.Server {
		emu := civosim.New(civosim.Options{Engine: o, Keys: []string{apiKey}})
		emu.AddCluster(civosim.Cluster{ID: clusterID, Name: "prod", Region: region, Version: "1.30.5-k3s1"})
		return emu
	},
	Cluster:  clusterAt,
	Identity: apiKey,
	New:      driver.New,
	Spec: func(e *fixture, name string, zones ...string) provider.PoolSpec {
		return providertest.Spec(e.Cluster, name, kpool.NodePoolSpec{
			NodeCount: ptr.To(2), Zones: zones,
			Platform: kpool.NodePoolPlatform{Civo: &kpool.CivoNodePool{Size: "g4s.kube.medium"}},
		})
	},
	Creates: func(e *fixture, pn string) int {
		return e.Creates(func(c sim.Call) bool {
			return c.Method == http.MethodPost && strings.HasSuffix(c.Resource, "/pools/"+pn)
		})
	},
	Unlabel: func(e *fixture, pn, label string) error {
		return e.Sim.Mutate(region, clusterID, pn, func(p *civosim.Pool) { delete(p.Labels, label) })
	},
	ImmutableField: func(s *provider.PoolSpec) string {
		s.MachineType = "g4s.kube.xlarge"
		return "spec.platform.civo.size"
	},
}

// fixture is the emulator, driver and cluster of a test.
type fixture = providertest.Emulated[*civosim.Server, *driver.Driver]

// emulated is a fixture with the tests' own helpers.
type emulated struct{ *fixture }

func newEmulated(t *testing.T) *emulated { return &emulated{setup.Start(t)} }

func clusterAt(endpoint string) *kpool.Cluster {
	return providertest.ClusterAt(endpoint, kpool.ClusterPlatform{Type: kpool.PlatformCivo, Civo: &kpool.CivoCluster{Region: region, ClusterID: clusterID}})
}

func (e *emulated) spec(name string, count int, size string) provider.PoolSpec {
	return providertest.Spec(e.Cluster, name, kpool.NodePoolSpec{
		NodeCount: ptr.To(count),
		Platform:  kpool.NodePoolPlatform{Civo: &kpool.CivoNodePool{Size: size}},
	})
}

func TestConformance(t *testing.T) { setup.RunConformance(t) }

// TestWire: an allowed endpoint that redirects gets its API key sent
// nowhere else, and one that echoes the API key leaves none of it in
// the scrubbed error (providertest.RunWire).
func TestWire(t *testing.T) { setup.RunWire(t) }

var ctx = context.Background()

func list(t *testing.T, e *emulated, pn string) *provider.Pool {
	t.Helper()
	pools, err := e.Driver.NodePoolList(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := provider.Find(pools, pn)
	return p
}

// TestMapping checks the fields the Civo driver maps both ways.
func TestMapping(t *testing.T) {
	e := newEmulated(t)
	s := providertest.Spec(e.Cluster, "edge", kpool.NodePoolSpec{
		NodeCount: ptr.To(3),
		Labels:    map[string]string{"team": "ml"},
		Taints:    []kpool.Taint{{Key: "dedicated", Value: "ml", Effect: kpool.EffectPreferNoSchedule}, {Key: "gpu", Effect: kpool.EffectNoExecute}},
		Platform:  kpool.NodePoolPlatform{Civo: &kpool.CivoNodePool{Size: "g4c.kube.small", PublicIPNodePool: true}},
	})
	created, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s)
	if err != nil {
		t.Fatal(err)
	}
	if created.State != provider.StateCreating || created.ProviderName != "edge" {
		t.Fatalf("created: %+v", created)
	}
	st, ok := e.Sim.PoolOf(region, clusterID, s.ProviderName)
	if !ok {
		t.Fatal("the emulator has no such pool")
	}
	if st.Count != 3 || st.Size != "g4c.kube.small" || !st.PublicIPNodePool || st.Labels[provider.LabelPool] != "edge" || st.Labels["team"] != "ml" ||
		st.Labels[civosim.PoolLabel] != "edge" || len(st.Taints) != 2 || st.Taints[0].Effect != "PreferNoSchedule" || st.Operation != "Creating" {
		t.Fatalf("sent: %+v", st.Pool)
	}
	if _, has := st.Labels[provider.LabelZone]; has {
		t.Fatal("a Civo pool got a node-zone label")
	}
	p := list(t, e, s.ProviderName)
	if p.State != provider.StateCreating || p.ReadyNodes != 0 || p.Nodes != 3 {
		t.Fatalf("creating: %+v", p)
	}
	// 30 s of the operation's own, then a node every 10 s: the first
	// node is up at 40 s, the last at 60 s.
	e.Clock.Advance(45 * time.Second)
	if p = list(t, e, s.ProviderName); p.State != provider.StateCreating || p.ReadyNodes != 1 {
		t.Fatalf("one node up: %s %d/%d", p.State, p.ReadyNodes, p.Nodes)
	}
	e.Clock.Advance(time.Hour)
	p = list(t, e, s.ProviderName)
	if p.State != provider.StateReady || p.Count != 3 || p.ReadyNodes != 3 || p.MachineType != "g4c.kube.small" || p.Settings[civo.SettingPublicIP] != "true" ||
		p.Labels["team"] != "ml" || len(p.Taints) != 2 || p.Name != "edge" || len(p.Problems) > 0 || len(p.Zones) != 0 ||
		len(strings.Split(p.Extra["instances"], ",")) != 3 {
		t.Fatalf("observed: %+v", p)
	}
	// Civo's own label is ignored: the same spec is the same pool.
	if again, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil || again.State != provider.StateReady {
		t.Fatalf("create of the same spec: %+v, %v", again, err)
	}
	if d := provider.Compare(civo.Profile{}, s, p); len(d) != 0 {
		t.Fatalf("drift of a pool as asked: %v", d)
	}

	// Scale down, relabel, drop a taint: one PUT.
	s.Count = 1
	s.Labels = map[string]string{provider.LabelPool: "edge", "team": "infra"}
	s.Taints = s.Taints[:1]
	got, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != provider.StateUpdating || got.Count != 1 {
		t.Fatalf("accepted update: %+v", got)
	}
	st, _ = e.Sim.PoolOf(region, clusterID, s.ProviderName)
	if st.Count != 1 || st.Labels["team"] != "infra" || len(st.Taints) != 1 || st.Operation != "Scaling" {
		t.Fatalf("after the update: %+v", st.Pool)
	}
	e.Clock.Advance(time.Hour)
	if p = list(t, e, s.ProviderName); p.State != provider.StateReady || p.Nodes != 1 || len(p.Taints) != 1 {
		t.Fatalf("after the scale down: %+v", p)
	}
	// Nothing to change: no call.
	before := len(e.Sim.Calls())
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	for _, c := range e.Sim.Calls()[before:] {
		if c.Method != http.MethodGet {
			t.Fatalf("an update with nothing to change sent %s %s", c.Method, c.Path)
		}
	}
}

// TestImmutable: size and public IPs are fixed at creation; mutable
// differences make a create ErrAlreadyExists.
func TestImmutable(t *testing.T) {
	e := newEmulated(t)
	s := e.spec("web", 2, "g4s.kube.small")
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	pub := s
	pub.Settings = map[string]string{civo.SettingPublicIP: "true"}
	for _, op := range []string{"create", "update"} {
		var err error
		if op == "create" {
			_, err = e.Driver.NodePoolCreate(ctx, e.Cluster, pub)
		} else {
			_, err = e.Driver.NodePoolUpdate(ctx, e.Cluster, pub)
		}
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != provider.KindValidation || pe.Field != "spec.platform.civo.publicIpNodePool" {
			t.Fatalf("%s with public IPs: %v", op, err)
		}
	}
	more := s
	more.Count = 5
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, more); !provider.IsAlreadyExists(err) {
		t.Fatalf("create with another count: %v", err)
	}
	spot := s
	spot.Spot = true
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, spot); !provider.IsNotImplemented(err) || !strings.Contains(err.Error(), "spec.spot") {
		t.Fatalf("spot: %v", err)
	}
	zero := s
	zero.Count = 0
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, zero); !provider.IsValidation(err) || err.(*provider.Error).Field != "spec.nodeCount" {
		t.Fatalf("count 0: %v", err)
	}
}

// TestRefusedByTheService: the emulator refuses what Civo refuses even if
// a driver sent it, and the driver types the refusals.
func TestRefusedByTheService(t *testing.T) {
	e := newEmulated(t)
	bad := e.spec("bad", 1, "m5.large")
	_, err := e.Driver.NodePoolCreate(ctx, e.Cluster, bad)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindValidation || pe.Field != "spec.platform.civo.size" {
		t.Fatalf("a bad size: %v", err)
	}
	bad = e.spec("bad", 1, "g4s.kube.small")
	bad.Taints = []kpool.Taint{{Key: "x", Effect: "Sometimes"}}
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, bad); !provider.IsValidation(err) || err.(*provider.Error).Field != "spec.taints" {
		t.Fatalf("a bad taint effect: %v", err)
	}
	bad = e.spec("bad", 1, "g4s.kube.small")
	bad.Labels["kubernetes.civo.com/x"] = "y"
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, bad); !provider.IsValidation(err) || err.(*provider.Error).Field != "spec.labels" {
		t.Fatalf("a Civo label: %v", err)
	}
	missing := clusterAt(e.Cluster.Spec.Endpoint)
	missing.Spec.Platform.Civo.ClusterID = "11111111-2222-4333-8444-555555555555"
	if _, err := e.Driver.NodePoolList(ctx, missing); !provider.IsNotFound(err) {
		t.Fatalf("list in a missing cluster: %v", err)
	}
	if err := e.Driver.NodePoolDelete(ctx, missing, "x"); !provider.IsNotFound(err) {
		t.Fatalf("delete in a missing cluster: %v, want not found (not the pool's absence)", err)
	}
	other := clusterAt(e.Cluster.Spec.Endpoint)
	other.Spec.Platform.Civo.Region = "NYC1"
	if _, err := e.Driver.NodePoolList(ctx, other); !provider.IsNotFound(err) {
		t.Fatalf("list in another region: %v", err)
	}
}

// TestFailedNodesRepair: a pool whose nodes failed to build is Failed with
// a message; the next update asks for its count again, which rebuilds
// them.
func TestFailedNodesRepair(t *testing.T) {
	e := newEmulated(t)
	s := e.spec("web", 4, "g4s.kube.small")
	e.CreateFailing(t, s)
	e.Clock.Advance(90 * time.Second) // the create (70 s) ends; healing takes as long again
	p := list(t, e, s.ProviderName)
	if p == nil || p.State != provider.StateFailed || p.ReadyNodes != 2 || !strings.Contains(p.Message, "2 of 4 nodes failed") {
		t.Fatalf("failed pool: %+v", p)
	}
	fixed, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s)
	if err != nil || fixed.State == provider.StateFailed {
		t.Fatalf("repairing the failed pool: %+v, %v", fixed, err)
	}
	e.Clock.Advance(time.Hour)
	if p = list(t, e, s.ProviderName); p.State != provider.StateReady || p.ReadyNodes != 4 {
		t.Fatalf("after the repair: %+v", p)
	}
}

// TestTarpit: a Civo endpoint that never answers costs a bounded time
// (providertest.RunTarpit).
func TestTarpit(t *testing.T) { setup.RunTarpit(t) }

// TestDemo: the demo emulator over its own TLS, as kpool dev serves it,
// answers the driver with the demo key: its one pool is Ready.
func TestDemo(t *testing.T) {
	emu, err := civosim.Demo(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ep, _, err := sim.TLSServer(emu, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ep.Close() })
	cs := emu.Clusters(ep.URL)
	d := driver.New(provider.DriverOptions{Credentials: providertest.Allow(t, civo.Profile{}, civosim.DemoAPIKey, ep.URL), Transport: ep.Transport()})
	pools, err := d.NodePoolList(ctx, &cs[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(pools) != 1 || pools[0].ProviderName != civosim.DemoPool || pools[0].State != provider.StateReady || pools[0].Count != 1 || pools[0].Name != "" {
		t.Fatalf("demo pools: %+v", pools)
	}
}

// TestConvergesUnderFaults: with 40% of the calls failing (5xx,
// dropped connections, operations that end with nodes in ERROR), passes
// of create-or-repair-or-update bring every pool to its spec, and the
// deleted one away, once the faults stop.
func TestConvergesUnderFaults(t *testing.T) {
	e := newEmulated(t)
	want := map[string]provider.PoolSpec{}
	for i, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		want[n] = e.spec(n, 1+i%4, "g4s.kube.small")
	}
	gone := e.spec("gone", 2, "g4s.kube.small")
	pass := func() {
		pools, err := e.Driver.NodePoolList(ctx, e.Cluster)
		if err != nil {
			return // the next pass lists again
		}
		for n, s := range want {
			p, ok := provider.Find(pools, n)
			switch {
			case !ok:
				_, _ = e.Driver.NodePoolCreate(ctx, e.Cluster, s)
			case p.State == provider.StateFailed || p.State == provider.StateReady && len(provider.Compare(civo.Profile{}, s, p)) > 0:
				_, _ = e.Driver.NodePoolUpdate(ctx, e.Cluster, s)
			}
		}
		if _, ok := provider.Find(pools, gone.ProviderName); ok {
			_ = e.Driver.NodePoolDelete(ctx, e.Cluster, gone.ProviderName)
		}
	}
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, gone); err != nil {
		t.Fatal(err)
	}
	e.Sim.SetFaultRate(0.4)
	for i := 0; i < 120; i++ {
		pass()
		if i%10 == 5 {
			for n, s := range want { // scale up and down, relabel
				s.Count += 1 - 2*(i/10%2)
				s.Labels["round"] = strconv.Itoa(i)
				want[n] = s
			}
		}
		e.Clock.Advance(20 * time.Second)
	}
	e.Sim.SetFaultRate(0)
	for i := 0; i < 10; i++ {
		pass()
		e.Clock.Advance(5 * time.Minute)
	}
	pools, err := e.Driver.NodePoolList(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	if len(pools) != len(want) {
		t.Fatalf("%d pools, want %d: %+v", len(pools), len(want), pools)
	}
	for n, s := range want {
		p, _ := provider.Find(pools, n)
		if p == nil || p.State != provider.StateReady || p.ReadyNodes != s.Count || len(provider.Compare(civo.Profile{}, s, p)) > 0 {
			t.Fatalf("%s did not converge: %+v", n, p)
		}
	}
	fails := 0
	for _, c := range e.Sim.Calls() {
		if c.Fault == sim.FaultFail {
			fails++
		}
	}
	if fails < 3 {
		t.Fatalf("%d operations failed: the test proved little", fails)
	}
	t.Logf("%d operations failed on the way", fails)
}

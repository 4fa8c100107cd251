package driver_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	aksim "github.com/kpool/kpool/cloudsim/aks"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/aks"
	"github.com/kpool/kpool/provider/aks/driver"
	"github.com/kpool/kpool/provider/providertest"
)

const (
	subscription = "0b1f6471-1bf0-4dda-aec3-111122223333"
	group        = "rg-prod"
	clusterName  = "aks-prod"
)

// setup starts the AKS emulator, with the test's cluster, and the driver
// with a token it takes (providertest.Setup). The emulator's 503s carry
// Retry-After: 1 (seconds, on the wall clock); providertest.FastRetry's
// MaxDelay is below it, which hands them back to the caller at once, as
// kpool's controllers get them from single calls, so that the conformance
// suite's all-faults test does not sleep on lists. TestLongListUnderFaults
// runs the default retries.
var setup = providertest.Setup[*aksim.Server, *driver.Driver]{
	Profile: aks.Profile{},
	Emulator: func(o sim.Options) *aksim.Server {
		emu := aksim.New(aksim.Options{Engine: o, Token: "kpool-cloudsim", PageSize: 2})
		emu.AddCluster(subscription, group, clusterName, "westeurope", "1.30.4")
		return emu
	},
	Cluster:  clusterAt,
	Identity: azcore.TokenCredential(aksim.Credential{}),
	New:      driver.New,
	Spec: func(e *fixture, name string, zones ...string) provider.PoolSpec {
		return providertest.Spec(e.Cluster, name, kpool.NodePoolSpec{
			NodeCount: ptr.To(2), Zones: zones,
			Platform: kpool.NodePoolPlatform{Azure: &kpool.AzureNodePool{VMSize: "Standard_D4s_v5", OSDiskSizeGB: 128}},
		})
	},
	Creates: func(e *fixture, pn string) int {
		return e.Creates(func(c sim.Call) bool { return strings.HasSuffix(strings.ToLower(c.Path), "/agentpools/"+pn) })
	},
	Unlabel: func(e *fixture, pn, label string) error {
		return e.Sim.Mutate(subscription, group, clusterName, pn, func(p *armcontainerservice.ManagedClusterAgentPoolProfileProperties) {
			delete(p.NodeLabels, label)
		})
	},
	ImmutableField: func(s *provider.PoolSpec) string {
		s.MachineType = "Standard_D8s_v5"
		return "spec.platform.azure.vmSize"
	},
}

// fixture is the emulator, driver and cluster of a test.
type fixture = providertest.Emulated[*aksim.Server, *driver.Driver]

// emulated is a fixture with the tests' own helpers.
type emulated struct{ *fixture }

func newEmulated(t *testing.T) *emulated { return &emulated{setup.Start(t)} }

func TestConformance(t *testing.T) { setup.RunConformance(t) }

// TestWire: an allowed ARM endpoint that redirects gets its bearer token
// sent nowhere else, and one that echoes it leaves none in the scrubbed
// error (providertest.RunWire). The client is an http.Client, which
// follows redirects on its own: the driver must stop it.
func TestWire(t *testing.T) { setup.RunWire(t) }

// TestMapping checks the fields the AKS driver maps both ways.
func TestMapping(t *testing.T) {
	e := newEmulated(t)
	ctx := context.Background()
	s := providertest.Spec(e.Cluster, "spot-gpu", kpool.NodePoolSpec{
		NodeCount:         ptr.To(3),
		Autoscaling:       &kpool.Autoscaling{Enabled: true, MinNodes: ptr.To(0), MaxNodes: ptr.To(5)},
		Zones:             []string{"1", "3"},
		Mode:              kpool.ModeUser,
		KubernetesVersion: "1.30.4",
		Labels:            map[string]string{"team": "ml"},
		Taints:            []kpool.Taint{{Key: "nvidia.com/gpu", Effect: kpool.EffectNoSchedule}},
		Tags:              map[string]string{"cost-center": "42"},
		Platform: kpool.NodePoolPlatform{Azure: &kpool.AzureNodePool{
			VMSize: "Standard_NC6s_v3", OSDiskSizeGB: 256, OSDiskType: "Ephemeral", SpotInstances: true}},
	})
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	state, ok := e.Sim.Pool(subscription, group, clusterName, s.ProviderName)
	if !ok {
		t.Fatal("the emulator has no such pool")
	}
	pr := state.AgentPool.Properties
	if *pr.VMSize != "Standard_NC6s_v3" || *pr.OSDiskSizeGB != 256 || *pr.OSDiskType != armcontainerservice.OSDiskTypeEphemeral ||
		*pr.ScaleSetPriority != armcontainerservice.ScaleSetPrioritySpot || !*pr.EnableAutoScaling || *pr.MinCount != 0 || *pr.MaxCount != 5 ||
		*pr.OrchestratorVersion != "1.30.4" || *pr.Tags["cost-center"] != "42" || *pr.NodeLabels["kompox.dev/node-pool"] != "spot-gpu" ||
		len(pr.AvailabilityZones) != 2 || *pr.Mode != armcontainerservice.AgentPoolModeUser {
		t.Fatalf("sent properties: %+v", pr)
	}
	if _, has := pr.NodeLabels["kompox.dev/node-zone"]; has {
		t.Fatal("a two-zone pool got a node-zone label")
	}
	e.Clock.Advance(time.Hour)
	pools, err := e.Driver.NodePoolList(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := provider.Find(pools, s.ProviderName)
	spot := kpool.Taint{Key: "kubernetes.azure.com/scalesetpriority", Value: "spot", Effect: kpool.EffectNoSchedule}
	found := false
	for _, tt := range p.Taints {
		found = found || tt == spot
	}
	if !found || !p.Spot || p.DiskType != "Ephemeral" || p.Version != "1.30.4" || p.MinCount != 0 || p.MaxCount != 5 || p.Labels["team"] != "ml" {
		t.Fatalf("observed: %+v", p)
	}
	if p.NodesByZone["1"]+p.NodesByZone["3"] != p.Count || p.Extra["id"] == "" {
		t.Fatalf("nodes by zone %v of %d, extra %v", p.NodesByZone, p.Count, p.Extra)
	}
}

// TestRefusedByTheService checks that the emulator refuses what AKS
// refuses even if a driver sent it: the driver's own check is not the only
// guard.
func TestRefusedByTheService(t *testing.T) {
	e := newEmulated(t)
	ctx := context.Background()
	bad := providertest.Spec(e.Cluster, "bad", kpool.NodePoolSpec{NodeCount: ptr.To(2), Platform: kpool.NodePoolPlatform{Azure: &kpool.AzureNodePool{VMSize: "Standard_D4s_v5"}}})
	bad.Mode = kpool.ModeSystem
	bad.Autoscaling, bad.MinCount, bad.MaxCount, bad.Count = true, 0, 3, 0
	_, err := e.Driver.NodePoolCreate(ctx, e.Cluster, bad)
	if !provider.IsValidation(err) {
		t.Fatalf("a system pool with min 0: %v, want a validation error", err)
	}
	missing := *e.Cluster
	missing.Spec.Platform.Azure = &kpool.AzureCluster{SubscriptionID: subscription, ResourceGroup: group, ClusterName: "nope"}
	if _, err := e.Driver.NodePoolList(ctx, &missing); !provider.IsNotFound(err) {
		t.Fatalf("list in a missing cluster: %v", err)
	}
	if _, err := e.Driver.NodePoolCreate(ctx, &missing, bad); provider.IsValidation(err) || err == nil {
		t.Fatalf("create in a missing cluster: %v", err)
	}
}

func clusterAt(endpoint string) *kpool.Cluster {
	return providertest.ClusterAt(endpoint, kpool.ClusterPlatform{Type: kpool.PlatformAzure, Azure: &kpool.AzureCluster{
		SubscriptionID: subscription, ResourceGroup: group, ClusterName: clusterName, Location: "westeurope"}})
}

// TestTarpit: an ARM endpoint that never answers costs a bounded time
// (providertest.RunTarpit), and the error says the deadline passed.
func TestTarpit(t *testing.T) {
	setup.RunTarpit(t, func(err error) bool { return errors.Is(err, context.DeadlineExceeded) })
}

// TestPlainHTTPEndpoint: azcore sends no bearer token over http, so an
// http endpoint is a validation error on spec.endpoint, never retried.
func TestPlainHTTPEndpoint(t *testing.T) {
	e := newEmulated(t)
	srv := httptest.NewServer(e.Sim)
	t.Cleanup(srv.Close)
	d := driver.New(provider.DriverOptions{})
	_, err := d.NodePoolList(context.Background(), clusterAt(srv.URL))
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindValidation || pe.Field != "spec.endpoint" {
		t.Fatalf("got %v, want a validation error on spec.endpoint", err)
	}
	if n := len(e.Sim.Calls()); n != 0 {
		t.Fatalf("%d calls reached the emulator", n)
	}
}

// TestLongListUnderFaults: with the driver's default retries, a list of
// 40 pages succeeds at a 5% fault rate (500, 503 with Retry-After: 1,
// dropped connections), where one bad answer used to fail the whole list.
func TestLongListUnderFaults(t *testing.T) {
	for _, seed := range []int64{1, 2, 4, 5} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			emu := aksim.New(aksim.Options{Engine: sim.Options{Seed: seed}, PageSize: 1})
			emu.AddCluster(subscription, group, clusterName, "westeurope", "1.30.4")
			for i := range 40 {
				ap := armcontainerservice.AgentPool{Name: ptr.To(fmt.Sprintf("pool%d", i)), Properties: &armcontainerservice.ManagedClusterAgentPoolProfileProperties{
					VMSize: ptr.To("Standard_D4s_v5"), Count: ptr.To(int32(1)), Mode: ptr.To(armcontainerservice.AgentPoolModeUser)}}
				if err := emu.AddPool(subscription, group, clusterName, ap); err != nil {
					t.Fatal(err)
				}
			}
			srv := httptest.NewUnstartedServer(emu)
			srv.StartTLS()
			t.Cleanup(srv.Close)
			emu.SetFaultRate(0.05)
			d := setup.Driver(t, srv.Client().Transport, nil, srv.URL)
			pools, err := d.NodePoolList(context.Background(), clusterAt(srv.URL))
			if err != nil || len(pools) != 40 {
				t.Fatalf("%d pools, %v", len(pools), err)
			}
			faults := 0
			for _, c := range emu.Calls() {
				if c.Fault != "" {
					faults++
				}
			}
			if faults == 0 {
				t.Fatal("no fault was injected: the test shows nothing")
			}
		})
	}
}

// TestProgress: mid-scale, ARM shows the new target count and a busy
// provisioning state and never how many nodes are up, so the driver says
// it does not know rather than 0; once done, all are ready.
func TestProgress(t *testing.T) {
	e := newEmulated(t)
	ctx := context.Background()
	s := e.Harness(t).Spec("web")
	s.Count = 3
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	list := func() provider.Pool {
		t.Helper()
		pools, err := e.Driver.NodePoolList(ctx, e.Cluster)
		if err != nil {
			t.Fatal(err)
		}
		p, ok := provider.Find(pools, s.ProviderName)
		if !ok {
			t.Fatal("pool missing")
		}
		return *p
	}
	if p := list(); p.State != provider.StateCreating || !p.ReadyUnknown || p.ReadyNodes != 0 {
		t.Fatalf("creating: %s, %d ready, unknown %v", p.State, p.ReadyNodes, p.ReadyUnknown)
	}
	e.Clock.Advance(time.Hour)
	if p := list(); p.State != provider.StateReady || p.ReadyUnknown || p.ReadyNodes != 3 {
		t.Fatalf("created: %s, %d ready, unknown %v", p.State, p.ReadyNodes, p.ReadyUnknown)
	}
	s.Count = 5
	got, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s)
	if err != nil {
		t.Fatal(err)
	}
	if got.ProviderState != "Scaling" || !got.ReadyUnknown || got.Count != 5 {
		t.Fatalf("accepted scale: %s, count %d, unknown %v", got.ProviderState, got.Count, got.ReadyUnknown)
	}
	e.Clock.Advance(15 * time.Second) // one of the two new nodes is up
	if st, _ := e.Sim.Pool(subscription, group, clusterName, s.ProviderName); st.Operation != "Scaling" || st.ReadyNodes < 3 || st.ReadyNodes >= 5 {
		t.Fatalf("the emulator is not mid-scale: %q, %d nodes", st.Operation, st.ReadyNodes)
	}
	p := list()
	if p.ProviderState != "Scaling" || p.State != provider.StateUpdating || p.Count != 5 || p.Nodes != 5 ||
		!p.ReadyUnknown || p.ReadyNodes != 0 || len(p.NodesByZone) != 0 {
		t.Fatalf("mid-scale: %s/%s count %d, %d ready, unknown %v, by zone %v", p.ProviderState, p.State, p.Count, p.ReadyNodes, p.ReadyUnknown, p.NodesByZone)
	}
	e.Clock.Advance(time.Hour)
	if p := list(); p.State != provider.StateReady || p.ReadyUnknown || p.ReadyNodes != 5 {
		t.Fatalf("scaled: %s, %d ready, unknown %v", p.State, p.ReadyNodes, p.ReadyUnknown)
	}
}

// TestFailedOperationMessage: a pool whose operation failed says why in
// Message. armcontainerservice v6 speaks api-version 2025-02-01, whose
// agent pools carry no provisioningError, so the driver reads the error of
// the operation it started; a driver that did not start it says what it
// knows.
func TestFailedOperationMessage(t *testing.T) {
	e := newEmulated(t)
	ctx := context.Background()
	s := e.Harness(t).Spec("web")
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	failed := false
	for i := 0; i < 100 && !failed; i++ {
		s.Count = 3 + i%2
		e.Sim.SetFaultRate(0.5)
		_, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s)
		e.Sim.SetFaultRate(0)
		calls := e.Sim.Calls()
		last := calls[len(calls)-1]
		failed = err == nil && last.Method == http.MethodPut && last.Fault == sim.FaultFail
		e.Clock.Advance(time.Hour)
	}
	if !failed {
		t.Fatal("no operation failed in 100 tries")
	}
	pools, err := e.Driver.NodePoolList(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := provider.Find(pools, s.ProviderName)
	if p.State != provider.StateFailed || !p.ReadyUnknown ||
		!strings.HasPrefix(p.Message, "ReconcileVMSSAgentPoolFailed: ") || !strings.Contains(p.Message, "AllocationFailed: Allocation failed") {
		t.Fatalf("failed pool: %s, unknown %v, message %q", p.State, p.ReadyUnknown, p.Message)
	}
	st, _ := e.Sim.Pool(subscription, group, clusterName, s.ProviderName)
	if p.Message != st.ProvisioningError {
		t.Fatalf("message %q, the emulator's provisioning error %q", p.Message, st.ProvisioningError)
	}
	before := len(e.Sim.Calls())
	if _, err := e.Driver.NodePoolList(ctx, e.Cluster); err != nil {
		t.Fatal(err)
	}
	if n := len(e.Sim.Calls()) - before; n != 1 {
		t.Fatalf("a second list made %d calls: the reason is not kept", n)
	}
	other := setup.Driver(t, e.Client.Transport, nil, e.URL)
	pools, err = other.NodePoolList(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := provider.Find(pools, s.ProviderName); p.State != provider.StateFailed || !strings.Contains(p.Message, "failed") {
		t.Fatalf("seen by another driver: %s, %q", p.State, p.Message)
	}
}

// TestStoppedPool: a pool stopped behind kpool's back (az aks nodepool
// stop) is provisioned but not Ready: none of its nodes are up, known,
// and Message says why.
func TestStoppedPool(t *testing.T) {
	e := newEmulated(t)
	ctx := context.Background()
	s := e.Harness(t).Spec("web")
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	if err := e.Sim.Mutate(subscription, group, clusterName, s.ProviderName, func(p *armcontainerservice.ManagedClusterAgentPoolProfileProperties) {
		p.PowerState = &armcontainerservice.PowerState{Code: ptr.To(armcontainerservice.CodeStopped)}
	}); err != nil {
		t.Fatal(err)
	}
	pools, err := e.Driver.NodePoolList(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := provider.Find(pools, s.ProviderName)
	if p.State == provider.StateReady || p.ProviderState != "Succeeded" || p.ReadyNodes != 0 || p.ReadyUnknown ||
		p.Nodes != s.Count || !strings.Contains(p.Message, "stopped") {
		t.Fatalf("stopped pool: %s/%s, %d of %d ready, unknown %v, %q", p.State, p.ProviderState, p.ReadyNodes, p.Nodes, p.ReadyUnknown, p.Message)
	}
}

package driver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"

	"github.com/kpool/kpool"
	aksim "github.com/kpool/kpool/cloudsim/aks"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/aks/driver"
	"github.com/kpool/kpool/provider/providertest"
)

const (
	subscription = "0b1f6471-1bf0-4dda-aec3-111122223333"
	group        = "rg-prod"
	clusterName  = "aks-prod"
)

// emulated is an AKS emulator on a loopback TLS port with a driver and a
// cluster pointing at it.
type emulated struct {
	sim     *aksim.Server
	clock   *sim.ManualClock
	driver  *driver.Driver
	cluster *kpool.Cluster
	client  *http.Client // trusts the emulator's certificate
}

func newEmulated(t *testing.T) *emulated {
	t.Helper()
	clock := sim.NewManualClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	emu := aksim.New(aksim.Options{Engine: sim.Options{Clock: clock, OperationTime: 30 * time.Second, NodeTime: 10 * time.Second}, Token: "kpool-cloudsim", PageSize: 2})
	emu.AddCluster(subscription, group, clusterName, "westeurope", "1.30.4")
	srv := httptest.NewUnstartedServer(emu)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	c := &kpool.Cluster{Name: "prod", Spec: kpool.ClusterSpec{
		Endpoint: srv.URL,
		Platform: kpool.ClusterPlatform{Type: kpool.PlatformAzure, Azure: &kpool.AzureCluster{
			SubscriptionID: subscription, ResourceGroup: group, ClusterName: clusterName, Location: "westeurope"}},
	}}
	d := driver.New(driver.Options{Credential: aksim.Credential{}, Transport: srv.Client()})
	return &emulated{sim: emu, clock: clock, driver: d, cluster: c, client: srv.Client()}
}

func (e *emulated) harness(t *testing.T) *providertest.Harness {
	return &providertest.Harness{
		Driver:  e.driver,
		Cluster: e.cluster,
		Spec: func(name string, zones ...string) provider.PoolSpec {
			return providertest.Spec(e.cluster, name, kpool.NodePoolSpec{
				NodeCount: ptr(2), Zones: zones,
				Platform: kpool.NodePoolPlatform{Azure: &kpool.AzureNodePool{VMSize: "Standard_D4s_v5", OSDiskSizeGB: 128}},
			})
		},
		Settle:   func() { e.clock.Advance(time.Hour) },
		Throttle: e.sim.SetRateLimit,
		Faults:   e.sim.SetFaultRate,
		Creates: func(pn string) int {
			n := 0
			for _, c := range e.sim.Calls() {
				if c.Created && strings.HasSuffix(strings.ToLower(c.Path), "/agentpools/"+pn) {
					n++
				}
			}
			return n
		},
		Unlabel: func(pn, label string) {
			if err := e.sim.Mutate(subscription, group, clusterName, pn, func(p *armcontainerservice.ManagedClusterAgentPoolProfileProperties) {
				delete(p.NodeLabels, label)
			}); err != nil {
				t.Fatal(err)
			}
		},
		ImmutableField: func(s *provider.PoolSpec) string {
			s.MachineType = "Standard_D8s_v5"
			return "spec.platform.azure.vmSize"
		},
	}
}

func ptr[T any](v T) *T { return &v }

func TestConformance(t *testing.T) {
	providertest.Run(t, func(t *testing.T) *providertest.Harness { return newEmulated(t).harness(t) })
}

// TestMapping checks the fields the AKS driver maps both ways.
func TestMapping(t *testing.T) {
	e := newEmulated(t)
	ctx := context.Background()
	s := providertest.Spec(e.cluster, "spot-gpu", kpool.NodePoolSpec{
		NodeCount:         ptr(3),
		Autoscaling:       &kpool.Autoscaling{Enabled: true, MinNodes: ptr(0), MaxNodes: ptr(5)},
		Zones:             []string{"1", "3"},
		Mode:              kpool.ModeUser,
		KubernetesVersion: "1.30.4",
		Labels:            map[string]string{"team": "ml"},
		Taints:            []kpool.Taint{{Key: "nvidia.com/gpu", Effect: kpool.EffectNoSchedule}},
		Tags:              map[string]string{"cost-center": "42"},
		Platform: kpool.NodePoolPlatform{Azure: &kpool.AzureNodePool{
			VMSize: "Standard_NC6s_v3", OSDiskSizeGB: 256, OSDiskType: "Ephemeral", SpotInstances: true}},
	})
	if _, err := e.driver.NodePoolCreate(ctx, e.cluster, s); err != nil {
		t.Fatal(err)
	}
	state, ok := e.sim.Pool(subscription, group, clusterName, s.ProviderName)
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
	e.clock.Advance(time.Hour)
	pools, err := e.driver.NodePoolList(ctx, e.cluster)
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
	bad := providertest.Spec(e.cluster, "bad", kpool.NodePoolSpec{NodeCount: ptr(2), Platform: kpool.NodePoolPlatform{Azure: &kpool.AzureNodePool{VMSize: "Standard_D4s_v5"}}})
	bad.Mode = kpool.ModeSystem
	bad.Autoscaling, bad.MinCount, bad.MaxCount, bad.Count = true, 0, 3, 0
	_, err := e.driver.NodePoolCreate(ctx, e.cluster, bad)
	if !provider.IsValidation(err) {
		t.Fatalf("a system pool with min 0: %v, want a validation error", err)
	}
	missing := *e.cluster
	missing.Spec.Platform.Azure = &kpool.AzureCluster{SubscriptionID: subscription, ResourceGroup: group, ClusterName: "nope"}
	if _, err := e.driver.NodePoolList(ctx, &missing); !provider.IsNotFound(err) {
		t.Fatalf("list in a missing cluster: %v", err)
	}
	if _, err := e.driver.NodePoolCreate(ctx, &missing, bad); provider.IsValidation(err) || err == nil {
		t.Fatalf("create in a missing cluster: %v", err)
	}
}

// TestNoToken checks that a driver without a valid token is refused with
// a permission error, not a transient one.
func TestNoToken(t *testing.T) {
	e := newEmulated(t)
	d := driver.New(driver.Options{Credential: badToken{}, Transport: e.client})
	_, err := d.NodePoolList(context.Background(), e.cluster)
	if !provider.IsPermissionDenied(err) {
		t.Fatalf("wrong token: %v", err)
	}
}

type badToken struct{}

func (badToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: "wrong", ExpiresOn: time.Now().Add(time.Hour)}, nil
}

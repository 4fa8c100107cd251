package driver_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	okesim "github.com/kpool/kpool/cloudsim/oke"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/oke"
	"github.com/kpool/kpool/provider/oke/driver"
	"github.com/kpool/kpool/provider/providertest"
)

const (
	region      = "us-phoenix-1"
	tenancy     = "ocid1.tenancy.oc1..aaaaaaaatesttenancy"
	user        = "ocid1.user.oc1..aaaaaaaatestuser"
	compartment = "ocid1.compartment.oc1..aaaaaaaatest"
	clusterID   = "ocid1.cluster.oc1.phx.aaaaaaaatestcluster"
	image       = "ocid1.image.oc1.phx.aaaaaaaatestimage"
	image2      = "ocid1.image.oc1.phx.aaaaaaaatestimage2"
)

var subnets = map[string]string{
	"Uocm:PHX-AD-1": "ocid1.subnet.oc1.phx.aaaaaaaaad1",
	"Uocm:PHX-AD-2": "ocid1.subnet.oc1.phx.aaaaaaaaad2",
	"Uocm:PHX-AD-3": "ocid1.subnet.oc1.phx.aaaaaaaaad3",
}

var key = func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
}()

func identity(k *rsa.PrivateKey) common.ConfigurationProvider {
	return common.NewRawConfigurationProvider(tenancy, user, region, okesim.Fingerprint(&k.PublicKey), okesim.PEM(k), nil)
}

// setup starts the OKE emulator, with the test's cluster and key, and the
// driver signing with that key (providertest.Setup).
var setup = providertest.Setup[*okesim.Server, *driver.Driver]{
	Profile: oke.Profile{},
	Emulator: func(o sim.Options) *okesim.Server {
		emu := okesim.New(okesim.Options{Engine: o, Keys: map[string]*rsa.PublicKey{okesim.KeyID(tenancy, user, &key.PublicKey): &key.PublicKey}, PageSize: 2})
		emu.AddCluster(okesim.Cluster{ID: clusterID, Name: "prod", Region: region, CompartmentID: compartment, Version: "v1.31.1", ImageID: image, Subnets: subnets})
		return emu
	},
	Cluster:  clusterAt,
	Identity: identity(key),
	New:      driver.New,
	Spec: func(e *fixture, name string, zones ...string) provider.PoolSpec {
		return (&emulated{e}).spec(name, zones...)
	},
	Creates: func(e *fixture, pn string) int {
		st, ok := e.Sim.PoolOf(clusterID, pn)
		return e.Creates(func(c sim.Call) bool {
			return ok && c.Method == http.MethodPost && strings.HasSuffix(c.Resource, "/"+*st.Id)
		})
	},
	Unlabel: func(e *fixture, pn, label string) error {
		return e.Sim.Mutate(clusterID, pn, func(np *ce.NodePool) {
			var kept []ce.KeyValue
			for _, kv := range np.InitialNodeLabels {
				if *kv.Key != label {
					kept = append(kept, kv)
				}
			}
			np.InitialNodeLabels = kept
		})
	},
	// OKE changes almost everything in place (for new nodes); what it
	// refuses is a node pool version older than the pool's.
	ImmutableField: func(s *provider.PoolSpec) string {
		s.Version = "1.30"
		return "spec.kubernetesVersion"
	},
}

// fixture is the emulator, driver and cluster of a test.
type fixture = providertest.Emulated[*okesim.Server, *driver.Driver]

// emulated is a fixture with the tests' own helpers.
type emulated struct{ *fixture }

func newEmulated(t *testing.T) *emulated { return &emulated{setup.Start(t)} }

func clusterAt(endpoint string) *kpool.Cluster {
	return providertest.ClusterAt(endpoint, kpool.ClusterPlatform{Type: kpool.PlatformOCI, OCI: &kpool.OCICluster{
		Region: region, CompartmentID: compartment, ClusterID: clusterID, ImageID: image, Subnets: subnets}})
}

func (e *emulated) spec(name string, zones ...string) provider.PoolSpec {
	return providertest.Spec(e.Cluster, name, kpool.NodePoolSpec{
		NodeCount: ptr.To(2), Zones: zones,
		Platform: kpool.NodePoolPlatform{OCI: &kpool.OCINodePool{Shape: "VM.Standard.E4.Flex", OCPUs: 1, MemoryInGBs: 16}},
	})
}

func TestConformance(t *testing.T) { setup.RunConformance(t) }

// TestWire: an allowed endpoint that redirects gets a signed request sent
// nowhere else, and one that echoes the OCI signature leaves none of it in
// the scrubbed error (providertest.RunWire).
func TestWire(t *testing.T) { setup.RunWire(t) }

var ctx = context.Background()

func (e *emulated) list(t *testing.T, pn string) *provider.Pool {
	t.Helper()
	pools, err := e.Driver.NodePoolList(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := provider.Find(pools, pn)
	return p
}

// TestMapping checks the fields the OKE driver maps both ways.
func TestMapping(t *testing.T) {
	e := newEmulated(t)
	s := providertest.Spec(e.Cluster, "spot-ml", kpool.NodePoolSpec{
		NodeCount:         ptr.To(3),
		Zones:             []string{"1", "3"},
		KubernetesVersion: "1.30",
		Labels:            map[string]string{"team": "ml"},
		Tags:              map[string]string{"cost-center": "42"},
		Platform: kpool.NodePoolPlatform{OCI: &kpool.OCINodePool{Shape: "VM.Standard.E4.Flex", OCPUs: 2, MemoryInGBs: 32,
			BootVolumeSizeInGBs: 100, Preemptible: true, ImageID: image2}},
	})
	created, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s)
	if err != nil {
		t.Fatal(err)
	}
	if created.State != provider.StateCreating || created.Extra["workRequest"] == "" {
		t.Fatalf("created: %+v", created)
	}
	st, ok := e.Sim.PoolOf(clusterID, s.ProviderName)
	if !ok {
		t.Fatal("the emulator has no such pool")
	}
	src := st.NodeSourceDetails.(ce.NodeSourceViaImageDetails)
	pcs := st.NodeConfigDetails.PlacementConfigs
	labels := map[string]string{}
	for _, kv := range st.InitialNodeLabels {
		labels[*kv.Key] = *kv.Value
	}
	if *st.NodeShape != "VM.Standard.E4.Flex" || *st.NodeShapeConfig.Ocpus != 2 || *st.NodeShapeConfig.MemoryInGBs != 32 || *src.ImageId != image2 ||
		*src.BootVolumeSizeInGBs != 100 || *st.KubernetesVersion != "v1.30.10" || *st.NodeConfigDetails.Size != 3 || len(pcs) != 2 ||
		*pcs[0].AvailabilityDomain != "Uocm:PHX-AD-1" || *pcs[1].SubnetId != subnets["Uocm:PHX-AD-3"] || pcs[0].PreemptibleNodeConfig == nil ||
		st.FreeformTags["cost-center"] != "42" || labels["team"] != "ml" || labels[provider.LabelPool] != "spot-ml" || st.CompartmentId == nil || *st.ClusterId != clusterID {
		t.Fatalf("sent: %+v", st.NodePool)
	}
	if _, has := labels[provider.LabelZone]; has {
		t.Fatal("a two-zone pool got a node-zone label")
	}
	e.Clock.Advance(time.Hour)
	p := e.list(t, s.ProviderName)
	if p.State != provider.StateReady || !p.Spot || p.DiskSizeGB != 100 || p.Version != "1.30" || p.Extra["kubernetesVersion"] != "v1.30.10" ||
		p.Count != 3 || p.Nodes != 3 || p.ReadyNodes != 3 || strings.Join(p.Zones, ",") != "1,3" || p.NodesByZone["1"]+p.NodesByZone["3"] != 3 ||
		p.Labels["team"] != "ml" || p.Tags["cost-center"] != "42" || p.Settings["ocpus"] != "2" || p.Settings["memoryInGBs"] != "32" ||
		p.Settings["imageId"] != image2 || p.Extra["id"] != *st.Id || p.StaleNodes != 0 || len(p.Problems) > 0 || p.Name != "spot-ml" {
		t.Fatalf("observed: %+v", p)
	}
	// The same spec again is the pool; another count is an update's.
	if again, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil || again.Extra["id"] != *st.Id {
		t.Fatalf("create again: %+v %v", again, err)
	}
	more := s
	more.Count = 4
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, more); !provider.IsAlreadyExists(err) {
		t.Fatalf("create with another count: %v", err)
	}

	// Only what changed is sent: size, labels, tags; the placement label
	// stays the pool's.
	s.Count = 4
	s.Labels = map[string]string{provider.LabelPool: "renamed", "team": "infra"}
	s.Tags = map[string]string{"owner": "ops"}
	got, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != provider.StateUpdating || got.Count != 4 || got.Labels[provider.LabelPool] != "spot-ml" {
		t.Fatalf("accepted update: %+v", got)
	}
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); !provider.IsTransient(err) {
		t.Fatalf("a second update while one runs: %v, want transient", err)
	}
	e.Clock.Advance(time.Hour)
	st, _ = e.Sim.PoolOf(clusterID, s.ProviderName)
	if *st.NodeConfigDetails.Size != 4 || st.FreeformTags["owner"] != "ops" || st.FreeformTags["cost-center"] != "" || len(st.Nodes) != 4 {
		t.Fatalf("after the update: %+v", st.NodePool)
	}
	p = e.list(t, s.ProviderName)
	if p.Labels["team"] != "infra" || p.Labels[provider.LabelPool] != "spot-ml" || p.State != provider.StateReady {
		t.Fatalf("observed after the update: %+v", p)
	}
	// Nothing to change: no call.
	before := len(e.Sim.Calls())
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	for _, c := range e.Sim.Calls()[before:] {
		if c.Method == http.MethodPut {
			t.Fatalf("an update without changes sent %s %s", c.Method, c.Path)
		}
	}
}

// TestStaleNodes: OKE applies a new shape or version to new nodes only;
// the driver counts the nodes still on the old configuration.
func TestStaleNodes(t *testing.T) {
	e := newEmulated(t)
	s := e.spec("web", "1")
	s.Version = "1.30"
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	if p := e.list(t, s.ProviderName); p.StaleNodes != 0 || p.Nodes != 2 {
		t.Fatalf("fresh pool: %d stale of %d", p.StaleNodes, p.Nodes)
	}
	// A new shape: the two nodes keep theirs.
	s.MachineType = "VM.Standard.E5.Flex"
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	p := e.list(t, s.ProviderName)
	if p.StaleNodes != 2 || p.MachineType != "VM.Standard.E5.Flex" || p.State != provider.StateReady {
		t.Fatalf("after a shape change: %d stale, %+v", p.StaleNodes, p)
	}
	// A new node gets the new shape.
	s.Count = 3
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	if p := e.list(t, s.ProviderName); p.StaleNodes != 2 || p.Nodes != 3 {
		t.Fatalf("after a scale up: %d stale of %d", p.StaleNodes, p.Nodes)
	}
	st, _ := e.Sim.PoolOf(clusterID, s.ProviderName)
	shapes := map[string]int{}
	for _, c := range st.NodeConfigs {
		shapes[c.Shape]++
	}
	if shapes["VM.Standard.E4.Flex"] != 2 || shapes["VM.Standard.E5.Flex"] != 1 {
		t.Fatalf("the emulator's nodes: %v", shapes)
	}
	// A new version: every node is behind.
	s.Version = "1.31"
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	if p := e.list(t, s.ProviderName); p.StaleNodes != 3 || p.Version != "1.31" || p.Extra["kubernetesVersion"] != "v1.31.1" {
		t.Fatalf("after a version change: %d stale, version %s", p.StaleNodes, p.Extra["kubernetesVersion"])
	}
	// And a downgrade is refused, naming the field.
	s.Version = "1.30"
	_, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindValidation || pe.Field != "spec.kubernetesVersion" {
		t.Fatalf("downgrade: %v", err)
	}
}

// TestRefusedByTheService: the emulator refuses what OKE refuses even if a
// driver sent it, and the driver types the refusals.
func TestRefusedByTheService(t *testing.T) {
	e := newEmulated(t)
	bad := e.spec("bad")
	bad.MachineType = "VM.Standard2.1" // not flexible: no shape config
	var pe *provider.Error
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, bad); !errors.As(err, &pe) || pe.Kind != provider.KindValidation || !strings.HasPrefix(pe.Field, "spec.platform.oci.") {
		t.Fatalf("a shape config on a fixed shape: %v", err)
	}
	bad = e.spec("bad")
	bad.Version = "1.40"
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, bad); !errors.As(err, &pe) || pe.Field != "spec.kubernetesVersion" {
		t.Fatalf("a version OKE does not offer: %v", err)
	}
	bad.Version = "1.40.1"
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, bad); !errors.As(err, &pe) || pe.Kind != provider.KindValidation || pe.Field != "spec.kubernetesVersion" {
		t.Fatalf("a patch OKE does not offer: %v", err)
	}
	bad = e.spec("bad")
	bad.DiskSizeGB = 20
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, bad); !errors.As(err, &pe) || pe.Field != "spec.platform.oci.bootVolumeSizeInGBs" {
		t.Fatalf("a small boot volume: %v", err)
	}
	// OKE's code and opc-request-id, for the controllers' log.
	if pe.Code == "" || pe.RequestID == "" {
		t.Errorf("a small boot volume: code %q, request id %q: want OKE's", pe.Code, pe.RequestID)
	}
	missing := clusterAt(e.Cluster.Spec.Endpoint)
	missing.Spec.Platform.OCI.ClusterID = "ocid1.cluster.oc1.phx.nope"
	if _, err := e.Driver.NodePoolCreate(ctx, missing, e.spec("x")); !provider.IsNotFound(err) {
		t.Fatalf("create in a missing cluster: %v", err)
	}
	if err := e.Driver.NodePoolDelete(ctx, e.Cluster, "never-was"); err != nil {
		t.Fatalf("delete of a missing pool: %v", err)
	}
}

// TestDemo: the demo emulator, its clusters and its key drive the driver.
func TestDemo(t *testing.T) {
	demo, err := okesim.Demo(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(demo)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	clusters := demo.Clusters(srv.URL)
	if len(clusters) != 1 {
		t.Fatalf("%d demo clusters", len(clusters))
	}
	d := driver.New(provider.DriverOptions{Credentials: providertest.Allow(t, oke.Profile{}, okesim.DemoConfigProvider(), srv.URL), Transport: srv.Client().Transport})
	pools, err := d.NodePoolList(ctx, &clusters[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(pools) != 1 || pools[0].ProviderName != "pool1" || pools[0].State != provider.StateReady || pools[0].Nodes != 1 ||
		pools[0].MachineType != "VM.Standard.E4.Flex" || pools[0].Name != "" || len(pools[0].Zones) != 0 {
		t.Fatalf("demo pools: %+v", pools)
	}
	s := providertest.Spec(&clusters[0], "web", kpool.NodePoolSpec{NodeCount: ptr.To(1), Zones: []string{"2"},
		Platform: kpool.NodePoolPlatform{OCI: &kpool.OCINodePool{Shape: "VM.Standard.E4.Flex", OCPUs: 1}}})
	if _, err := d.NodePoolCreate(ctx, &clusters[0], s); err != nil {
		t.Fatal(err)
	}
}

// TestTarpit: an OKE endpoint that never answers costs a bounded time
// (providertest.RunTarpit).
func TestTarpit(t *testing.T) { setup.RunTarpit(t) }

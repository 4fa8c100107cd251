package driver_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	ekssim "github.com/kpool/kpool/cloudsim/eks"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/eks"
	"github.com/kpool/kpool/provider/eks/driver"
	"github.com/kpool/kpool/provider/providertest"
)

const (
	region      = "us-west-2"
	account     = "123456789012"
	clusterName = "prod"
	accessKey   = "AKIATESTTESTTEST0001"
	secretKey   = "test-secret-access-key"
)

var subnets = map[string]string{
	"us-west-2a": "subnet-0aaaaaaaaaaaaaaa1",
	"us-west-2b": "subnet-0bbbbbbbbbbbbbbb2",
	"us-west-2c": "subnet-0ccccccccccccccc3",
}

var static = credentials.NewStaticCredentialsProvider(accessKey, secretKey, "")

// setup starts the EKS emulator, with the test's cluster and key, and the
// driver signing with that key (providertest.Setup).
var setup = providertest.Setup[*ekssim.Server, *driver.Driver]{
	Profile: eks.Profile{},
	Emulator: func(o sim.Options) *ekssim.Server {
		emu := ekssim.New(ekssim.Options{Engine: o, Keys: map[string]string{accessKey: secretKey}, PageSize: 2})
		emu.AddCluster(ekssim.Cluster{Name: clusterName, Region: region, Account: account, Version: "1.31", Subnets: subnets})
		return emu
	},
	Cluster:  clusterAt,
	Identity: static,
	New:      driver.New,
	Spec: func(e *fixture, name string, zones ...string) provider.PoolSpec {
		return providertest.Spec(e.Cluster, name, kpool.NodePoolSpec{
			NodeCount: ptr.To(2), Zones: zones,
			Platform: kpool.NodePoolPlatform{AWS: &kpool.AWSNodePool{InstanceType: "m5.large", VolumeSize: 50}},
		})
	},
	Creates: func(e *fixture, pn string) int {
		return e.Creates(func(c sim.Call) bool {
			st, ok := e.Sim.NodegroupOf(region, clusterName, pn)
			return c.Method == http.MethodPost && strings.HasSuffix(c.Path, "/node-groups") && ok && st.CreatedAt == float64(c.Time.UnixMilli())/1000
		})
	},
	Unlabel: func(e *fixture, pn, label string) error {
		return e.Sim.Mutate(region, clusterName, pn, func(ng *ekssim.Nodegroup) { delete(ng.Labels, label) })
	},
	ImmutableField: func(s *provider.PoolSpec) string {
		s.MachineType = "m5.2xlarge"
		return "spec.platform.aws.instanceType"
	},
}

// fixture is the emulator, driver and cluster of a test.
type fixture = providertest.Emulated[*ekssim.Server, *driver.Driver]

// emulated is a fixture with the tests' own helpers.
type emulated struct{ *fixture }

func newEmulated(t *testing.T) *emulated { return &emulated{setup.Start(t)} }

func clusterAt(endpoint string) *kpool.Cluster {
	return providertest.ClusterAt(endpoint, kpool.ClusterPlatform{Type: kpool.PlatformAWS, AWS: &kpool.AWSCluster{
		Region: region, ClusterName: clusterName, NodeRoleARN: "arn:aws:iam::" + account + ":role/nodes", Subnets: subnets}})
}

func TestConformance(t *testing.T) { setup.RunConformance(t) }

// TestWire: an allowed EKS endpoint that redirects gets no signed request
// sent elsewhere, and one that echoes the SigV4 Authorization leaves none
// of it in the scrubbed error (providertest.RunWire).
func TestWire(t *testing.T) { setup.RunWire(t) }

var ctx = context.Background()

// TestMapping checks the fields the EKS driver maps both ways.
func TestMapping(t *testing.T) {
	e := newEmulated(t)
	s := providertest.Spec(e.Cluster, "spot-ml", kpool.NodePoolSpec{
		NodeCount:         ptr.To(3),
		Autoscaling:       &kpool.Autoscaling{Enabled: true, MinNodes: ptr.To(0), MaxNodes: ptr.To(5)},
		Zones:             []string{"1", "3"},
		KubernetesVersion: "1.31", // EKS creates a node group at the cluster's version only
		Labels:            map[string]string{"team": "ml"},
		Taints:            []kpool.Taint{{Key: "dedicated", Value: "ml", Effect: kpool.EffectPreferNoSchedule}, {Key: "gpu", Effect: kpool.EffectNoExecute}},
		Tags:              map[string]string{"cost-center": "42"},
		Platform:          kpool.NodePoolPlatform{AWS: &kpool.AWSNodePool{InstanceType: "g5.xlarge", VolumeSize: 200, SpotInstances: true}},
	})
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	st, ok := e.Sim.NodegroupOf(region, clusterName, s.ProviderName)
	if !ok {
		t.Fatal("the emulator has no such node group")
	}
	sc := st.ScalingConfig
	if *sc.MinSize != 0 || *sc.MaxSize != 5 || *sc.DesiredSize != 3 || st.CapacityType != "SPOT" || st.DiskSize != nil || st.LaunchTemplate == nil ||
		strings.Join(st.InstanceTypes, ",") != "g5.xlarge" || st.Version != "1.31" || st.NodeRole != "arn:aws:iam::"+account+":role/nodes" ||
		strings.Join(st.Subnets, ",") != subnets["us-west-2a"]+","+subnets["us-west-2c"] || st.Tags["cost-center"] != "42" ||
		st.Labels[provider.LabelPool] != "spot-ml" || st.Labels["team"] != "ml" || len(st.Taints) != 2 || st.Taints[0].Effect != "PREFER_NO_SCHEDULE" ||
		st.Taints[1].Effect != "NO_EXECUTE" || st.Status != "CREATING" {
		t.Fatalf("sent: %+v", st.Nodegroup)
	}
	if _, has := st.Labels[provider.LabelZone]; has {
		t.Fatal("a two-zone pool got a node-zone label")
	}
	// The volume is the launch template's: EKS refuses diskSize with one.
	if lt, ok := e.Sim.LaunchTemplateOf(region, "kpool-"+clusterName+"-"+s.ProviderName); !ok || lt.VolumeSize != 200 || lt.DeviceName != "/dev/xvda" {
		t.Fatalf("launch template: %+v %v", lt, ok)
	}
	e.Clock.Advance(time.Hour)
	pools, err := e.Driver.NodePoolList(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := provider.Find(pools, s.ProviderName)
	if p.State != provider.StateReady || !p.Spot || p.DiskSizeGB != 200 || p.Version != "1.31" || !p.Autoscaling || p.MinCount != 0 || p.MaxCount != 5 ||
		p.Count != 3 || strings.Join(p.Zones, ",") != "1,3" || p.Labels["team"] != "ml" || len(p.Taints) != 2 || p.Tags["cost-center"] != "42" ||
		p.NodesByZone["1"]+p.NodesByZone["3"] != 3 || p.Extra["arn"] == "" || len(p.Problems) > 0 {
		t.Fatalf("observed: %+v", p)
	}

	// Autoscaling off: min = max = desired = the count; labels, taints
	// and tags as diffs; then the version, once the config update is done.
	s.Autoscaling, s.Count = false, 4
	s.Labels = map[string]string{provider.LabelPool: "spot-ml", "team": "infra", "tier": "gold"}
	s.Taints = []kpool.Taint{{Key: "dedicated", Value: "infra", Effect: kpool.EffectPreferNoSchedule}}
	s.Tags = map[string]string{"owner": "ops"}
	s.Version = "1.32"
	// The cluster is upgraded first, as EKS requires of its node groups.
	e.Sim.AddCluster(ekssim.Cluster{Name: clusterName, Region: region, Account: account, Version: "1.32", Subnets: subnets})
	got, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != provider.StateUpdating || got.Count != 4 || got.Autoscaling {
		t.Fatalf("accepted update: %+v", got)
	}
	st, _ = e.Sim.NodegroupOf(region, clusterName, s.ProviderName)
	if sc := st.ScalingConfig; *sc.MinSize != 4 || *sc.MaxSize != 4 || *sc.DesiredSize != 4 || st.Labels["tier"] != "gold" || st.Labels["team"] != "infra" ||
		len(st.Taints) != 1 || *st.Taints[0].Value != "infra" || st.Tags["owner"] != "ops" || st.Tags["cost-center"] != "" || st.Version != "1.31" {
		t.Fatalf("after the config update: %+v", st.Nodegroup)
	}
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); !provider.IsTransient(err) {
		t.Fatalf("a second update while one runs: %v, want transient (ResourceInUseException)", err)
	}
	e.Clock.Advance(time.Hour)
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	st, _ = e.Sim.NodegroupOf(region, clusterName, s.ProviderName)
	if st.Version != "1.32" || st.Status != "ACTIVE" {
		t.Fatalf("after the version update: %s %s", st.Version, st.Status)
	}
}

// TestRefusedByTheService: the emulator refuses what EKS refuses even if a
// driver sent it, and the driver types the refusals.
func TestRefusedByTheService(t *testing.T) {
	e := newEmulated(t)
	bad := e.Harness(t).Spec("bad")
	bad.Autoscaling, bad.MinCount, bad.MaxCount = true, 5, 3
	_, err := e.Driver.NodePoolCreate(ctx, e.Cluster, bad)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindValidation || pe.Field != "spec.autoscaling.minNodes" {
		t.Fatalf("min > max: %v, want a validation error on spec.autoscaling.minNodes", err)
	}
	bad = e.Harness(t).Spec("bad")
	bad.MachineType = "not an instance type"
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, bad); !provider.IsValidation(err) || err.(*provider.Error).Field != "spec.platform.aws.instanceType" {
		t.Fatalf("a bad instance type: %v", err)
	}
	bad = e.Harness(t).Spec("bad")
	bad.Taints = []kpool.Taint{{Key: "x", Effect: "Sometimes"}}
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, bad); !provider.IsValidation(err) || err.(*provider.Error).Field != "spec.taints" {
		t.Fatalf("a bad taint effect: %v", err)
	}
	bad = e.Harness(t).Spec("bad")
	bad.Version = "1.40"
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, bad); !provider.IsValidation(err) || err.(*provider.Error).Field != "spec.kubernetesVersion" {
		t.Fatalf("a version newer than the cluster's: %v", err)
	}
	bad.Version = "1.30"
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, bad); !provider.IsValidation(err) || err.(*provider.Error).Field != "spec.kubernetesVersion" {
		t.Fatalf("a version older than the cluster's: %v, want refused (EKS creates node groups at the cluster's version only)", err)
	}
	missing := clusterAt(e.Cluster.Spec.Endpoint)
	missing.Spec.Platform.AWS.ClusterName = "nope"
	if _, err := e.Driver.NodePoolList(ctx, missing); !provider.IsNotFound(err) {
		t.Fatalf("list in a missing cluster: %v", err)
	}
	if err := e.Driver.NodePoolDelete(ctx, missing, "x"); !provider.IsNotFound(err) {
		t.Fatalf("delete in a missing cluster: %v, want not found (not the node group's absence)", err)
	}
}

// TestWrongKey: a request signed with a key the service does not know is
// permission denied, never retried as transient.
func TestWrongKey(t *testing.T) {
	e := newEmulated(t)
	d := driver.New(provider.DriverOptions{Credentials: providertest.Allow(t, eks.Profile{}, credentials.NewStaticCredentialsProvider("AKIAUNKNOWNUNKNOWN01", "x", ""), e.URL),
		Transport: e.Client.Transport})
	if _, err := d.NodePoolList(ctx, e.Cluster); !provider.IsPermissionDenied(err) {
		t.Fatalf("unknown key: %v", err)
	}
	d = driver.New(provider.DriverOptions{Credentials: providertest.Allow(t, eks.Profile{}, credentials.NewStaticCredentialsProvider(accessKey, "wrong", ""), e.URL),
		Transport: e.Client.Transport})
	if _, err := d.NodePoolList(ctx, e.Cluster); !provider.IsPermissionDenied(err) {
		t.Fatalf("wrong secret: %v", err)
	}
}

// TestNoCredentialToOtherHosts: a cluster whose endpoint the credential
// may not go to is refused before any request; the wire check refuses a
// request the SDK would send elsewhere (providertest's RunOtherHosts); an
// account the credential is not for is refused by scope.
func TestNoCredentialToOtherHosts(t *testing.T) {
	e := newEmulated(t)
	// The operator's credential is of kind default: the SDK's default
	// chain, here the key in the environment.
	t.Setenv("AWS_ACCESS_KEY_ID", accessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secretKey)
	creds, err := provider.ParseCredentials([]byte(`
defaults: {aws: emu}
credentials:
  emu: {type: aws, kind: default, scopes: ["`+account+`"], endpoints: ["`+e.URL+`"]}
`), []provider.Profile{eks.Profile{}})
	if err != nil {
		t.Fatal(err)
	}
	d := setup.RunOtherHosts(t, e.fixture, creds, "eks.us-west-2.amazonaws.com")
	// Another account is refused by scope.
	foreign := clusterAt(e.URL)
	foreign.Spec.Platform.AWS.NodeRoleARN = "arn:aws:iam::999999999999:role/nodes"
	var pe *provider.Error
	if _, err := d.NodePoolList(ctx, foreign); !errors.As(err, &pe) || pe.Field != "spec.credential" {
		t.Fatalf("another account: %v", err)
	}
}

// TestStaticCredential: a static credential's key is read from the
// variables the operator's file names and signs the requests.
func TestStaticCredential(t *testing.T) {
	e := newEmulated(t)
	t.Setenv("KPOOL_TEST_AWS_KEY", accessKey)
	t.Setenv("KPOOL_TEST_AWS_SECRET", secretKey)
	creds, err := provider.ParseCredentials([]byte(`
defaults: {aws: key}
credentials:
  key: {type: aws, kind: static, accessKeyIdEnv: KPOOL_TEST_AWS_KEY, secretAccessKeyEnv: KPOOL_TEST_AWS_SECRET, scopes: ["`+account+`"], endpoints: ["`+e.Cluster.Spec.Endpoint+`"]}
`), []provider.Profile{eks.Profile{}})
	if err != nil {
		t.Fatal(err)
	}
	d := driver.New(provider.DriverOptions{Credentials: creds, Transport: e.Client.Transport})
	if _, err := d.NodePoolList(ctx, e.Cluster); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KPOOL_TEST_AWS_SECRET", "wrong-secret")
	d = driver.New(provider.DriverOptions{Credentials: creds, Transport: e.Client.Transport})
	_, err = d.NodePoolList(ctx, e.Cluster)
	if !provider.IsPermissionDenied(err) || strings.Contains(err.Error(), "wrong-secret") {
		t.Fatalf("a wrong secret: %v, want permission denied without the secret", err)
	}
}

// TestTarpit: an EKS endpoint that never answers costs a bounded time
// (providertest.RunTarpit).
func TestTarpit(t *testing.T) { setup.RunTarpit(t) }

// TestFailedCreateMessage: a node group whose create failed is Failed, its
// health issues are the pool's message, and its repair deletes it so that
// it can be created again.
func TestFailedCreateMessage(t *testing.T) {
	e := newEmulated(t)
	s := e.Harness(t).Spec("web")
	e.CreateFailing(t, s)
	e.Clock.Advance(time.Hour)
	pools, err := e.Driver.NodePoolList(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := provider.Find(pools, s.ProviderName)
	if p == nil || p.State != provider.StateFailed || p.ProviderState != "CREATE_FAILED" || !p.ReadyUnknown || !strings.HasPrefix(p.Message, "AsgInstanceLaunchFailures: ") {
		t.Fatalf("failed node group: %+v", p)
	}
	// The repair of a failed create is its delete (EKS updates no
	// CREATE_FAILED node group); once it is gone, it is created again.
	fixed, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s)
	if err != nil || fixed.State != provider.StateDeleting {
		t.Fatalf("repairing the failed node group: %+v, %v", fixed, err)
	}
	e.Clock.Advance(time.Hour)
	if pools, err = e.Driver.NodePoolList(ctx, e.Cluster); err != nil {
		t.Fatal(err)
	}
	if p, _ := provider.Find(pools, s.ProviderName); p != nil {
		t.Fatalf("after the repair's delete: %+v", p)
	}
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
}

// TestListSurvivesFailedDescribes: EKS lists names only, so a list
// describes each node group; one whose describe keeps failing is reported
// Unknown (which the controllers wait on) instead of failing the list.
func TestListSurvivesFailedDescribes(t *testing.T) {
	// Every describe fails (after the SDK's retries); the list itself does not.
	pools := setup.ListFailingReads(t, "/node-groups/")
	if len(pools) != 3 {
		t.Fatalf("%d pools, want 3: %+v", len(pools), pools)
	}
	for _, p := range pools {
		if p.State != provider.StateUnknown || !p.ReadyUnknown || !strings.HasPrefix(p.Message, "DescribeNodegroup failed") {
			t.Errorf("%s: %s %q", p.ProviderName, p.State, p.Message)
		}
	}
}

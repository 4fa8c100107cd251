package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kpool/kpool/service"

	"sigs.k8s.io/yaml"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/store/sqlite"
)

const (
	testUser       = "dev@example.com"
	testController = "gcp-controller@example.com"
)

// newServer starts the real API on an SQLite store and returns its URL. Its
// kpool has a driver for GCP (the in-memory fake), so that GCP pools wait for
// this kpool's controller, as AKS pools do in kpool serve.
func newServer(t *testing.T) string {
	t.Helper()
	reg := catalog.Registry()
	reg.Add(fake.New(fake.Options{Platform: kpool.PlatformGCP}))
	return newServerOn(t, reg)
}

// newServerOn is newServer with the platforms (and drivers) of reg.
func newServerOn(t *testing.T, reg *provider.Registry) string {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "kpool.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	access, err := auth.NewAccess(nil, []string{testController})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(st, reg)
	svc.Endpoints, err = kpool.ParseOrigins([]string{"https://127.0.0.1:9999", "https://oci.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.NewServer(svc, access, slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(srv.Close)
	return srv.URL
}

// execute runs the kpool command line args with stdin and returns stdout
// and stderr.
func execute(stdin string, args ...string) (stdout, stderr string, err error) {
	return executeOn(clock{}, stdin, args...)
}

// executeOn is execute with the client commands on clk.
func executeOn(clk clock, stdin string, args ...string) (stdout, stderr string, err error) {
	root := newRootOn(clk)
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(args)
	err = root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// run runs a client command against srv as testUser.
func run(srv, stdin string, args ...string) (string, error) {
	out, _, err := execute(stdin, append(args, "--server", srv, "--user", testUser)...)
	return out, err
}

func mustRun(t *testing.T, srv string, args ...string) string {
	t.Helper()
	out, err := run(srv, "", args...)
	if err != nil {
		t.Fatalf("kpool %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// decode runs a command with -o json and decodes its output.
func decode[T any](t *testing.T, srv string, args ...string) T {
	t.Helper()
	var v T
	out := mustRun(t, srv, append(args, "-o", "json")...)
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("kpool %s: %v in %s", strings.Join(args, " "), err, out)
	}
	return v
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// clusterFlags register a valid cluster of each platform.
var clusterFlags = map[kpool.PlatformType][]string{
	kpool.PlatformGCP: {"--platform", "gcp", "--project-id", "my-project-1", "--location", "us-central1", "--cluster-name", "gke-1"},
	kpool.PlatformAWS: {"--platform", "aws", "--region", "us-west-2", "--cluster-name", "eks-1", "--node-role-arn", "arn:aws:iam::123456789012:role/eks-nodes",
		"--subnet", "us-west-2a=subnet-0123456789abcdef0", "--subnet", "us-west-2b=subnet-0123456789abcdef1"},
	kpool.PlatformAzure: {"--platform", "azure", "--subscription-id", "6f0c2a4e-0000-4000-8000-000000000001", "--resource-group", "rg-1", "--cluster-name", "aks-1", "--location", "westeurope"},
	kpool.PlatformOCI: {"--platform", "oci", "--region", "us-ashburn-1", "--compartment-id", "ocid1.compartment.oc1..aaa", "--cluster-id", "ocid1.cluster.oc1.iad.aaa",
		"--image-id", "ocid1.image.oc1.iad.aaa", "--subnet", "AD-1=ocid1.subnet.oc1.iad.aaa"},
	kpool.PlatformCivo: {"--platform", "civo", "--region", "LON1", "--cluster-id", "6f0c2a4e-0000-4000-8000-000000000002"},
	kpool.PlatformK3s:  {"--platform", "k3s"},
}

func createCluster(t *testing.T, srv, name string, pt kpool.PlatformType) string {
	t.Helper()
	return decode[kpool.Cluster](t, srv, append([]string{"cluster", "create", name}, flagsFor(pt, name)...)...).ID
}

// flagsFor are clusterFlags for a cloud cluster of name's own: a cloud
// cluster is registered once.
func flagsFor(pt kpool.PlatformType, name string) []string {
	h := fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(name)))
	out := slices.Clone(clusterFlags[pt])
	for i := 0; i+1 < len(out); i++ {
		switch {
		case out[i] == "--cluster-name":
			out[i+1] = "c" + h
		case out[i] == "--cluster-id" && pt == kpool.PlatformOCI:
			out[i+1] = "ocid1.cluster.oc1.iad.aaa" + h
		case out[i] == "--cluster-id":
			out[i+1] = "6f0c2a4e-0000-4000-8000-0000" + h
		}
	}
	return out
}

func createPool(t *testing.T, srv, name, cluster string, flags ...string) *kpool.NodePool {
	t.Helper()
	p := decode[kpool.NodePool](t, srv, append([]string{"nodepool", "create", name, "--cluster", cluster}, flags...)...)
	return &p
}

func TestClusterCreate(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	gcpYAML := writeFile(t, "gke.yaml", `
name: from-file
spec:
  platform:
    type: gcp
    gcp:
      projectId: my-project-2
      location: europe-west1
      clusterName: gke-2
`)
	ociJSON := `{"name": "oke-1", "spec": {"platform": {"type": "oci", "oci": {"region": "us-ashburn-1",
		"compartmentId": "ocid1.compartment.oc1..aaa", "clusterId": "ocid1.cluster.oc1.iad.bbb", "imageId": "ocid1.image.oc1.iad.aaa",
		"subnets": {"AD-1": "ocid1.subnet.oc1.iad.aaa"}}}}}`
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  func(c *kpool.Cluster) bool
	}{
		{"azure flags", append([]string{"aks"}, clusterFlags[kpool.PlatformAzure]...), "",
			func(c *kpool.Cluster) bool {
				a := c.Spec.Platform.Azure
				return a != nil && a.ResourceGroup == "rg-1" && a.Location == "westeurope" && c.Spec.Platform.GCP == nil
			}},
		{"aws flags with subnets", append([]string{"eks"}, clusterFlags[kpool.PlatformAWS]...), "",
			func(c *kpool.Cluster) bool {
				a := c.Spec.Platform.AWS
				return a != nil && a.Subnets["us-west-2b"] == "subnet-0123456789abcdef1" && len(a.Subnets) == 2 && a.NodeRoleARN != ""
			}},
		{"civo flags with endpoint", append([]string{"civo", "--endpoint", "https://127.0.0.1:9999"}, clusterFlags[kpool.PlatformCivo]...), "",
			func(c *kpool.Cluster) bool {
				return c.Spec.Platform.Civo != nil && c.Spec.Platform.Civo.Region == "LON1" && c.Spec.Endpoint == "https://127.0.0.1:9999"
			}},
		{"k3s", []string{"edge", "--platform", "k3s"}, "",
			func(c *kpool.Cluster) bool { return c.Spec.Platform.Type == kpool.PlatformK3s }},
		{"gcp from YAML file, NAME overrides", []string{"gke-renamed", "-f", gcpYAML}, "",
			func(c *kpool.Cluster) bool {
				return c.Name == "gke-renamed" && c.Spec.Platform.GCP != nil && c.Spec.Platform.GCP.Location == "europe-west1"
			}},
		{"oci JSON on stdin, flags merged", []string{"-f", "-", "--endpoint", "https://oci.example.com", "--region", "us-phoenix-1"}, ociJSON,
			func(c *kpool.Cluster) bool {
				o := c.Spec.Platform.OCI
				return c.Name == "oke-1" && o != nil && o.Region == "us-phoenix-1" && o.ClusterID == "ocid1.cluster.oc1.iad.bbb" &&
					c.Spec.Endpoint == "https://oci.example.com"
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"cluster", "create"}, tt.args...)
			out, err := run(srv, tt.stdin, append(args, "-o", "json")...)
			if err != nil {
				t.Fatal(err)
			}
			var c kpool.Cluster
			if err := json.Unmarshal([]byte(out), &c); err != nil {
				t.Fatal(err)
			}
			if c.ID == "" || c.Generation != 1 || !tt.want(&c) {
				t.Errorf("created %s", out)
			}
			// get shows the same object.
			if got := decode[kpool.Cluster](t, srv, "cluster", "get", c.ID); !reflect.DeepEqual(got, c) {
				t.Errorf("get %+v, create %+v", got, c)
			}
		})
	}

	t.Run("table", func(t *testing.T) {
		out := mustRun(t, srv, append([]string{"cluster", "create", "gke-table"}, flagsFor(kpool.PlatformGCP, "gke-table")...)...)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 2 || !reflect.DeepEqual(strings.Fields(lines[0]), []string{"ID", "NAME", "PLATFORM", "TEAM", "PHASE", "REACHABLE", "AGE"}) ||
			!reflect.DeepEqual(strings.Fields(lines[1])[1:5], []string{"gke-table", "gcp", "-", "Active"}) {
			t.Errorf("table:\n%s", out)
		}
	})

	errs := []struct {
		name  string
		args  []string
		stdin string
		want  string
	}{
		{"flag of another platform", append([]string{"x"}, append(clusterFlags[kpool.PlatformAWS], "--project-id", "p")...), "",
			"--project-id does not apply to platform aws"},
		{"no platform", []string{"x", "--region", "us-west-2"}, "", "--platform is required"},
		{"unknown platform", []string{"x", "--platform", "vmware"}, "", `--platform "vmware" is not a platform`},
		{"bad subnet", []string{"x", "--platform", "aws", "--subnet", "us-west-2a"}, "", `--subnet "us-west-2a": use KEY=VALUE`},
		{"no name", []string{"--platform", "k3s"}, "", "give the cluster's NAME"},
		{"unknown field in file", []string{"-f", "-"}, "nmae: x\nspec: {}\n", "stdin: Validation failed"},
		{"file not YAML", []string{"-f", "-"}, "{: [", "stdin: not YAML or JSON"},
		{"empty file", []string{"-f", "-"}, "", "stdin is empty"},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			_, err := run(srv, tt.stdin, append([]string{"cluster", "create"}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestNodePoolCreatePlatforms(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	common := []string{"--disk-size", "100", "--spot", "--label", "team=web", "--taint", "dedicated=web:NoSchedule", "--taint", "gpu:NoExecute"}
	tests := []struct {
		platform kpool.PlatformType
		flags    []string
		block    func(p *kpool.NodePoolPlatform) any
		want     any
	}{
		{kpool.PlatformGCP, append([]string{"--machine-type", "n2-standard-4", "--zones", "us-central1-a,us-central1-b", "--count", "2"}, common...),
			func(p *kpool.NodePoolPlatform) any { return p.GCP },
			&kpool.GCPNodePool{MachineType: "n2-standard-4", Zones: []string{"us-central1-a", "us-central1-b"}, DiskSize: 100, Preemptible: true}},
		{kpool.PlatformAWS, append([]string{"--machine-type", "m5.xlarge", "--zones", "us-west-2a"}, common...),
			func(p *kpool.NodePoolPlatform) any { return p.AWS },
			&kpool.AWSNodePool{InstanceType: "m5.xlarge", AvailabilityZones: []string{"us-west-2a"}, VolumeSize: 100, SpotInstances: true}},
		{kpool.PlatformAzure, append([]string{"--machine-type", "Standard_D4s_v5", "--zones", "1,2,3"}, common...),
			func(p *kpool.NodePoolPlatform) any { return p.Azure },
			&kpool.AzureNodePool{VMSize: "Standard_D4s_v5", OSDiskSizeGB: 100, SpotInstances: true}},
		{kpool.PlatformOCI, []string{"--machine-type", "VM.Standard.E4.Flex", "--zones", "AD-1", "--disk-size", "100", "--spot", "--label", "team=web", // OKE pools have no taints
			"--image-id", "ocid1.image.oc1.iad.flagimage", "--ocpus", "2.5", "--memory-gb", "32"},
			func(p *kpool.NodePoolPlatform) any { return p.OCI },
			&kpool.OCINodePool{Shape: "VM.Standard.E4.Flex", AvailabilityDomains: []string{"AD-1"}, BootVolumeSizeInGBs: 100, Preemptible: true,
				ImageID: "ocid1.image.oc1.iad.flagimage", OCPUs: 2.5, MemoryInGBs: 32}},
		{kpool.PlatformCivo, []string{"--machine-type", "g4s.kube.medium", "--label", "team=web", "--taint", "dedicated=web:NoSchedule", "--taint", "gpu:NoExecute", "--public-ip"},
			func(p *kpool.NodePoolPlatform) any { return p.Civo },
			&kpool.CivoNodePool{Size: "g4s.kube.medium", PublicIPNodePool: true}},
	}
	wantTaints := []kpool.Taint{{Key: "dedicated", Value: "web", Effect: "NoSchedule"}, {Key: "gpu", Effect: "NoExecute"}}
	// Logical zones go to spec.zones, the provider's own names to its block.
	wantZones := map[kpool.PlatformType][]string{kpool.PlatformAzure: {"1", "2", "3"}}
	noTaints := map[kpool.PlatformType]bool{kpool.PlatformOCI: true}
	for _, tt := range tests {
		t.Run(string(tt.platform), func(t *testing.T) {
			taints := wantTaints
			if noTaints[tt.platform] {
				taints = nil
			}
			cluster := createCluster(t, srv, "c-"+string(tt.platform), tt.platform)
			p := createPool(t, srv, "pool", cluster, tt.flags...)
			if got := tt.block(&p.Spec.Platform); !reflect.DeepEqual(got, tt.want) {
				b, _ := json.Marshal(p.Spec.Platform)
				t.Errorf("platform %s, want %s block %+v", b, tt.platform, tt.want)
			}
			if p.Spec.Platform.Type != tt.platform || p.Spec.Labels["team"] != "web" || !reflect.DeepEqual(p.Spec.Taints, taints) ||
				!reflect.DeepEqual(p.Spec.Zones, wantZones[tt.platform]) {
				t.Errorf("spec %+v", p.Spec)
			}
		})
	}

	// What a provider lacks is NOT_IMPLEMENTED, named.
	oke := createCluster(t, srv, "oke-taints", kpool.PlatformOCI)
	if _, err := run(srv, "", "nodepool", "create", "p", "--cluster", oke, "--machine-type", "VM.Standard.E4.Flex", "--ocpus", "2", "--taint", "gpu:NoSchedule"); errCodeOf(err) != kpool.CodeNotImplemented ||
		!strings.Contains(err.(*kpool.Error).Details, "spec.taints") {
		t.Errorf("taints on oci: %v", err)
	}

	// A provider's own flag on another provider's pool is refused, naming
	// where it applies.
	if _, err := run(srv, "", "nodepool", "create", "p", "--cluster", oke, "--machine-type", "VM.Standard.E4.Flex", "--ocpus", "2", "--public-ip"); err == nil ||
		!strings.Contains(err.Error(), "--public-ip does not apply to oci node pools (only to civo)") {
		t.Errorf("--public-ip on oci: %v", err)
	}
	civo := createCluster(t, srv, "civo-flags", kpool.PlatformCivo)
	for _, flag := range [][]string{{"--zones", "a"}, {"--disk-size", "50"}, {"--spot"}, {"--ocpus", "2"}} {
		_, err := run(srv, "", append([]string{"nodepool", "create", "p", "--cluster", civo, "--machine-type", "g4s.kube.small"}, flag...)...)
		if err == nil || !strings.Contains(err.Error(), flag[0]+" does not apply to civo node pools") {
			t.Errorf("civo %s: %v", flag[0], err)
		}
	}

	t.Run("k3s has no node pools", func(t *testing.T) {
		k3s := createCluster(t, srv, "edge", kpool.PlatformK3s)
		_, err := run(srv, "", "nodepool", "create", "p", "--cluster", k3s, "--machine-type", "x")
		if errCodeOf(err) != kpool.CodeNotImplemented {
			t.Errorf("error %v", err)
		}
	})
}

func TestNodePoolCreateFromFile(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	cluster := createCluster(t, srv, "gke", kpool.PlatformGCP)
	file := writeFile(t, "pool.yaml", `
name: from-file
cluster_id: `+cluster+`
spec:
  nodeCount: 2
  labels: {a: "1"}
  taints: [{key: old, effect: NoSchedule}]
  platform:
    gcp: {machineType: e2-small, zones: [us-central1-a]}
`)
	p := decode[kpool.NodePool](t, srv, "nodepool", "create", "renamed", "-f", file, "--count", "3", "--label", "b=2", "--machine-type", "n2-standard-8", "--taint", "new:NoExecute")
	g := p.Spec.Platform.GCP
	if p.Name != "renamed" || p.ClusterID != cluster || p.Spec.Count() != 3 ||
		!reflect.DeepEqual(p.Spec.Labels, map[string]string{"a": "1", "b": "2"}) ||
		!reflect.DeepEqual(p.Spec.Taints, []kpool.Taint{{Key: "new", Effect: "NoExecute"}}) ||
		g == nil || g.MachineType != "n2-standard-8" || !reflect.DeepEqual(g.Zones, []string{"us-central1-a"}) {
		b, _ := json.Marshal(p)
		t.Errorf("created %s", b)
	}
	// Without --cluster and without a file there is no cluster.
	if _, err := run(srv, "", "nodepool", "create", "p", "--machine-type", "x"); err == nil || !strings.Contains(err.Error(), "--cluster is required") {
		t.Errorf("no cluster: %v", err)
	}
}

func TestLists(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	a := createCluster(t, srv, "alpha", kpool.PlatformGCP)
	b := createCluster(t, srv, "beta", kpool.PlatformAWS)
	createCluster(t, srv, "gamma", kpool.PlatformCivo)
	createPool(t, srv, "fixed", a, "--machine-type", "e2-small", "--count", "3")
	createPool(t, srv, "auto", a, "--machine-type", "e2-small", "--min", "1", "--max", "5", "--count", "2")
	createPool(t, srv, "other", b, "--machine-type", "m5.large")

	out := mustRun(t, srv, "cluster", "list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !reflect.DeepEqual(strings.Fields(lines[0]), []string{"ID", "NAME", "PLATFORM", "TEAM", "PHASE", "REACHABLE", "AGE"}) {
		t.Fatalf("cluster list:\n%s", out)
	}
	for i, want := range [][]string{{a, "alpha", "gcp", "-", "Active"}, {b, "beta", "aws", "-", "Active"}} {
		if got := strings.Fields(lines[i+1])[:5]; !reflect.DeepEqual(got, want) {
			t.Errorf("row %d: %v, want %v", i, got, want)
		}
	}

	pagesTests := []struct {
		args      []string
		n, total  int
		wantNext  bool
		wantFirst string
	}{
		{[]string{"--limit", "2"}, 2, 3, true, "alpha"},
		{[]string{"--limit", "2", "--offset", "1"}, 2, 3, false, "beta"},
		{[]string{"--limit", "1", "--all"}, 3, 3, false, "alpha"},
		{[]string{"--offset", "1", "--limit", "1", "--all"}, 2, 3, false, "beta"},
	}
	for _, tt := range pagesTests {
		l := decode[api.ClusterList](t, srv, append([]string{"cluster", "list"}, tt.args...)...)
		if len(l.Clusters) != tt.n || l.Total != tt.total || (l.Next != "") != tt.wantNext || l.Clusters[0].Name != tt.wantFirst {
			t.Errorf("cluster list %v: %d clusters from %s, total %d, next %q", tt.args, len(l.Clusters), l.Clusters[0].Name, l.Total, l.Next)
		}
	}
	var yl api.ClusterList
	if err := yaml.Unmarshal([]byte(mustRun(t, srv, "cluster", "list", "-o", "yaml")), &yl); err != nil || len(yl.Clusters) != 3 || yl.Clusters[2].Name != "gamma" {
		t.Errorf("yaml list: %v %+v", err, yl)
	}

	out = mustRun(t, srv, "nodepool", "list", "--cluster", a)
	lines = strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !reflect.DeepEqual(strings.Fields(lines[0]), []string{"ID", "NAME", "CLUSTER", "PLATFORM", "MACHINE", "NODES", "PHASE", "GEN", "AGE"}) {
		t.Fatalf("nodepool list:\n%s", out)
	}
	for i, want := range [][]string{{"fixed", a, "gcp", "e2-small", "3", "Pending", "1/0"}, {"auto", a, "gcp", "e2-small", "1-5", "(2)", "Pending", "1/0"}} {
		if got := strings.Fields(lines[i+1]); !reflect.DeepEqual(got[1:len(want)+1], want) {
			t.Errorf("row %d: %v, want %v", i, got, want)
		}
	}

	poolLists := []struct {
		args []string
		want []string
	}{
		{nil, []string{"fixed", "auto", "other"}},
		{[]string{"--cluster", b}, []string{"other"}},
		{[]string{"--status", "Pending", "--limit", "2", "--all"}, []string{"fixed", "auto", "other"}},
		{[]string{"--health", "healthy"}, []string{}},
	}
	for _, tt := range poolLists {
		l := decode[api.NodePoolList](t, srv, append([]string{"nodepool", "list"}, tt.args...)...)
		got := []string{}
		for _, p := range l.NodePools {
			got = append(got, p.Name)
		}
		if !reflect.DeepEqual(got, tt.want) || l.Total != len(tt.want) {
			t.Errorf("nodepool list %v: %v (total %d), want %v", tt.args, got, l.Total, tt.want)
		}
	}
	stdout, stderr, err := execute("", "nodepool", "list", "--health", "unhealthy", "--server", srv, "--user", testUser)
	if err != nil || stdout != "" || !strings.Contains(stderr, "No node pools found") {
		t.Errorf("empty list: %v %q %q", err, stdout, stderr)
	}
	if _, err := run(srv, "", "nodepool", "list", "--status", "bogus"); errCodeOf(err) != kpool.CodeValidation {
		t.Errorf("bad status: %v", err)
	}
}

func TestUpdateAndScale(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	cluster := createCluster(t, srv, "gke", kpool.PlatformGCP)
	p := createPool(t, srv, "web", cluster, "--machine-type", "e2-small", "--label", "keep=1")
	id, rv0 := p.ID, p.ResourceVersion

	steps := []struct {
		name string
		args []string
		gen  int64
		ok   func(p *kpool.NodePool) bool
	}{
		{"count", []string{"update", id, "--count", "3"}, 2,
			func(p *kpool.NodePool) bool {
				return p.Spec.Count() == 3 && p.Spec.Platform.GCP.MachineType == "e2-small"
			}},
		{"machine type and label", []string{"update", id, "--machine-type", "n2-standard-4", "--label", "x=y"}, 3,
			func(p *kpool.NodePool) bool {
				return p.Spec.Platform.GCP.MachineType == "n2-standard-4" && p.Spec.Labels["x"] == "y" && p.Spec.Labels["keep"] == "1"
			}},
		{"no-op", []string{"update", id, "--count", "3"}, 3, func(p *kpool.NodePool) bool { return true }},
		{"scale bounds", []string{"scale", id, "--min", "1", "--max", "5"}, 4,
			func(p *kpool.NodePool) bool {
				return p.Spec.Autoscaling.On() && *p.Spec.Autoscaling.MaxNodes == 5 && p.Spec.Count() == 3
			}},
		{"scale count", []string{"scale", id, "--count", "4"}, 5, func(p *kpool.NodePool) bool { return p.Spec.Count() == 4 }},
		{"patch removes a label", []string{"update", id, "-f", "-", "--patch"}, 6,
			func(p *kpool.NodePool) bool { _, ok := p.Spec.Labels["x"]; return !ok && p.Spec.Labels["keep"] == "1" }},
	}
	for _, s := range steps {
		out, err := run(srv, "spec: {labels: {x: null}}", append([]string{"nodepool"}, append(s.args, "-o", "json")...)...)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		var got kpool.NodePool
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		if got.Generation != s.gen || !s.ok(&got) {
			t.Errorf("%s: generation %d, want %d: %s", s.name, got.Generation, s.gen, out)
		}
	}

	// The output of get, edited, is a valid update body; its
	// resource_version makes the update conditional.
	current := mustRun(t, srv, "nodepool", "get", id, "-o", "yaml")
	edited := writeFile(t, "pool.yaml", strings.Replace(current, "nodeCount: 4", "nodeCount: 2", 1))
	out := mustRun(t, srv, "nodepool", "update", id, "-f", edited)
	if f := strings.Fields(strings.Split(strings.TrimSpace(out), "\n")[1]); f[5] != "1-5" || f[6] != "(2)" || f[8] != "7/0" {
		t.Errorf("update -f:\n%s", out)
	}
	if _, err := run(srv, "", "nodepool", "update", id, "-f", edited); errCodeOf(err) != kpool.CodeConflict {
		t.Errorf("update with the same file again: %v", err)
	}

	conflicts := [][]string{
		{"update", id, "--count", "2", "--resource-version", rv0},
		{"scale", id, "--count", "2", "--resource-version", rv0},
	}
	for _, args := range conflicts {
		if _, err := run(srv, "", append([]string{"nodepool"}, args...)...); errCodeOf(err) != kpool.CodeConflict {
			t.Errorf("%v: %v, want CONFLICT", args, err)
		}
	}
	rv := decode[kpool.NodePool](t, srv, "nodepool", "get", id).ResourceVersion
	if p := decode[kpool.NodePool](t, srv, "nodepool", "update", id, "--count", "5", "--resource-version", rv); p.Generation != 8 {
		t.Errorf("conditional update: generation %d", p.Generation)
	}

	errs := []struct {
		args  []string
		stdin string
		want  string
	}{
		{[]string{"update", id}, "", "nothing to update"},
		{[]string{"update", id, "--patch", "--count", "2"}, "", "--patch sends -f FILE"},
		{[]string{"update", id, "-f", "-"}, "id: 01a20330-0000-7000-8000-000000000000\n", "the file is node pool 01a20330-0000-7000-8000-000000000000"},
		{[]string{"update", id, "--taint", "bad"}, "", `--taint "bad": use KEY=VALUE:EFFECT`},
		{[]string{"update", id, "--mode", "both"}, "", `--mode "both": use system or user`},
		{[]string{"scale", id}, "", "give --count N"},
		{[]string{"scale", id, "--min", "6"}, "", "Validation failed"},
	}
	for _, tt := range errs {
		if _, err := run(srv, tt.stdin, append([]string{"nodepool"}, tt.args...)...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: %v, want %q", tt.args, err, tt.want)
		}
	}
}

// report sends a controller's report on a pool.
func report(t *testing.T, srv, pool string, gen int64, conds ...kpool.Condition) {
	t.Helper()
	reportAs(t, srv, pool, gen, `{"nodes": 3}`, conds...)
}

func TestGetAndStatus(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	cluster := createCluster(t, srv, "gke", kpool.PlatformGCP)
	p := createPool(t, srv, "web", cluster, "--machine-type", "n2-standard-4", "--zones", "us-central1-a,us-central1-b",
		"--min", "1", "--max", "5", "--count", "2", "--label", "team=web", "--taint", "dedicated=web:NoSchedule", "--kubernetes-version", "1.30")
	report(t, srv, p.ID, 1, kpool.Condition{Type: "Ready", Status: "True", Reason: "NodesReady", Message: "3 nodes ready"})

	views := []struct {
		args []string
		want []string
	}{
		{[]string{"cluster", "get", cluster}, []string{"Name:", "gke", "Platform:", "gcp", "projectId:", "my-project-1", "Phase:", "Active", "by " + testUser}},
		{[]string{"nodepool", "get", p.ID}, []string{"Cluster:", cluster, "Machine type:", "n2-standard-4", "2 (autoscaling 1-5)",
			"us-central1-a, us-central1-b", "team=web", "dedicated=web:NoSchedule", "Kubernetes version:", "1.30",
			"Generation:", "1 (observed 1)", "Ready (healthy)", "Resource version:"}},
		{[]string{"nodepool", "status", p.ID}, []string{"Phase:", "Ready (healthy)", "Observed generation:", "1 of 1 controllers ready",
			"TYPE", "LAST TRANSITION", "AllControllersReady", "Controller gcp-nodepool-controller:", "NodesReady", "3 nodes ready", `{"nodes":3}`}},
	}
	for _, v := range views {
		out := mustRun(t, srv, v.args...)
		for _, w := range v.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: no %q in\n%s", v.args, w, out)
			}
		}
	}

	doc := decode[service.StatusDocument](t, srv, "nodepool", "status", p.ID)
	if doc.NodePoolID != p.ID || doc.Status.Phase != kpool.PhaseReady || len(doc.ControllerStatus) != 1 ||
		doc.ControllerStatus[0].ControllerName != "gcp-nodepool-controller" || doc.ControllerStatus[0].ObservedGeneration != 1 {
		t.Errorf("status %+v", doc)
	}
	if got := decode[kpool.NodePool](t, srv, "nodepool", "get", p.ID); got.Status.ObservedGeneration != 1 || got.Status.Phase != kpool.PhaseReady {
		t.Errorf("get %+v", got.Status)
	}
}

func TestDelete(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	cluster := createCluster(t, srv, "gke", kpool.PlatformGCP)
	fresh := createPool(t, srv, "fresh", cluster, "--machine-type", "e2-small")
	reported := createPool(t, srv, "reported", cluster, "--machine-type", "e2-small")
	report(t, srv, reported.ID, 1, kpool.Condition{Type: "Ready", Status: "True"})

	if out := mustRun(t, srv, "nodepool", "delete", fresh.ID); out != "nodepool "+fresh.ID+" deleted\n" {
		t.Errorf("delete: %q", out)
	}
	if _, err := run(srv, "", "nodepool", "get", fresh.ID); errCodeOf(err) != kpool.CodeNotFound {
		t.Errorf("get deleted pool: %v", err)
	}
	if _, err := run(srv, "", "cluster", "delete", cluster); errCodeOf(err) != kpool.CodeConflict {
		t.Errorf("delete cluster with pools: %v", err)
	}
	want := "cluster " + cluster + " is being deleted (waiting for 1 node pools)\n"
	if out := mustRun(t, srv, "cluster", "delete", cluster, "--force"); out != want {
		t.Errorf("delete --force: %q, want %q", out, want)
	}
	if c := decode[kpool.Cluster](t, srv, "cluster", "get", cluster); c.Status.Phase != kpool.ClusterDeleting {
		t.Errorf("cluster %+v", c.Status)
	}
	if out := mustRun(t, srv, "nodepool", "status", reported.ID); !strings.Contains(out, "Deleting") {
		t.Errorf("status of a deleting pool:\n%s", out)
	}

	empty := createCluster(t, srv, "empty", kpool.PlatformCivo)
	if out := mustRun(t, srv, "cluster", "delete", empty); out != "cluster "+empty+" deleted\n" {
		t.Errorf("delete empty cluster: %q", out)
	}
	other := createCluster(t, srv, "other", kpool.PlatformGCP)
	p := createPool(t, srv, "p", other, "--machine-type", "e2-small")
	report(t, srv, p.ID, 1, kpool.Condition{Type: "Ready", Status: "True"})
	if out := mustRun(t, srv, "nodepool", "delete", p.ID); !strings.HasPrefix(out, "nodepool "+p.ID+" is being deleted (waiting for the pool to be deleted by gcp-nodepool-controller") {
		t.Errorf("delete reported pool: %q", out)
	}
}

func TestErrors(t *testing.T) {
	srv := newServer(t)

	t.Run("server validation error", func(t *testing.T) {
		_, err := run(srv, "", "cluster", "create", "bad", "--platform", "gcp", "--project-id", "BAD", "--location", "us-central1", "--cluster-name", "c")
		var e *kpool.Error
		if !errors.As(err, &e) || e.Code != kpool.CodeValidation || len(e.Fields) != 1 || e.Fields[0].Field != "spec.platform.gcp.projectId" {
			t.Fatalf("error %#v", err)
		}
		f, err := os.CreateTemp(t.TempDir(), "stderr")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if code := exitCode(e, f); code != 1 {
			t.Errorf("exit code %d", code)
		}
		b, _ := os.ReadFile(f.Name())
		if !strings.HasPrefix(string(b), "Error: VALIDATION_ERROR: Validation failed\n  spec.platform.gcp.projectId: ") {
			t.Errorf("printed %q", b)
		}
	})

	t.Run("missing user", func(t *testing.T) {
		t.Setenv("KPOOL_USER", "")
		t.Setenv("KPOOL_TOKEN", "")
		_, _, err := execute("", "cluster", "list", "--server", srv)
		if err == nil || !strings.HasPrefix(err.Error(), "set KPOOL_TOKEN (or --token) to your API token, or,") {
			t.Errorf("error %v", err)
		}
		// A command group prints its help without needing a user.
		if out, _, err := execute("", "nodepool"); err != nil || !strings.Contains(out, "Available Commands") {
			t.Errorf("kpool nodepool: %v\n%s", err, out)
		}
	})

	t.Run("user from the environment", func(t *testing.T) {
		t.Setenv("KPOOL_USER", testUser)
		t.Setenv("KPOOL_SERVER", srv)
		if _, _, err := execute("", "nodepool", "list", "-o", "json"); err != nil {
			t.Error(err)
		}
	})

	usage := []struct {
		name string
		args []string
		want string
	}{
		{"bad output", []string{"cluster", "list", "-o", "xml"}, `--output "xml" is not a format: use table, wide, json, yaml, name or jsonpath=TEMPLATE`},
		{"bad int flag", []string{"nodepool", "scale", "x", "--count", "many"}, `invalid argument "many" for "--count"`},
		{"unknown flag", []string{"cluster", "list", "--colour"}, "unknown flag: --colour"},
		{"no ID", []string{"nodepool", "get"}, "kpool nodepool get: give the node pool ID"},
		{"two IDs", []string{"cluster", "delete", "a", "b"}, "takes one cluster ID, got 2 arguments"},
		{"two names", []string{"cluster", "create", "a", "b"}, "takes one cluster NAME, got 2 arguments"},
		{"bad label", []string{"nodepool", "update", "01a20330-0000-7000-8000-000000000000", "--label", "novalue"}, `--label "novalue": use KEY=VALUE`},
		{"unknown subcommand", []string{"nodepool", "lst"}, `unknown command "lst" for "kpool nodepool"`},
		{"bad server", []string{"cluster", "list", "--server", "localhost:8080"}, `--server "localhost:8080" is not a URL`},
	}
	for _, tt := range usage {
		t.Run(tt.name, func(t *testing.T) {
			// These fail before any request: no --server is needed.
			_, _, err := execute("", append(tt.args, "--user", testUser)...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}

	codes := []struct {
		args []string
		code string
	}{
		{[]string{"cluster", "get", "01a20330-0000-7000-8000-000000000000"}, kpool.CodeNotFound},
		{[]string{"nodepool", "status", "nope"}, kpool.CodeNotFound},
		{[]string{"nodepool", "create", "p", "--cluster", "01a20330-0000-7000-8000-000000000000", "--machine-type", "x"}, kpool.CodeNotFound},
		{[]string{"cluster", "list", "--limit", "1000"}, kpool.CodeValidation},
	}
	for _, tt := range codes {
		if _, err := run(srv, "", tt.args...); errCodeOf(err) != tt.code {
			t.Errorf("%v: %v, want %s", tt.args, err, tt.code)
		}
	}
}

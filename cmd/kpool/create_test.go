package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/kpool/kpool"
)

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
		if len(lines) != 2 || !reflect.DeepEqual(strings.Fields(lines[0]), []string{"NAME", "PLATFORM", "TEAM", "PHASE", "REACHABLE", "AGE"}) ||
			!reflect.DeepEqual(strings.Fields(lines[1])[:4], []string{"gke-table", "gcp", "-", "Active"}) {
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
		{"kubeconfig without named credentials", append([]string{"x"}, append(flagsFor(kpool.PlatformGCP, "x"), "--kubeconfig", "prod-kube")...), "",
			"spec.kubeconfig: this kpool has no named credentials"},
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

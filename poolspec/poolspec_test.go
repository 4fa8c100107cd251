package poolspec

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider/catalog"
)

var builder = NewBuilder(catalog.Registry())

func TestSpec(t *testing.T) {
	t.Parallel()
	azure := Target{Platform: kpool.PlatformAzure, Region: "westeurope"}
	gcp := Target{Platform: kpool.PlatformGCP, Region: "us-central1"}
	oci := Target{Platform: kpool.PlatformOCI, Region: "us-ashburn-1"}
	civo := Target{Platform: kpool.PlatformCivo, Region: "LON1"}
	for _, tt := range []struct {
		name string
		s    Settings
		t    Target
		want string // the spec as JSON, or the error's text
	}{
		{"nothing", Settings{}, Target{}, `{}`},
		{"counts and bounds", Settings{NodeCount: new(3), MinNodes: new(1), MaxNodes: new(5)}, Target{},
			`{"autoscaling":{"enabled":true,"maxNodes":5,"minNodes":1},"nodeCount":3}`},
		{"one bound enables autoscaling", Settings{MaxNodes: new(4)}, Target{}, `{"autoscaling":{"enabled":true,"maxNodes":4}}`},
		{"mode and version", Settings{Mode: new("system"), KubernetesVersion: new("1.31")}, Target{}, `{"kubernetesVersion":"1.31","mode":"system"}`},
		{"a mode that is none", Settings{Mode: new("spot")}, Target{}, `--mode "spot": use system or user`},
		{"labels, tags and taints", Settings{Labels: []string{"team=web", "tier="}, Tags: []string{"cost=a"},
			Taints: []string{"dedicated=ml:NoSchedule", "gpu:NoExecute"}}, Target{},
			`{"labels":{"team":"web","tier":""},"tags":{"cost":"a"},"taints":[{"key":"dedicated","value":"ml","effect":"NoSchedule"},{"key":"gpu","effect":"NoExecute"}]}`},
		{"no taints", Settings{Taints: []string{}}, Target{}, `{"taints":[]}`},
		{"a label without =", Settings{Labels: []string{"team"}}, Target{}, `--label "team": use KEY=VALUE`},
		{"a tag without a key", Settings{Tags: []string{"=x"}}, Target{}, `--tag "=x": use KEY=VALUE`},
		{"a taint without effect", Settings{Taints: []string{"a=b"}}, Target{}, `--taint "a=b": use KEY=VALUE:EFFECT`},
		{"a taint without key", Settings{Taints: []string{"=b:NoSchedule"}}, Target{}, `--taint "=b:NoSchedule": the key is empty`},
		{"the mode is checked first", Settings{Mode: new("x"), Labels: []string{"y"}}, Target{}, `--mode "x"`},

		{"machine settings into the block's fields", Settings{MachineType: new("Standard_D4s_v5"), DiskSize: new(64), Spot: new(true)}, azure,
			`{"platform":{"azure":{"osDiskSizeGB":64,"spotInstances":true,"vmSize":"Standard_D4s_v5"}}}`},
		{"another platform's fields", Settings{MachineType: new("e2-small"), Spot: new(false)}, gcp,
			`{"platform":{"gcp":{"machineType":"e2-small","preemptible":false}}}`},
		{"logical zones", Settings{Zones: []string{"1", "westeurope-2"}}, azure,
			`{"platform":{"azure":{"availabilityZones":[]}},"zones":["1","westeurope-2"]}`},
		{"the provider's zones", Settings{Zones: []string{"us-central1-a"}}, gcp,
			`{"platform":{"gcp":{"zones":["us-central1-a"]}},"zones":[]}`},
		{"no zones", Settings{Zones: []string{}}, gcp, `{"platform":{"gcp":{"zones":[]}},"zones":[]}`},
		{"both kinds of zones", Settings{Zones: []string{"1", "us-central1-b"}}, gcp,
			"--zones 1,us-central1-b: give logical zones (1, 2, 3 or us-central1-1…) or gcp's own zone names (us-central1-b), not both"},
		{"both kinds of zones, no region", Settings{Zones: []string{"1", "b"}}, Target{Platform: kpool.PlatformGCP}, "(1, 2, 3 or <region>-1…)"},
		{"a field the block lacks", Settings{MachineType: new("g4s.kube.medium"), Zones: []string{"1"}}, civo,
			"--zones does not apply to civo node pools: their platform block has no such field"},
		{"a provider's own settings", Settings{MachineType: new("VM.Standard.E4.Flex"), Own: map[string]any{"ocpus": 2.0, "image-id": "ocid1.image"}}, oci,
			`{"platform":{"oci":{"imageId":"ocid1.image","ocpus":2,"shape":"VM.Standard.E4.Flex"}}}`},
		{"another provider's setting", Settings{Own: map[string]any{"public-ip": true}}, oci, "--public-ip does not apply to oci node pools (only to civo)"},
		{"a platform without pools", Settings{MachineType: new("x"), NodeCount: new(1)}, Target{Platform: kpool.PlatformK3s}, `{"nodeCount":1}`},

		{"the update strategy, enumerations in any case", Settings{Strategy: Strategy{Replacement: new("surge"), MaxSurge: new("33%"),
			MaxUnavailable: new("1"), DrainTimeout: new("45m"), Soak: new("5m"), OnStuck: new("WAIT")}}, Target{},
			`{"updateStrategy":{"drainTimeout":"45m","maxSurge":"33%","maxUnavailable":"1","onStuck":"Wait","replacement":"Surge","soak":"5m"}}`},
		{"one strategy setting keeps the others", Settings{Strategy: Strategy{Replacement: new("Refuse")}}, Target{}, `{"updateStrategy":{"replacement":"Refuse"}}`},
		{"a replacement that is none", Settings{Strategy: Strategy{Replacement: new("recreate")}}, Target{}, `--replacement "recreate": use Refuse or Surge`},
		{"an on-stuck that is none", Settings{Strategy: Strategy{OnStuck: new("retry")}}, Target{}, `--on-stuck "retry": use Stop or Wait or Force`},
		{"a drain timeout that is no duration", Settings{Strategy: Strategy{DrainTimeout: new("30")}}, Target{}, `--drain-timeout "30": give a duration such as 30m or 1h`},
		{"a soak that is no duration", Settings{Strategy: Strategy{Soak: new("soon")}}, Target{}, `--soak "soon"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := builder.Spec(&tt.s, tt.t)
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				b, err := json.Marshal(spec)
				if err != nil {
					t.Fatal(err)
				}
				got = string(b)
			}
			if !strings.HasPrefix(tt.want, "{") && strings.Contains(got, tt.want) {
				return // the error wanted
			}
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestSettings(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name            string
		s               Settings
		platform, empty bool
	}{
		{"none", Settings{}, false, true},
		{"a count", Settings{NodeCount: new(1)}, false, false},
		{"labels", Settings{Labels: []string{}}, false, false},
		{"zones, even none", Settings{Zones: []string{}}, true, false},
		{"a provider's own", Settings{Own: map[string]any{"image-id": "x"}}, true, false},
		{"no provider's own", Settings{Own: map[string]any{}}, false, true},
		{"a strategy setting", Settings{Strategy: Strategy{Soak: new("1m")}}, false, false},
	} {
		if tt.s.Platform() != tt.platform || tt.s.Empty() != tt.empty {
			t.Errorf("%s: Platform %v, Empty %v; want %v, %v", tt.name, tt.s.Platform(), tt.s.Empty(), tt.platform, tt.empty)
		}
	}
}

func TestOwnFlags(t *testing.T) {
	t.Parallel()
	got := map[string]string{}
	for _, f := range builder.OwnFlags() {
		got[f.Name] = f.Field + " " + joinTypes(f.Platforms)
	}
	want := map[string]string{"image-id": "imageId oci", "ocpus": "ocpus oci", "memory-gb": "memoryInGBs oci", "public-ip": "publicIpNodePool civo"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("--%s: %q, want %q", k, got[k], v)
		}
	}
}

// server is a Reader of one cluster and one pool that counts its reads.
type server struct {
	cluster *kpool.Cluster
	pool    *kpool.NodePool
	reads   []string
}

func (s *server) Cluster(_ context.Context, id string) (*kpool.Cluster, error) {
	s.reads = append(s.reads, "cluster "+id)
	if id != s.cluster.ID {
		return nil, errors.New("no such cluster")
	}
	return s.cluster, nil
}

func (s *server) NodePool(_ context.Context, id string) (*kpool.NodePool, error) {
	s.reads = append(s.reads, "pool "+id)
	return s.pool, nil
}

// TestReads: the cluster and the pool are read only when a setting needs
// them, and the cluster's region only for zones.
func TestReads(t *testing.T) {
	t.Parallel()
	cluster := &kpool.Cluster{ID: "c1", Spec: kpool.ClusterSpec{Platform: kpool.ClusterPlatform{Type: kpool.PlatformAzure,
		Azure: &kpool.AzureCluster{Location: "westeurope"}}}}
	pool := &kpool.NodePool{ID: "p1", ClusterID: "c1", Spec: kpool.NodePoolSpec{Platform: kpool.NodePoolPlatform{Type: kpool.PlatformAzure}}}
	for _, tt := range []struct {
		name  string
		pool  bool // ForPool, or ForCluster
		s     Settings
		reads string
		want  string
	}{
		{"a count needs nothing", false, Settings{NodeCount: new(2)}, "", `{"nodeCount":2}`},
		{"a create's machine type", false, Settings{MachineType: new("D4")}, "cluster c1", `{"platform":{"azure":{"vmSize":"D4"}}}`},
		{"a create's zones", false, Settings{Zones: []string{"westeurope-1"}}, "cluster c1", `{"platform":{"azure":{"availabilityZones":[]}},"zones":["westeurope-1"]}`},
		{"an update's count", true, Settings{NodeCount: new(2)}, "", `{"nodeCount":2}`},
		{"an update's machine type", true, Settings{MachineType: new("D8")}, "pool p1", `{"platform":{"azure":{"vmSize":"D8"}}}`},
		{"an update's zones", true, Settings{Zones: []string{"1"}}, "pool p1, cluster c1", `{"platform":{"azure":{"availabilityZones":[]}},"zones":["1"]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := &server{cluster: cluster, pool: pool}
			var spec map[string]any
			var err error
			if tt.pool {
				spec, err = builder.ForPool(context.Background(), srv, "p1", &tt.s)
			} else {
				spec, err = builder.ForCluster(context.Background(), srv, "c1", &tt.s)
			}
			b, _ := json.Marshal(spec)
			if err != nil || string(b) != tt.want || strings.Join(srv.reads, ", ") != tt.reads {
				t.Errorf("got %s, %v after reading %v; want %s after %q", b, err, srv.reads, tt.want, tt.reads)
			}
		})
	}
	if _, err := builder.ForCluster(context.Background(), &server{cluster: cluster}, "c2", &Settings{Spot: new(true)}); err == nil {
		t.Error("a cluster that cannot be read")
	}
}

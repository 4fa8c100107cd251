package kpool_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	. "github.com/kpool/kpool"
	"github.com/kpool/kpool/internal/jsondoc"
	"github.com/kpool/kpool/provider/catalog"
)

// platforms are every platform kpool knows, as kpool serve checks against
// them.
var platforms = catalog.Registry()

// clusters of every platform, valid.
var testClusters = map[PlatformType]string{
	PlatformAzure: `{"platform":{"type":"azure","azure":{"subscriptionId":"0b1f6471-1bf0-4dda-aec3-111122223333","resourceGroup":"rg-prod","clusterName":"aks-prod","location":"westeurope"}}}`,
	PlatformAWS:   `{"platform":{"type":"aws","aws":{"region":"us-west-2","clusterName":"eks-prod","nodeRoleArn":"arn:aws:iam::123456789012:role/eks-nodes","subnets":{"us-west-2a":"subnet-0123456789abcdef0","us-west-2b":"subnet-0123456789abcdef1"}}}}`,
	PlatformGCP:   `{"platform":{"type":"gcp","gcp":{"projectId":"acme-prod","location":"us-central1","clusterName":"gke-prod"}}}`,
	PlatformOCI:   `{"platform":{"type":"oci","oci":{"region":"us-ashburn-1","compartmentId":"ocid1.compartment.oc1..aaaa","clusterId":"ocid1.cluster.oc1.iad.aaaa","subnets":{"Uocm:US-ASHBURN-AD-1":"ocid1.subnet.oc1.iad.aaaa"}}}}`,
	PlatformCivo:  `{"platform":{"type":"civo","civo":{"region":"LON1","clusterId":"7c9e6679-7425-40de-944b-e07fc1f90ae7"}}}`,
	PlatformK3s:   `{"platform":{"type":"k3s"}}`,
}

// minimal valid pool specs per platform.
var testPools = map[PlatformType]string{
	PlatformAzure: `{"platform":{"azure":{"vmSize":"Standard_D4s_v5"}},"nodeCount":3}`,
	PlatformAWS:   `{"platform":{"aws":{"instanceType":"m5.xlarge"}},"nodeCount":3}`,
	PlatformGCP:   `{"platform":{"gcp":{"machineType":"n1-standard-4"}},"nodeCount":3}`,
	PlatformOCI:   `{"platform":{"oci":{"shape":"VM.Standard.E4.Flex","ocpus":2,"imageId":"ocid1.image.oc1.iad.aaaa"}},"nodeCount":3}`,
	PlatformCivo:  `{"platform":{"civo":{"size":"g4s.kube.medium"}},"nodeCount":3}`,
}

func testCluster(t *testing.T, pt PlatformType) *Cluster {
	t.Helper()
	c := &Cluster{Name: "prod"}
	if err := decodeStrict([]byte(testClusters[pt]), &c.Spec, "spec"); err != nil {
		t.Fatal(err)
	}
	if err := ValidateCluster(platforms, c); err != nil {
		t.Fatalf("test cluster %s invalid: %v", pt, err)
	}
	return c
}

// checkPool decodes base merged with patch, defaults and validates it, and
// returns the fields at fault.
func checkPool(t *testing.T, pt PlatformType, name, patch string) []FieldError {
	t.Helper()
	merged, err := jsondoc.Merge([]byte(testPools[pt]), []byte(patch), true)
	if err != nil {
		t.Fatalf("bad test patch %s: %v", patch, err)
	}
	p := &NodePool{Name: name}
	if err := decodeStrict(merged, &p.Spec, "spec"); err != nil {
		return err.(*Error).Fields
	}
	c := testCluster(t, pt)
	DefaultNodePoolSpec(&p.Spec, c, platforms.Profile(pt).Region(&c.Spec))
	if err := ValidateNodePool(platforms, p, c); err != nil {
		return err.(*Error).Fields
	}
	return nil
}

func TestValidateNodePool(t *testing.T) {
	long := strings.Repeat("a", 64)
	manyTaints := make([]string, 51)
	for i := range manyTaints {
		manyTaints[i] = fmt.Sprintf(`{"key":"k%d","effect":"NoSchedule"}`, i)
	}
	manyTags := make([]string, 51)
	for i := range manyTags {
		manyTags[i] = fmt.Sprintf(`"t%d":"v"`, i)
	}
	labels := func(n int, key string, value string) string {
		l := make([]string, n)
		for i := range l {
			l[i] = fmt.Sprintf(`"%s%d":%q`, key, i, value)
		}
		return "{" + strings.Join(l, ",") + "}"
	}
	// A key of about 250 bytes (a 239-byte DNS prefix) and a 63-byte value: 60
	// such labels are under MaxLabels but over MaxLabelBytes.
	prefix := strings.Repeat(strings.Repeat("d", 59)+".", 4)[:239] + "/k"
	tests := []struct {
		name     string
		platform PlatformType
		pool     string // pool name; "" means "workers"
		patch    string
		want     string // the field at fault; "" means valid
	}{
		// names
		{"name ok", PlatformGCP, "gpu-pool-1", `{}`, ""},
		{"name 63 chars", PlatformGCP, long[:63], `{}`, ""},
		{"name 64 chars", PlatformGCP, long, `{}`, "name"},
		{"name starts with digit", PlatformGCP, "1pool", `{}`, "name"},
		{"name upper case", PlatformGCP, "Workers", `{}`, "name"},
		{"name underscore", PlatformGCP, "gpu_pool", `{}`, "name"},
		{"name ends with dash", PlatformGCP, "pool-", `{}`, "name"},

		// platform type and blocks
		{"type inherited", PlatformAWS, "", `{"platform":{"type":null}}`, ""},
		{"type matches", PlatformAWS, "", `{"platform":{"type":"aws"}}`, ""},
		{"type differs", PlatformAWS, "", `{"platform":{"type":"gcp"}}`, "spec.platform.type"},
		{"other block", PlatformAWS, "", `{"platform":{"gcp":{"machineType":"n1-standard-4"}}}`, "spec.platform.gcp"},
		{"block missing", PlatformAWS, "", `{"platform":{"aws":null}}`, "spec.platform.aws"},

		// machine types on every platform

		// counts
		{"count 1000", PlatformGCP, "", `{"nodeCount":1000}`, ""},
		{"count 1001", PlatformGCP, "", `{"nodeCount":1001}`, "spec.nodeCount"},
		{"count 0 fixed", PlatformGCP, "", `{"nodeCount":0}`, "spec.nodeCount"},
		{"count negative", PlatformGCP, "", `{"nodeCount":-1}`, "spec.nodeCount"},
		{"count defaults to 1", PlatformGCP, "", `{"nodeCount":null}`, ""},
		{"count not integer", PlatformGCP, "", `{"nodeCount":2.5}`, "spec.nodeCount"},
		{"count a string", PlatformGCP, "", `{"nodeCount":"3"}`, "spec.nodeCount"},

		// autoscaling
		{"autoscaling ok", PlatformGCP, "", `{"autoscaling":{"enabled":true,"minNodes":1,"maxNodes":10}}`, ""},
		{"autoscaling min required", PlatformGCP, "", `{"autoscaling":{"enabled":true,"maxNodes":10}}`, "spec.autoscaling.minNodes"},
		{"autoscaling max required", PlatformGCP, "", `{"autoscaling":{"enabled":true,"minNodes":1}}`, "spec.autoscaling.maxNodes"},
		{"autoscaling min above max", PlatformGCP, "", `{"autoscaling":{"enabled":true,"minNodes":5,"maxNodes":4}}`, "spec.autoscaling.minNodes"},
		{"autoscaling count above max", PlatformGCP, "", `{"nodeCount":11,"autoscaling":{"enabled":true,"minNodes":1,"maxNodes":10}}`, "spec.nodeCount"},
		{"autoscaling count below min", PlatformGCP, "", `{"nodeCount":1,"autoscaling":{"enabled":true,"minNodes":2,"maxNodes":10}}`, "spec.nodeCount"},
		{"autoscaling max 0", PlatformGCP, "", `{"nodeCount":0,"autoscaling":{"enabled":true,"minNodes":0,"maxNodes":0}}`, "spec.autoscaling.maxNodes"},
		{"autoscaling max 1001", PlatformGCP, "", `{"autoscaling":{"enabled":true,"minNodes":1,"maxNodes":1001}}`, "spec.autoscaling.maxNodes"},
		{"count defaults to min", PlatformGCP, "", `{"nodeCount":null,"autoscaling":{"enabled":true,"minNodes":3,"maxNodes":5}}`, ""},
		{"disabled bounds ignored", PlatformGCP, "", `{"autoscaling":{"enabled":false,"minNodes":1,"maxNodes":2}}`, ""},
		{"disabled bounds inverted", PlatformGCP, "", `{"autoscaling":{"enabled":false,"minNodes":3,"maxNodes":2}}`, "spec.autoscaling.minNodes"},
		{"cpu target ok", PlatformGCP, "", `{"autoscaling":{"enabled":true,"minNodes":1,"maxNodes":5,"targetCPUUtilization":70}}`, ""},
		{"cpu target 0", PlatformGCP, "", `{"autoscaling":{"enabled":true,"minNodes":1,"maxNodes":5,"targetCPUUtilization":0}}`, "spec.autoscaling.targetCPUUtilization"},
		{"memory target 101", PlatformGCP, "", `{"autoscaling":{"enabled":true,"minNodes":1,"maxNodes":5,"targetMemoryUtilization":101}}`, "spec.autoscaling.targetMemoryUtilization"},
		{"delays ok", PlatformGCP, "", `{"autoscaling":{"enabled":true,"minNodes":1,"maxNodes":5,"scaleDownDelay":"10m","scaleUpDelay":"3m"}}`, ""},
		{"delay not a duration", PlatformGCP, "", `{"autoscaling":{"enabled":true,"minNodes":1,"maxNodes":5,"scaleDownDelay":"ten minutes"}}`, "spec.autoscaling.scaleDownDelay"},
		{"delay negative", PlatformGCP, "", `{"autoscaling":{"enabled":true,"minNodes":1,"maxNodes":5,"scaleUpDelay":"-1m"}}`, "spec.autoscaling.scaleUpDelay"},
		{"delay too long", PlatformGCP, "", `{"autoscaling":{"enabled":true,"minNodes":1,"maxNodes":5,"scaleUpDelay":"25h"}}`, "spec.autoscaling.scaleUpDelay"},

		// mode and version
		{"mode system", PlatformAzure, "", `{"mode":"system"}`, ""},
		{"mode bogus", PlatformAzure, "", `{"mode":"worker"}`, "spec.mode"},
		{"version ok", PlatformGCP, "", `{"kubernetesVersion":"1.30.4"}`, ""},
		{"version minor", PlatformGCP, "", `{"kubernetesVersion":"1.30"}`, ""},
		{"version bogus", PlatformGCP, "", `{"kubernetesVersion":"latest"}`, "spec.kubernetesVersion"},
		{"version with v", PlatformAzure, "", `{"kubernetesVersion":"v1.30.4"}`, ""},
		{"version oldest", PlatformAzure, "", `{"kubernetesVersion":"1.24"}`, ""},
		{"version newest", PlatformAWS, "", `{"kubernetesVersion":"1.40.2"}`, ""},
		{"version major 9", PlatformGCP, "", `{"kubernetesVersion":"9.99"}`, "spec.kubernetesVersion"},
		{"version major 2", PlatformAzure, "", `{"kubernetesVersion":"2.30"}`, "spec.kubernetesVersion"},
		{"version major 0", PlatformAzure, "", `{"kubernetesVersion":"0.30"}`, "spec.kubernetesVersion"},
		{"version minor too old", PlatformAzure, "", `{"kubernetesVersion":"1.2"}`, "spec.kubernetesVersion"},
		{"version minor 23", PlatformAWS, "", `{"kubernetesVersion":"1.23.17"}`, "spec.kubernetesVersion"},
		{"version minor 99", PlatformAzure, "", `{"kubernetesVersion":"1.99"}`, "spec.kubernetesVersion"},
		{"version minor huge", PlatformAzure, "", `{"kubernetesVersion":"1.99999999999999999999"}`, "spec.kubernetesVersion"},
		{"version banana", PlatformAWS, "", `{"kubernetesVersion":"banana"}`, "spec.kubernetesVersion"},
		{"a suffix without a patch", PlatformGCP, "", `{"kubernetesVersion":"1.30-gke.1"}`, "spec.kubernetesVersion"},
		{"version one number", PlatformAWS, "", `{"kubernetesVersion":"1"}`, "spec.kubernetesVersion"},
		{"version four numbers", PlatformAWS, "", `{"kubernetesVersion":"1.30.1.2"}`, "spec.kubernetesVersion"},

		// labels
		{"label ok", PlatformGCP, "", `{"labels":{"example.com/team":"platform","env":"prod"}}`, ""},
		{"label bad key", PlatformGCP, "", `{"labels":{"bad key":"x"}}`, "spec.labels.bad key"},
		{"label bad value", PlatformGCP, "", `{"labels":{"env":"has space"}}`, "spec.labels.env"},
		{"label long value", PlatformGCP, "", `{"labels":{"env":"` + long + `"}}`, "spec.labels.env"},
		{"label kompox", PlatformGCP, "", `{"labels":{"kompox.dev/node-pool":"x"}}`, "spec.labels.kompox.dev/node-pool"},
		{"label kubernetes.io", PlatformGCP, "", `{"labels":{"kubernetes.io/role":"x"}}`, "spec.labels.kubernetes.io/role"},
		{"label node.kubernetes.io", PlatformGCP, "", `{"labels":{"node.kubernetes.io/instance-type":"x"}}`, "spec.labels.node.kubernetes.io/instance-type"},
		{"label k8s.io", PlatformGCP, "", `{"labels":{"k8s.io/x":"y"}}`, "spec.labels.k8s.io/x"},
		{"label node-restriction allowed", PlatformGCP, "", `{"labels":{"node-restriction.kubernetes.io/tier":"gold"}}`, ""},
		{"block label ok", PlatformGCP, "", `{"platform":{"gcp":{"labels":{"team":"a"}}},"labels":{"team":"a"}}`, ""},
		{"block label conflict", PlatformGCP, "", `{"platform":{"gcp":{"labels":{"team":"a"}}},"labels":{"team":"b"}}`, "spec.platform.gcp.labels.team"},
		{"labels 64", PlatformGCP, "", `{"labels":` + labels(64, "l", "v") + `}`, ""},
		{"labels 65", PlatformGCP, "", `{"labels":` + labels(65, "l", "v") + `}`, "spec.labels"},
		{"labels 10000", PlatformGCP, "", `{"labels":` + labels(10000, "l", "v") + `}`, "spec.labels"},
		{"labels big", PlatformGCP, "", `{"labels":` + labels(60, prefix, long[:63]) + `}`, "spec.labels"},
		{"labels 40 + block 40 alike", PlatformGCP, "", `{"labels":` + labels(40, "l", "v") + `,"platform":{"gcp":{"labels":` + labels(40, "l", "v") + `}}}`, ""},
		{"labels 40 + block 40 more", PlatformGCP, "", `{"labels":` + labels(40, "l", "v") + `,"platform":{"gcp":{"labels":` + labels(40, "b", "v") + `}}}`, "spec.labels"},
		{"block labels 65", PlatformGCP, "", `{"platform":{"gcp":{"labels":` + labels(65, "b", "v") + `}}}`, "spec.platform.gcp.labels"},
		{"block label reserved", PlatformOCI, "", `{"platform":{"oci":{"labels":{"kompox.dev/node-zone":"1"}}}}`, "spec.platform.oci.labels.kompox.dev/node-zone"},

		// taints
		{"taint ok", PlatformGCP, "", `{"taints":[{"key":"workload-type","value":"gpu","effect":"NoSchedule"}]}`, ""},
		{"taint no value", PlatformGCP, "", `{"taints":[{"key":"dedicated","effect":"NoExecute"}]}`, ""},
		{"taint bad effect", PlatformGCP, "", `{"taints":[{"key":"a","effect":"NoWay"}]}`, "spec.taints[0].effect"},
		{"taint missing effect", PlatformGCP, "", `{"taints":[{"key":"a"}]}`, "spec.taints[0].effect"},
		{"taint bad key", PlatformGCP, "", `{"taints":[{"key":"a b","effect":"NoSchedule"}]}`, "spec.taints[0].key"},
		{"taint missing key", PlatformGCP, "", `{"taints":[{"value":"x","effect":"NoSchedule"}]}`, "spec.taints[0].key"},
		{"taint bad value", PlatformGCP, "", `{"taints":[{"key":"a","value":"x y","effect":"NoSchedule"}]}`, "spec.taints[0].value"},
		{"taint duplicate", PlatformGCP, "", `{"taints":[{"key":"a","effect":"NoSchedule"},{"key":"a","value":"b","effect":"NoSchedule"}]}`, "spec.taints[1]"},
		{"taints 51", PlatformGCP, "", `{"taints":[` + strings.Join(manyTaints, ",") + `]}`, "spec.taints"},
		{"taint node.kubernetes.io", PlatformGCP, "", `{"taints":[{"key":"node.kubernetes.io/not-ready","effect":"NoSchedule"}]}`, "spec.taints[0].key"},
		{"taint node-role.kubernetes.io", PlatformAzure, "", `{"taints":[{"key":"node-role.kubernetes.io/control-plane","effect":"NoSchedule"}]}`, "spec.taints[0].key"},
		{"taint kubernetes.io", PlatformAWS, "", `{"taints":[{"key":"kubernetes.io/arch","value":"arm64","effect":"NoSchedule"}]}`, "spec.taints[0].key"},
		{"taint k8s.io", PlatformAWS, "", `{"taints":[{"key":"k8s.io/x","effect":"NoExecute"}]}`, "spec.taints[0].key"},
		{"taint kompox", PlatformCivo, "", `{"taints":[{"key":"kompox.dev/node-pool","value":"x","effect":"NoSchedule"}]}`, "spec.taints[0].key"},
		{"taint second reserved", PlatformGCP, "", `{"taints":[{"key":"dedicated","effect":"NoSchedule"},{"key":"node.kubernetes.io/unschedulable","effect":"NoSchedule"}]}`, "spec.taints[1].key"},
		{"taint own domain", PlatformGCP, "", `{"taints":[{"key":"example.com/dedicated","value":"gpu","effect":"NoSchedule"}]}`, ""},
		{"taint gpu", PlatformGCP, "", `{"taints":[{"key":"nvidia.com/gpu","value":"present","effect":"NoSchedule"}]}`, ""},
		{"block taint reserved", PlatformGCP, "", `{"platform":{"gcp":{"taints":[{"key":"node.kubernetes.io/out-of-service","effect":"NoExecute"}]}}}`, "spec.platform.gcp.taints[0].key"},
		{"block taint reserved civo", PlatformCivo, "", `{"platform":{"civo":{"taints":[{"key":"node-role.kubernetes.io/master","effect":"NoSchedule"}]}}}`, "spec.platform.civo.taints[0].key"},
		{"block taint conflict", PlatformCivo, "", `{"platform":{"civo":{"taints":[{"key":"a","value":"x","effect":"NoSchedule"}]}},"taints":[{"key":"a","value":"y","effect":"NoSchedule"}]}`, "spec.platform.civo.taints[0]"},

		// zones
		{"zone empty", PlatformGCP, "", `{"platform":{"gcp":{"zones":[""]}}}`, "spec.platform.gcp.zones[0]"},
		{"zone duplicate", PlatformAWS, "", `{"platform":{"aws":{"availabilityZones":["us-west-2a","us-west-2a"]}}}`, "spec.platform.aws.availabilityZones[1]"},
		{"zone bad chars", PlatformAzure, "", `{"platform":{"azure":{"availabilityZones":["zone 1"]}}}`, "spec.platform.azure.availabilityZones[0]"},

		// accelerators

		// disks

		// aws user data, spot

		// tags
		{"tags ok", PlatformAzure, "", `{"tags":{"cost-center":"42","Owner Team":"platform"}}`, ""},
		{"tags 51", PlatformAzure, "", `{"tags":{` + strings.Join(manyTags, ",") + `}}`, "spec.tags"},
		{"tag key long", PlatformAzure, "", `{"tags":{"` + strings.Repeat("k", 129) + `":"v"}}`, "spec.tags." + strings.Repeat("k", 129)},
		{"tag key spaces", PlatformAzure, "", `{"tags":{" k":"v"}}`, "spec.tags. k"},
		{"tag value long", PlatformAzure, "", `{"tags":{"k":"` + strings.Repeat("v", 257) + `"}}`, "spec.tags.k"},

		// strict decoding
		{"unknown field", PlatformGCP, "", `{"replicas":3}`, "spec.replicas"},
		{"unknown nested field", PlatformGCP, "", `{"platform":{"gcp":{"machineTyp":"x"}}}`, "spec.platform.gcp.machineTyp"},
		{"field case matters", PlatformGCP, "", `{"NodeCount":3}`, "spec.NodeCount"},
		{"wrong type nested", PlatformGCP, "", `{"platform":{"gcp":{"zones":"us-central1-a"}}}`, "spec.platform.gcp.zones"},
		{"null label value", PlatformGCP, "", `{"labels":{"a":"b"}}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := tc.pool
			if name == "" {
				name = "workers"
			}
			errs := checkPool(t, tc.platform, name, tc.patch)
			if tc.want == "" {
				if len(errs) > 0 {
					t.Fatalf("want valid, got %v", errs)
				}
				return
			}
			for _, e := range errs {
				if e.Field == tc.want {
					if e.Reason == "" {
						t.Fatalf("%s: empty reason", e.Field)
					}
					return
				}
			}
			t.Fatalf("want an error on %s, got %v", tc.want, errs)
		})
	}
}

func TestValidateCluster(t *testing.T) {
	tests := []struct {
		name     string
		platform PlatformType
		patch    string
		want     string
	}{
		{"unknown type", PlatformK3s, `{"platform":{"type":"vsphere"}}`, "spec.platform.type"},
		{"type required", PlatformK3s, `{"platform":{"type":null}}`, "spec.platform.type"},
		{"block required", PlatformGCP, `{"platform":{"gcp":null}}`, "spec.platform.gcp"},
		{"wrong block", PlatformGCP, `{"platform":{"aws":{"region":"us-west-2"}}}`, "spec.platform.aws"},
		{"endpoint ok", PlatformGCP, `{"endpoint":"http://127.0.0.1:9000"}`, ""},
		{"endpoint relative", PlatformGCP, `{"endpoint":"/aks"}`, "spec.endpoint"},
		{"endpoint scheme", PlatformGCP, `{"endpoint":"ftp://127.0.0.1"}`, "spec.endpoint"},
		{"endpoint credentials", PlatformGCP, `{"endpoint":"https://user:secret@example.com"}`, "spec.endpoint"},
		{"endpoint query", PlatformGCP, `{"endpoint":"https://example.com/?key=x"}`, "spec.endpoint"},
		{"kubeconfig name", PlatformGCP, `{"kubeconfig":"Prod Kube"}`, "spec.kubeconfig"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			merged, err := jsondoc.Merge([]byte(testClusters[tc.platform]), []byte(tc.patch), true)
			if err != nil {
				t.Fatal(err)
			}
			c := &Cluster{Name: "prod"}
			if err := decodeStrict(merged, &c.Spec, "spec"); err != nil {
				t.Fatal(err)
			}
			err = ValidateCluster(platforms, c)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want an error on %s", tc.want)
			}
			for _, f := range err.(*Error).Fields {
				if f.Field == tc.want {
					return
				}
			}
			t.Fatalf("want an error on %s, got %v", tc.want, err)
		})
	}
}

func TestValidateControllerStatus(t *testing.T) {
	ok := ControllerStatus{ControllerName: "gcp-nodepool-controller", ObservedGeneration: 2,
		Conditions: []Condition{{Type: "Ready", Status: "True", Reason: "NodesReady", Message: "All 5 nodes are ready"}},
		Metadata:   json.RawMessage(`{"active_nodes":5}`)}
	tests := []struct {
		name   string
		mutate func(*ControllerStatus)
		want   string
	}{
		{"ok", func(*ControllerStatus) {}, ""},
		{"name required", func(c *ControllerStatus) { c.ControllerName = "" }, "controller_name"},
		{"name syntax", func(c *ControllerStatus) { c.ControllerName = "GCP Controller" }, "controller_name"},
		{"negative generation", func(c *ControllerStatus) { c.ObservedGeneration = -1 }, "observed_generation"},
		{"condition type", func(c *ControllerStatus) { c.Conditions[0].Type = "" }, "conditions[0].type"},
		{"condition type syntax", func(c *ControllerStatus) { c.Conditions[0].Type = "is ready" }, "conditions[0].type"},
		{"condition status", func(c *ControllerStatus) { c.Conditions[0].Status = "yes" }, "conditions[0].status"},
		{"condition reason", func(c *ControllerStatus) { c.Conditions[0].Reason = "nodes ready" }, "conditions[0].reason"},
		{"duplicate condition", func(c *ControllerStatus) { c.Conditions = append(c.Conditions, c.Conditions[0]) }, "conditions[1].type"},
		{"metadata not object", func(c *ControllerStatus) { c.Metadata = json.RawMessage(`[1]`) }, "metadata"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := ok
			cs.Conditions = append([]Condition(nil), ok.Conditions...)
			tc.mutate(&cs)
			err := ValidateControllerStatus(&cs)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if err == nil || err.(*Error).Fields[0].Field != tc.want {
				t.Fatalf("want an error on %s, got %v", tc.want, err)
			}
		})
	}
}

func TestParseEmail(t *testing.T) {
	for in, want := range map[string]string{
		"user@example.com":  "user@example.com",
		"User@Example.COM":  "user@example.com",
		" a@b.io ":          "a@b.io",
		"":                  "",
		"user":              "",
		"User <u@x.com>":    "",
		"@example.com":      "",
		"user@":             "",
		"two@@example.com":  "",
		"controller@system": "controller@system",
	} {
		got, err := ParseEmail(in)
		if (want == "") != (err != nil) || got != want {
			t.Errorf("ParseEmail(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// decodeStrict reads a JSON document as the service does.
func decodeStrict(data []byte, v any, path string) error {
	var fe FieldErrors
	if !jsondoc.Decode(data, v, path, fe.Report) {
		return fe.Err()
	}
	return nil
}

// TestRefID: an id that refers to an object is a UUID in either case, read
// in lower case; anything else, and the nil UUID, is a 400 naming the field.
func TestRefID(t *testing.T) {
	const id = "01a2065f-6ad4-76ef-96ff-668bd0563ece"
	for _, tc := range []struct {
		in, want string // want "" when refused
	}{
		{id, id},
		{strings.ToUpper(id), id},
		{"01A2065F-6ad4-76ef-96FF-668bd0563ece", id},
		{"", ""},
		{"prod", ""},
		{"urn:uuid:" + id, ""},
		{"{" + id + "}", ""},
		{strings.ReplaceAll(id, "-", ""), ""},
		{NilUUID, ""},
	} {
		got, err := RefID("id", tc.in)
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("RefID(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if err != nil && (!IsValidation(err) || err.(*Error).Fields[0].Field != "id") {
			t.Errorf("RefID(%q): %v, want a VALIDATION_ERROR naming id", tc.in, err)
		}
	}
}

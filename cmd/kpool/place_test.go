package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kpool/kpool"
)

const placeApp = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: crawler
  annotations: {kompox.dev/pool: spot}
spec:
  replicas: 12
  template:
    spec:
      containers: [{name: c, image: crawler:1}]
---
apiVersion: v1
kind: Service
metadata: {name: crawler}
spec: {ports: [{port: 80}]}
`

// TestPlaceOffline places without a server: nothing is checked.
func TestPlaceOffline(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "app.yaml", placeApp)
	out, stderr, err := execute("", "place", "-f", path, "--zones", "1,2")
	if err != nil {
		t.Fatalf("place: %v\n%s", err, stderr)
	}
	for _, want := range []string{"kompox.dev/node-pool: spot", "key: kompox.dev/node-zone", "operator: In",
		"---\napiVersion: v1\nkind: Service\nmetadata: {name: crawler}\nspec: {ports: [{port: 80}]}\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	// Nothing is tolerated; the zone's label is warned about (only
	// single-zone pools' nodes carry kompox.dev/node-zone).
	if strings.Contains(out, "tolerations") || !strings.Contains(stderr, "zone 1,2 is written as kompox.dev/node-zone") {
		t.Errorf("offline placement tolerated, or did not warn of its zone label:\n%s\n%s", out, stderr)
	}
	// stdin, and the flags' own exclusions.
	if out, _, err := execute(placeApp, "place", "-f", "-", "--pool", "user"); err != nil || !strings.Contains(out, "kompox.dev/node-pool: user") {
		t.Errorf("place -f - --pool user: %v\n%s", err, out)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"place"}, "give the manifests with -f FILE"},
		{[]string{"place", "-f", path, "--pool", "a", "--pools", "b,c"}, "[pool pools] were all set"},
		{[]string{"place", "-f", path, "--zone", "1", "--zones", "1,2"}, "[zone zones] were all set"},
		{[]string{"place", "-f", path, "--app", writeFile(t, "kompox.yml", "spec: {compose: x}")}, "has no spec.deployment"},
		{[]string{"place", "-f", path, "--cluster", "c"}, "set KPOOL_TOKEN (or --token)"},
	} {
		if _, _, err := execute("", tt.args...); err == nil || !strings.Contains(err.Error()+fieldsOf(err), tt.want) {
			t.Errorf("%v: %v, want %q", tt.args, err, tt.want)
		}
	}
}

// TestPlaceOnCluster places against an AKS cluster whose pools are in
// kpool: the spot pool's pods get the toleration AKS's taint needs, and a
// missing pool or a zone outside the pool is refused with the alternatives.
func TestPlaceOnCluster(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	cluster := createCluster(t, srv, "aks", kpool.PlatformAzure)
	createPool(t, srv, "gpu", cluster, "--machine-type", "Standard_NC6s_v3", "--count", "2", "--zones", "1",
		"--taint", "nvidia.com/gpu=present:NoSchedule")
	spot := createPool(t, srv, "spot", cluster, "--machine-type", "Standard_D8s_v5", "--min", "0", "--max", "5", "--zones", "1,2", "--spot")
	report(t, srv, spot.ID, 1, kpool.Condition{Type: "Ready", Status: "True"})
	createPool(t, srv, "user", cluster, "--machine-type", "Standard_D4s_v5", "--count", "3", "--zones", "1,2,3")

	path := writeFile(t, "app.yaml", placeApp)
	out, stderr, err := execute("", "place", "-f", path, "--cluster", cluster, "--server", srv, "--user", testUser)
	if err != nil {
		t.Fatalf("place: %v\n%s", err, stderr)
	}
	for _, want := range []string{"kompox.dev/node-pool: spot", "key: kubernetes.azure.com/scalesetpriority", "value: spot", "effect: NoSchedule"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if want := "Warning: document 1, Deployment crawler: 12 replicas, but pool spot has at most 5 nodes"; !strings.Contains(stderr, want) {
		t.Errorf("stderr %q, want %q", stderr, want)
	}

	// A zone on the multi-zone user pool, by the default pool, with a
	// pool not Ready.
	out, stderr, err = execute("", "place", "-f", "-", "--zone", "westeurope-3", "--cluster", cluster, "--server", srv, "--user", testUser)
	if err == nil {
		t.Fatalf("no manifests on stdin: %s", out)
	}
	app := strings.Replace(placeApp, "{kompox.dev/pool: spot}", "{kompox.dev/zone: \"westeurope-3\"}", 1)
	out, stderr, err = execute(app, "place", "-f", "-", "--cluster", cluster, "--server", srv, "--user", testUser)
	if err != nil || !strings.Contains(out, "kompox.dev/node-pool: user") || !strings.Contains(out, "topology.kubernetes.io/zone: westeurope-3") ||
		!strings.Contains(stderr, "pool user is Pending, not Ready") {
		t.Errorf("place on the default pool: %v\n%s\n%s", err, out, stderr)
	}

	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"--pool", "gpus"}, []string{`pool: pool "gpus" is not in the cluster: cluster aks has pools gpu (zone 1), spot (zones 1, 2), user (zones 1, 2, 3)`}},
		{[]string{"--pool", "gpu", "--zone", "2"}, []string{`zone: zone "2" is not one that pool gpu runs in: gpu has zone 1`}},
		{[]string{"--pools", "gpu,spot", "--zone", "3"}, []string{`zone "3" is not one that pools gpu, spot run in: gpu has zone 1; spot has zones 1, 2`}},
	} {
		args := append([]string{"place", "-f", path, "--cluster", cluster, "--server", srv, "--user", testUser}, tt.args...)
		out, _, err := execute("", args...)
		if errCodeOf(err) != kpool.CodeValidation || out != "" {
			t.Errorf("%v: %v, printed %q", tt.args, err, out)
			continue
		}
		var msg bytes.Buffer
		if exitCode(err, &msg) != 1 {
			t.Errorf("%v: exit code is not 1", tt.args)
		}
		for _, w := range tt.want {
			if !strings.Contains(msg.String(), w) {
				t.Errorf("%v: no %q in\n%s", tt.args, w, msg.String())
			}
		}
	}
}

// fieldsOf returns an API error's fields as text.
func fieldsOf(err error) string {
	var b bytes.Buffer
	exitCode(err, &b)
	return b.String()
}

// TestPlaceOnEKSAndGKE: on EKS and GKE pools, placement selects the nodes
// as those clouds label them: the pool's kompox labels (which the drivers
// put on the node group's or node pool's nodes) and the zone by its name in
// topology.kubernetes.io/zone (us-west-2b from the cluster's subnet map;
// us-central1-b, the region's second zone), and tolerates the taint GKE
// puts on GPU nodes.
func TestPlaceOnEKSAndGKE(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	app := strings.Replace(placeApp, "{kompox.dev/pool: spot}", "{kompox.dev/pool: web, kompox.dev/zone: \"2\"}", 1)
	for _, tc := range []struct {
		platform kpool.PlatformType
		pool     []string
		want     []string
	}{
		{kpool.PlatformAWS, []string{"--machine-type", "m5.large", "--count", "2", "--zones", "1,2"},
			[]string{"kompox.dev/node-pool: web", "topology.kubernetes.io/zone: us-west-2b"}},
		{kpool.PlatformGCP, nil, // a GPU pool, from a file: accelerators have no flag
			[]string{"kompox.dev/node-pool: web", "topology.kubernetes.io/zone: us-central1-b", "key: nvidia.com/gpu", "effect: NoSchedule"}},
	} {
		cluster := createCluster(t, srv, string(tc.platform), tc.platform)
		var stdin string
		if tc.pool == nil {
			stdin = `{"name":"web","spec":{"nodeCount":2,"zones":["1","2"],"platform":{"gcp":{"machineType":"n1-standard-4","accelerators":[{"type":"nvidia-tesla-t4","count":1}]}}}}`
			tc.pool = []string{"-f", "-"}
		}
		args := append([]string{"nodepool", "create"}, tc.pool...)
		if stdin == "" {
			args = append(args, "web")
		}
		args = append(args, "--cluster", cluster)
		if _, err := run(srv, stdin, args...); err != nil {
			t.Fatalf("%s: %v", tc.platform, err)
		}
		out, stderr, err := execute(app, "place", "-f", "-", "--cluster", cluster, "--server", srv, "--user", testUser)
		if err != nil {
			t.Fatalf("%s: place: %v\n%s", tc.platform, err, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q in\n%s", tc.platform, w, out)
			}
		}
	}
}

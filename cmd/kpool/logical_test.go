package main

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"sigs.k8s.io/yaml"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/cloudsim/sim"
)

// TestZonalLogicalPool (issue 18): in kpool dev, one request makes a zonal
// logical pool of three AKS pools; the emulated AKS nodes carry the shared
// kompox.dev/node-pool and each its kompox.dev/node-zone (as the controller
// read them back); and a workload placed on the logical pool in zones 1
// and 2 can run on exactly those members' nodes, as the Kubernetes
// scheduler's own helpers decide.
func TestZonalLogicalPool(t *testing.T) {
	clock := sim.NewManualClock(time.Now())
	polls := clockWaits(clock)
	printed := startDev(t, clock)
	m := regexp.MustCompile(`export KPOOL_SERVER=(\S+) KPOOL_TOKEN=(\S+)`).FindStringSubmatch(printed)
	server, token := m[1], m[2]
	cli := func(stdin string, args ...string) string {
		t.Helper()
		out, stderr, err := executeOn(polls, stdin, append(args, "--server", server, "--token", token)...)
		if err != nil {
			t.Fatalf("kpool %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		return out
	}

	var list api.NodePoolList
	if err := json.Unmarshal([]byte(cli("", "nodepool", "create", "user", "--cluster", "demo-aks", "--per-zone", "--zones", "1,2,3",
		"--machine-type", "Standard_D4s_v5", "--count", "1", "--wait", "-o", "json")), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.NodePools) != 3 {
		t.Fatalf("members: %+v", list.NodePools)
	}
	// What the emulated AKS nodes carry, as the controller read it back.
	c := api.NewClient(server, "")
	c.Token = token
	var nodes []*corev1.Node
	for i, p := range list.NodePools {
		z := string(rune('1' + i))
		got, err := c.NodePool(context.Background(), p.ID)
		if err != nil {
			t.Fatal(err)
		}
		l := got.Status.PlacementLabels
		if got.Status.Phase != kpool.PhaseReady || got.Name != "user-"+z || l == nil || (*l)["kompox.dev/node-pool"] != "user" || (*l)["kompox.dev/node-zone"] != z {
			t.Fatalf("member %s: %s, node labels %v", got.Name, got.Status.Phase, l)
		}
		labels := map[string]string{"kubernetes.azure.com/agentpool": got.ProviderName, "topology.kubernetes.io/zone": "westeurope-" + z}
		for k, v := range *l {
			labels[k] = v
		}
		nodes = append(nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: got.Name, Labels: labels}})
	}
	// Another pool, so that "exactly" means something.
	cli("", "nodepool", "create", "other", "--cluster", "demo-aks", "--machine-type", "Standard_D4s_v5", "--count", "1", "--zones", "1", "--wait")
	nodes = append(nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "other", Labels: map[string]string{
		"kompox.dev/node-pool": "other", "kompox.dev/node-zone": "1", "topology.kubernetes.io/zone": "westeurope-1"}}})

	placed := cli("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      containers: [{name: w, image: w:1}]\n",
		"place", "-f", "-", "--cluster", "demo-aks", "--pool", "user", "--zones", "1,2")
	var d struct {
		Spec struct {
			Template struct {
				Spec corev1.PodSpec `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(placed), &d); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{Spec: d.Spec.Template.Spec}
	aff := nodeaffinity.GetRequiredNodeAffinity(pod)
	var on []string
	for _, n := range nodes {
		if ok, err := aff.Match(n); err != nil {
			t.Fatal(err)
		} else if ok {
			on = append(on, n.Name)
		}
	}
	slices.Sort(on)
	if !slices.Equal(on, []string{"user-1", "user-2"}) {
		t.Fatalf("the placed pods can run on %v, want user-1 and user-2:\n%s", on, placed)
	}
}

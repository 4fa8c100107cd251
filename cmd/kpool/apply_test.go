package main

import (
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/apply"
)

// The clouds of the apply tests' fleets (the platform blocks of their
// files are these clouds').
const (
	fleetCloud   = kpool.PlatformGCP   // the test server's fake driver's
	replaceCloud = kpool.PlatformAzure // changes a pool's machine type only with a new pool
)

// pools lists a cluster's pools by name.
func pools(t *testing.T, srv, cluster string) map[string]*kpool.NodePool {
	t.Helper()
	list := decode[api.NodePoolList](t, srv, "nodepool", "list", "--cluster", cluster)
	out := map[string]*kpool.NodePool{}
	for _, p := range list.NodePools {
		out[p.Name] = p
	}
	return out
}

// code is the exit code kpool gives err.
func code(err error) int { return exitCode(err, io.Discard) }

func TestApply(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	prod := createCluster(t, srv, "prod", kpool.PlatformGCP)
	web := createPool(t, srv, "web", prod, "--machine-type", "e2-small", "--count", "2")

	fleet := writeFile(t, "pools.yaml", `
name: web
cluster: prod
spec:
  nodeCount: 3
  platform:
    gcp:
      machineType: e2-small
---
# only a comment
---
name: batch
cluster_id: `+prod+`
spec:
  nodeCount: 1
  labels: {tier: batch}
  platform:
    gcp:
      machineType: e2-medium
`)
	// Each step runs on the fleet as the steps before it left it.
	steps := []struct {
		name     string
		args     []string
		stdin    string
		exit     int
		want     []string // in the output, in this order
		wantNot  []string
		counts   map[string]int // each pool's nodeCount after the step
		quietOut bool           // no output at all
	}{
		{"dry run shows the plan and changes nothing", []string{"apply", "-f", fleet, "--dry-run"}, "", 0,
			[]string{
				"~ nodepool web in cluster prod will be updated\n",
				"    ~ spec.nodeCount: 2 -> 3   (in_place",
				"+ nodepool batch in cluster prod will be created\n",
				`    + spec.labels.tier = "batch"`,
				"    + spec.nodeCount = 1\n",
				`    + spec.platform.gcp.machineType = "e2-medium"`,
				"Plan: 1 to create, 1 to update, 0 to replace, 0 to delete, 0 unchanged.\n"},
			nil, map[string]int{"web": 2}, false},
		{"diff shows the spec fields that differ, exit 1", []string{"diff", "-f", fleet}, "", 1,
			[]string{
				"--- nodepool web in cluster prod (live)\n+++ nodepool web in cluster prod (file)\n-spec.nodeCount: 2\n+spec.nodeCount: 3\n",
				"--- /dev/null\n+++ nodepool batch in cluster prod (file)\n",
				"+spec.nodeCount: 1\n"},
			[]string{"machineType: \"e2-small\""}, map[string]int{"web": 2}, false},
		{"apply creates and updates", []string{"apply", "-f", fleet}, "", 0,
			[]string{
				"~ nodepool web in cluster prod updated (generation 2)\n",
				"+ nodepool batch in cluster prod created\n",
				"Applied: 1 created, 1 updated, 0 replaced, 0 deleted, 0 unchanged.\n"},
			nil, map[string]int{"web": 3, "batch": 1}, false},
		{"again, nothing to do", []string{"apply", "-f", fleet}, "", 0,
			[]string{"= nodepool web in cluster prod unchanged\n", "= nodepool batch in cluster prod unchanged\n",
				"Applied: 0 created, 0 updated, 0 replaced, 0 deleted, 2 unchanged.\n"},
			nil, map[string]int{"web": 3, "batch": 1}, false},
		{"dry run of nothing to do", []string{"apply", "-f", fleet, "--dry-run"}, "", 0,
			[]string{"= nodepool web in cluster prod unchanged\n", "Plan: 0 to create, 0 to update, 0 to replace, 0 to delete, 2 unchanged.\n"},
			nil, nil, false},
		{"diff of nothing to do, exit 0", []string{"diff", "-f", fleet}, "", 0, nil, nil, nil, true},
		{"JSON list on stdin, cluster by ID in cluster", []string{"apply", "-f", "-"},
			`[{"name": "web", "cluster": "` + prod + `", "spec": {"nodeCount": 4, "platform": {"gcp": {"machineType": "e2-small"}}}}, {"name": "api", "cluster": "prod", "spec": {"platform": {"gcp": {"machineType": "e2-small"}}}}]`, 0,
			[]string{"~ nodepool web in cluster prod updated (generation 3)\n", "+ nodepool api in cluster prod created\n",
				"Applied: 1 created, 1 updated, 0 replaced, 0 deleted, 0 unchanged.\n"},
			nil, map[string]int{"web": 4, "batch": 1}, false},
		{"the output of get -o yaml, at an old resource version, is applied at the pool's", []string{"apply", "-f", "-"},
			"resource_version: " + web.ResourceVersion + "\n" + strings.Replace(yamlOf(t, web), "nodeCount: 2", "nodeCount: 5", 1), 0,
			[]string{"~ nodepool web in cluster prod updated (generation 4)\n"},
			nil, map[string]int{"web": 5}, false},
	}
	for _, s := range steps {
		out, _, err := execute(s.stdin, append(s.args, "--server", srv, "--user", testUser)...)
		if got := code(err); got != s.exit {
			t.Fatalf("%s: exit %d (%v), want %d\n%s", s.name, got, err, s.exit, out)
		}
		if s.quietOut && out != "" {
			t.Errorf("%s: printed %q", s.name, out)
		}
		rest := out
		for _, w := range s.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("%s: no %q (in order) in\n%s", s.name, w, out)
				break
			}
			rest = rest[i+len(w):]
		}
		for _, w := range s.wantNot {
			if strings.Contains(out, w) {
				t.Errorf("%s: %q in\n%s", s.name, w, out)
			}
		}
		for name, n := range s.counts {
			if p := pools(t, srv, prod)[name]; p == nil || p.Spec.Count() != n {
				t.Errorf("%s: pool %s is %+v, want %d nodes", s.name, name, p, n)
			}
		}
		if s.counts != nil && len(pools(t, srv, prod)) < len(s.counts) {
			t.Errorf("%s: pools %v", s.name, pools(t, srv, prod))
		}
	}
	if _, ok := pools(t, srv, prod)["api"]; !ok {
		t.Error("api was not created")
	}

	// -o json: what was done to each pool.
	out, err := run(srv, "", "apply", "-f", fleet, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var rs []apply.Result
	if err := json.Unmarshal([]byte(out), &rs); err != nil || len(rs) != 2 || rs[0].Action != apply.Update || rs[0].NodePool == nil ||
		rs[0].NodePool.Spec.Count() != 3 || rs[1].Action != apply.Unchanged || rs[1].ClusterID != prod {
		t.Errorf("apply -o json: %v\n%s", err, out)
	}
	// -o name: the pools, as kubectl apply -o name.
	if out, err := run(srv, "", "apply", "-f", fleet, "-o", "name"); err != nil || out != "nodepool/"+web.ID+"\nnodepool/"+pools(t, srv, prod)["batch"].ID+"\n" {
		t.Errorf("apply -o name: %v %q", err, out)
	}
}

// yamlOf is a pool as kpool nodepool get -o yaml shows it.
func yamlOf(t *testing.T, p *kpool.NodePool) string {
	t.Helper()
	var b strings.Builder
	f := clientFlags{output: outYAML}
	cmd := newRoot()
	cmd.SetOut(&b)
	if err := f.print(cmd, p, nil); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestApplyRefused(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	prod := createCluster(t, srv, "prod", kpool.PlatformGCP)
	aks := createCluster(t, srv, "aks", kpool.PlatformAzure)
	gpu := createPool(t, srv, "gpu", aks, "--machine-type", "Standard_D4s_v5", "--count", "1")
	reportAs(t, srv, gpu.ID, 1, `{"exists": true}`) // now at AKS: its vmSize is fixed

	file := writeFile(t, "pools.yaml", `
name: good
cluster: prod
spec: {nodeCount: 1, platform: {gcp: {machineType: e2-small}}}
---
cluster: prod
spec: {nodeCount: 1}
---
name: lost
cluster: nowhere
spec: {nodeCount: 1}
---
name: good
cluster: prod
spec: {nodeCount: 2}
---
name: gpu
cluster: aks
spec: {platform: {azure: {vmSize: Standard_D8s_v5}}}
---
name: bad
cluster: prod
spec: {nodeCount: -1, platform: {gcp: {machineType: e2-small}}}
---
name: mixed
cluster: aks
cluster_id: `+prod+`
spec: {nodeCount: 1}
`)
	wantAll := []string{
		"+ nodepool good in cluster prod",
		"! nodepool (no name) in cluster prod ",
		"    name: is required",
		`! nodepool lost in cluster nowhere `,
		`No cluster named "nowhere"`,
		"! nodepool good in cluster prod ",
		"more than once",
		"! nodepool gpu in cluster aks ",
		"spec.platform.azure.vmSize",
		"! nodepool bad in cluster prod ",
		"spec.nodeCount",
		"! nodepool mixed in cluster aks ",
		`cluster: "aks" is cluster ` + aks + ", but cluster_id is " + prod,
	}
	for _, tt := range []struct {
		name    string
		args    []string
		summary string
	}{
		{"dry run", []string{"--dry-run"}, "Plan: 1 to create, 0 to update, 0 to replace, 0 to delete, 0 unchanged, 6 refused.\n"},
		{"apply", nil, "Plan: 1 to create, 0 to update, 0 to replace, 0 to delete, 0 unchanged, 6 refused.\n"},
	} {
		out, err := run(srv, "", append([]string{"apply", "-f", file}, tt.args...)...)
		if code(err) != 1 || err.Error() != "6 of 7 node pools refused: nothing was written" {
			t.Errorf("%s: %v", tt.name, err)
		}
		rest := out
		for _, w := range append(wantAll, tt.summary) {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("%s: no %q (in order) in\n%s", tt.name, w, out)
				break
			}
			rest = rest[i+len(w):]
		}
	}
	// A file with a refusal writes nothing, not even its good pool.
	if ps := pools(t, srv, prod); len(ps) != 0 {
		t.Errorf("pools of prod: %v", ps)
	}
	if p := decode[kpool.NodePool](t, srv, "nodepool", "get", gpu.ID); p.Generation != 1 {
		t.Errorf("gpu changed: %+v", p)
	}
	// diff cannot tell: exit 2.
	if _, err := run(srv, "", "diff", "-f", file); code(err) != 2 {
		t.Errorf("diff of a refused pool: %v", err)
	}

	// A file at fault applies nothing and names every document at fault.
	for _, tt := range []struct{ name, file, want string }{
		{"unknown fields", "name: a\ncluster: prod\nspek: {}\n---\nname: b\ncluster: prod\nspec: {nodeCount: \"x\"}\n",
			"document 1: spek"},
		{"not YAML", "name: [a\n", "document 1: not YAML or JSON"},
		{"empty", "# nothing\n---\n", "has no node pools"},
	} {
		path := writeFile(t, "bad.yaml", tt.file)
		for _, cmd := range []string{"apply", "diff"} {
			_, err := run(srv, "", cmd, "-f", path)
			if err == nil || !strings.Contains(errorText(err), tt.want) {
				t.Errorf("%s %s: %v, want %q", cmd, tt.name, errorText(err), tt.want)
			}
		}
	}
	path := writeFile(t, "two.yaml", "name: a\ncluster: prod\nspek: {}\n---\nname: [b]\ncluster: prod\nspec: {}\n")
	if _, err := run(srv, "", "apply", "-f", path); !strings.Contains(errorText(err), "  document 2: name: ") {
		t.Errorf("every document at fault: %v", errorText(err))
	}
	if ps := pools(t, srv, prod); len(ps) != 0 {
		t.Errorf("a file at fault changed the pools: %v", ps)
	}
	if _, err := run(srv, "", "apply"); err == nil || !strings.Contains(err.Error(), "-f FILE") {
		t.Errorf("apply without -f: %v", err)
	}
}

// errorText is err as kpool prints it.
func errorText(err error) string {
	var b strings.Builder
	exitCode(err, &b)
	return b.String()
}

// TestApplyViewClasses: the dry run's lines for each class of change, as
// the server's plan gives them (a replace or not_implemented change makes
// the pool one the apply would refuse).
func TestApplyViewClasses(t *testing.T) {
	t.Parallel()
	plan := func(cs ...kpool.Change) *kpool.Plan {
		return &kpool.Plan{Provider: "azure", ProviderName: "gpu", Changes: cs}
	}
	refusal := func(p *kpool.Plan) *kpool.Error {
		var e *kpool.Error
		errors.As(p.Refusal(), &e)
		return e
	}
	replace := plan(kpool.Change{Field: "spec.platform.azure.vmSize", Class: kpool.UpdateReplace, From: "A", To: "B", Reason: "AKS does not change it"})
	surged := plan(replace.Changes...)
	surged.Replacement = "surge 1, drain 30m0s"
	tests := []struct {
		name string
		r    apply.Result
		want string
	}{
		{"in place", apply.Result{Name: "web", Cluster: "prod", Action: apply.Update,
			Plan: plan(kpool.Change{Field: "spec.nodeCount", Class: kpool.UpdateInPlace, From: 2, To: 3, Reason: "scales"})},
			"~ nodepool web in cluster prod will be updated\n    ~ spec.nodeCount: 2 -> 3   (in_place: scales)\n    provider azure (agent pool gpu): 1 change, no node replaced\n"},
		{"rolls nodes, new nodes only, absent before", apply.Result{Name: "web", Cluster: "prod", Action: apply.Update,
			Plan: plan(kpool.Change{Field: "spec.kubernetesVersion", Class: kpool.UpdateRollsNodes, To: "1.31"},
				kpool.Change{Field: "spec.labels", Class: kpool.UpdateNewNodesOnly, From: map[string]string{"a": "1"}, To: map[string]string{"a": "2"}})},
			"    ~ spec.kubernetesVersion: - -> \"1.31\"   (rolls_nodes)\n    ~ spec.labels: {\"a\":\"1\"} -> {\"a\":\"2\"}   (new_nodes_only)\n    provider azure (agent pool gpu): 2 changes, rolls nodes, new nodes only\n"},
		{"replace", apply.Result{Name: "gpu", Cluster: "aks", Action: apply.Refused, Plan: replace, Error: refusal(replace)},
			"! nodepool gpu in cluster aks would be refused: VALIDATION_ERROR: Validation failed\n" +
				"    ~ spec.platform.azure.vmSize: \"A\" -> \"B\"   (replace: AKS does not change it)\n" +
				"    provider azure (agent pool gpu): 1 change, needs a new pool\n" +
				"    spec.platform.azure.vmSize: cannot be changed in place on azure: AKS does not change it; set spec.updateStrategy.replacement to Surge" +
				" (kpool --replacement Surge) to have kpool replace the pool without downtime, or create a new pool with the new value and delete this one\n"},
		{"replace under Surge", apply.Result{Name: "gpu", Cluster: "aks", Action: apply.Replace, Plan: surged},
			"-/+ nodepool gpu in cluster aks will be replaced by kpool without downtime (surge 1, drain 30m0s)\n" +
				"    ~ spec.platform.azure.vmSize: \"A\" -> \"B\"   (replace (surge 1, drain 30m0s): AKS does not change it)\n" +
				"    provider azure (agent pool gpu): 1 change, replaces the pool (surge 1, drain 30m0s)\n"},
		{"not implemented", apply.Result{Name: "gpu", Cluster: "aks", Action: apply.Refused,
			Plan:  plan(kpool.Change{Field: "spec.taints", Class: kpool.UpdateNotImplemented, To: []string{"x"}, Reason: "no taints"}),
			Error: refusal(plan(kpool.Change{Field: "spec.taints", Class: kpool.UpdateNotImplemented, Reason: "no taints"}))},
			"! nodepool gpu in cluster aks would be refused: NOT_IMPLEMENTED: Not implemented by azure\n" +
				"    ~ spec.taints: - -> [\"x\"]   (not_implemented: no taints)\n" +
				"    provider azure (agent pool gpu): 1 change, not implemented\n" +
				"    spec.taints: no taints\n"},
		{"unchanged", apply.Result{Name: "web", Cluster: "prod", Action: apply.Unchanged, Plan: plan()}, "= nodepool web in cluster prod unchanged\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			applyView(&b, apply.Report{Results: []apply.Result{tt.r}})
			out, _, _ := strings.Cut(b.String(), "Plan: ")
			if !strings.HasSuffix(out, tt.want) {
				t.Errorf("got\n%s\nwant (at the end)\n%s", out, tt.want)
			}
		})
	}
}

// TestApplyContext: a document that names no cluster is the context's
// cluster's; without a context it is refused.
func TestApplyContext(t *testing.T) {
	srv := newServer(t)
	stage := createCluster(t, srv, "stage", kpool.PlatformGCP)
	file := writeFile(t, "pools.yaml", "name: web\nspec: {nodeCount: 1, platform: {gcp: {machineType: e2-small}}}\n")
	t.Setenv("KPOOL_CONFIG", filepath.Join(t.TempDir(), "config.yaml"))
	if _, err := run(srv, "", "apply", "-f", file); err == nil || !strings.Contains(mustOut(run(srv, "", "apply", "-f", file)), "cluster_id: is required") {
		t.Errorf("no cluster, no context: %v", err)
	}
	if _, _, err := execute("", "config", "set-context", "stage", "--server", srv, "--user", testUser, "--cluster", "stage"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := execute("", "config", "use-context", "stage"); err != nil {
		t.Fatal(err)
	}
	if out, _, err := execute("", "apply", "-f", file); err != nil || !strings.Contains(out, "+ nodepool web in cluster stage created") {
		t.Errorf("the context's cluster: %v\n%s", err, out)
	}
	if p := pools(t, srv, stage)["web"]; p == nil {
		t.Error("web was not created in the context's cluster")
	}
}

func mustOut(out string, _ error) string { return out }

package main

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/kpool/kpool/provider/catalog"
)

// TestApplyAllOrNothing: a file with any invalid document, or a change the
// server would refuse, writes nothing; every problem is listed with its
// document, pool and field; diff exits 1 for a refused replacement (a
// change) and 2 for an invalid file.
func TestApplyAllOrNothing(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	createCluster(t, srv, "prod", fleetCloud)
	aks := createCluster(t, srv, "aks", replaceCloud)
	createPool(t, srv, "web", "prod", "--machine-type", "e2-small", "--count", "2")
	gpu := createPool(t, srv, "gpu", aks, "--machine-type", "Standard_D4s_v5", "--count", "1")
	reportAs(t, srv, gpu.ID, 1, `{"exists": true}`) // now at AKS: its vmSize is fixed

	const (
		web    = "name: web\ncluster: prod\nspec: {nodeCount: 3, platform: {gcp: {machineType: e2-small}}}\n"
		fresh  = "name: fresh\ncluster: prod\nspec: {platform: {gcp: {machineType: e2-small}}}\n"
		gpuDoc = "name: gpu\ncluster: aks\nspec: {nodeCount: 1, platform: {azure: {vmSize: Standard_D4s_v5}}}\n"
	)
	good := web + "---\n" + fresh + "---\n" + gpuDoc
	inOrder(t, "the good file", mustRun(t, srv, "apply", "-f", writeFile(t, "good.yaml", good), "--dry-run"),
		"~ nodepool web in cluster prod will be updated\n", "+ nodepool fresh in cluster prod will be created\n",
		"= nodepool gpu in cluster aks unchanged\n", "Plan: 1 to create, 1 to update, 0 to replace, 0 to delete, 1 unchanged.\n")
	before := generations(t, srv, "prod", "aks")

	bigger := strings.Replace(gpuDoc, "Standard_D4s_v5", "Standard_D8s_v5", 1)
	for _, tt := range []struct {
		name string
		file string
		want []string // in apply's output, in order
		diff int      // diff's exit code
	}{
		{"an unknown cluster first", "name: lost\ncluster: nowhere\nspec: {}\n---\n" + good,
			[]string{"! nodepool lost in cluster nowhere (document 1) would be refused: NOT_FOUND: No cluster named \"nowhere\""}, 2},
		{"a duplicate in the middle", web + "---\n" + fresh + "---\n" + fresh + "---\n" + gpuDoc,
			[]string{"! nodepool fresh in cluster prod (document 3) would be refused", `name: the file has node pool "fresh" in cluster prod more than once`}, 2},
		{"a bad field last", good + "---\nname: typo\ncluster: prod\nspec: {nodecount: 3, platform: {gcp: {machineType: e2-small}}}\n",
			[]string{"! nodepool typo in cluster prod (document 4) would be refused: VALIDATION_ERROR", "spec.nodecount: unknown field"}, 2},
		{"a refused replacement", web + "---\n" + fresh + "---\n" + bigger,
			[]string{"! nodepool gpu in cluster aks (document 3) would be refused: VALIDATION_ERROR",
				`    ~ spec.platform.azure.vmSize: "Standard_D4s_v5" -> "Standard_D8s_v5"   (replace`,
				"    fix: the change needs a new pool and the pool's updateStrategy.replacement is Refuse: set spec.updateStrategy.replacement: Surge in the file"}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := writeFile(t, "fleet.yaml", tt.file)
			out, err := run(srv, "", "apply", "-f", file)
			if code(err) != 1 || !strings.HasSuffix(err.Error(), "refused: nothing was written") {
				t.Errorf("apply: exit %d (%v)", code(err), err)
			}
			inOrder(t, "apply", out, append(tt.want, "1 refused.\n")...)
			if got := generations(t, srv, "prod", "aks"); !maps.Equal(got, before) {
				t.Errorf("the pools after a refused file: %v, want %v", got, before)
			}
			_, stderr, err := execute("", "diff", "-f", file, "--server", srv, "--user", testUser)
			if code(err) != tt.diff {
				t.Errorf("diff: exit %d (%v), want %d\n%s", code(err), err, tt.diff, stderr)
			}
			if tt.diff == 1 && !strings.Contains(stderr, "note: nodepool gpu in cluster aks: apply would refuse this change: the change needs a new pool") {
				t.Errorf("diff's note: %q", stderr)
			}
		})
	}

	// Under replacement Surge the same change is a replacement kpool
	// carries out: planned, diffed (exit 1) and applied.
	surge := web + "---\n" + strings.Replace(bigger, "nodeCount: 1,", "nodeCount: 1, updateStrategy: {replacement: Surge},", 1)
	file := writeFile(t, "surge.yaml", surge)
	inOrder(t, "surge plan", mustRun(t, srv, "apply", "-f", file, "--dry-run"),
		"-/+ nodepool gpu in cluster aks will be replaced by kpool without downtime (surge 1, drain 30m0s)\n",
		`    ~ spec.platform.azure.vmSize: "Standard_D4s_v5" -> "Standard_D8s_v5"   (replace (surge 1, drain 30m0s)`,
		`    + spec.updateStrategy.replacement: "Surge"`, "Plan: 0 to create, 1 to update, 1 to replace, 0 to delete, 0 unchanged.\n")
	if _, err := run(srv, "", "diff", "-f", file); code(err) != 1 {
		t.Errorf("diff of a surge replacement: exit %d (%v)", code(err), err)
	}
	inOrder(t, "surge apply", mustRun(t, srv, "apply", "-f", file),
		"~ nodepool web in cluster prod updated (generation 2)\n", "-/+ nodepool gpu in cluster aks being replaced (surge 1, drain 30m0s; generation 2)",
		"Applied: 0 created, 1 updated, 1 replaced, 0 deleted, 0 unchanged.\n")
	if _, err := run(srv, "", "diff", "-f", file); code(err) != 0 {
		t.Errorf("diff after the apply: exit %d (%v)", code(err), err)
	}
}

// TestCreateFileAsApply: nodepool create -f takes apply's document: the
// cluster by name (cluster:) or ID, with apply's errors.
func TestCreateFileAsApply(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	prod := createCluster(t, srv, "prod", fleetCloud)
	createCluster(t, srv, "stage", fleetCloud)
	doc := "name: web\ncluster: prod\nspec: {platform: {gcp: {machineType: e2-small}}}\n"
	out, err := run(srv, doc, "nodepool", "create", "-f", "-", "-o", "name")
	if err != nil || !strings.HasPrefix(out, "nodepool/") {
		t.Fatalf("create -f with cluster: %v %s", err, out)
	}
	if pools(t, srv, "prod")["web"] == nil {
		t.Error("web is not in prod")
	}
	for _, tt := range []struct{ doc, want string }{
		{"name: a\ncluster: nowhere\nspec: {}\n", `No cluster named "nowhere"`},
		{"name: a\ncluster: stage\ncluster_id: " + prod + "\nspec: {}\n", `cluster: "stage" is cluster `},
		{"name: a\nspec: {}\n---\nname: b\nspec: {}\n", "holds 2 node pools: nodepool create takes one"},
		{"name: a\ncluster: prod\nspek: {}\n", "document 1: spek: unknown field"},
	} {
		if _, err := run(srv, tt.doc, "nodepool", "create", "-f", "-"); !strings.Contains(errorText(err), tt.want) {
			t.Errorf("create -f of %q: %q, want %q", tt.doc, errorText(err), tt.want)
		}
	}
	// --cluster still comes before the file's.
	out, err = run(srv, strings.Replace(doc, "web", "web2", 1), "nodepool", "create", "-f", "-", "--cluster", "stage", "-o", "name")
	if err != nil || pools(t, srv, "stage")["web2"] == nil {
		t.Errorf("--cluster over the file: %v %s", err, out)
	}
}

// TestApplyIdempotentEveryPlatform: on every platform, a pool made by
// nodepool create and applied back from get -o yaml, and a pool applied
// from a minimal document, are unchanged by the next apply: the fields the
// server fills in (defaults, the platform type, a cluster's image) are not
// taken for changes.
func TestApplyIdempotentEveryPlatform(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	reg := catalog.Registry()
	for pt := range clusterFlags {
		if !reg.Profile(pt).Capabilities().NodePools {
			continue // k3s: nodes join by themselves
		}
		t.Run(string(pt), func(t *testing.T) {
			cl := createCluster(t, srv, "c-"+string(pt), pt)
			p := examplePool(t, srv, reg.Profile(pt), "made", cl, "--count", "2")
			got := mustRun(t, srv, "nodepool", "get", p.ID, "-o", "yaml")
			out, err := run(srv, got, "apply", "-f", "-")
			if err != nil || !strings.Contains(out, "= nodepool made in cluster c-"+string(pt)+" unchanged\n") {
				t.Errorf("get -o yaml | apply: %v\n%s", err, out)
			}
			block, err := json.Marshal(p.Spec.Platform)
			if err != nil {
				t.Fatal(err)
			}
			file := writeFile(t, "min.yaml", "name: min\ncluster: c-"+string(pt)+"\nspec: {platform: "+string(block)+"}\n")
			if out, err := run(srv, "", "apply", "-f", file); err != nil || !strings.Contains(out, "1 created") {
				t.Fatalf("a minimal pool: %v\n%s", err, out)
			}
			out, err = run(srv, "", "apply", "-f", file)
			if err != nil || !strings.Contains(out, "= nodepool min in cluster c-"+string(pt)+" unchanged\n") {
				t.Errorf("a minimal pool again: %v\n%s", err, out)
			}
			if got := generations(t, srv, cl); got[cl+"/made"] != 1 || got[cl+"/min"] != 1 {
				t.Errorf("generations: %v", got)
			}
		})
	}
}

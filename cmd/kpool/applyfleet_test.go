package main

import (
	"maps"
	"strings"
	"testing"
)

// fleetV1 is a fleet of three pools in two clusters.
const fleetV1 = `
name: web
cluster: prod
spec:
  nodeCount: 2
  labels: {team: web, tier: front}
  tags: {env: prod}
  platform: {gcp: {machineType: e2-small}}
---
name: batch
cluster: prod
spec:
  autoscaling: {enabled: true, minNodes: 1, maxNodes: 5}
  labels: {team: data}
  platform: {gcp: {machineType: e2-medium, zones: [us-central1-a]}}
---
name: api
cluster: stage
spec:
  labels: {team: web}
  platform: {gcp: {machineType: e2-small}}
`

// generations are the generation of every pool of the clusters, by
// "cluster/name".
func generations(t *testing.T, srv string, clusters ...string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, cl := range clusters {
		for name, p := range pools(t, srv, cl) {
			if !p.Deleting() {
				out[cl+"/"+name] = p.Generation
			}
		}
	}
	return out
}

// inOrder checks that out has each of want, in this order.
func inOrder(t *testing.T, what, out string, want ...string) {
	t.Helper()
	rest := out
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Errorf("%s: no %q (in order) in\n%s", what, w, out)
			return
		}
		rest = rest[i+len(w):]
	}
}

// TestApplyDeclarative: the file is the whole spec of each pool: applied
// twice it is a no-op the second time, and a label taken out of it is
// taken off the pool (the plan and diff say so).
func TestApplyDeclarative(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	createCluster(t, srv, "prod", fleetCloud)
	createCluster(t, srv, "stage", fleetCloud)
	v1 := writeFile(t, "fleet.yaml", fleetV1)
	inOrder(t, "first apply", mustRun(t, srv, "apply", "-f", v1),
		"+ nodepool web in cluster prod created\n", "+ nodepool batch in cluster prod created\n", "+ nodepool api in cluster stage created\n",
		"Applied: 3 created, 0 updated, 0 replaced, 0 deleted, 0 unchanged.\n")
	before := generations(t, srv, "prod", "stage")

	inOrder(t, "second apply", mustRun(t, srv, "apply", "-f", v1), "Applied: 0 created, 0 updated, 0 replaced, 0 deleted, 3 unchanged.\n")
	inOrder(t, "second plan", mustRun(t, srv, "apply", "-f", v1, "--dry-run"), "Plan: 0 to create, 0 to update, 0 to replace, 0 to delete, 3 unchanged.\n")
	if out, err := run(srv, "", "diff", "-f", v1); err != nil || out != "" {
		t.Errorf("diff of an applied file: %v %q", err, out)
	}
	if after := generations(t, srv, "prod", "stage"); !maps.Equal(before, after) || len(after) != 3 {
		t.Errorf("a second apply changed generations: %v, then %v", before, after)
	}

	// Take web's team label and its tags out of the file.
	v2 := writeFile(t, "fleet.yaml", strings.Replace(strings.Replace(fleetV1, "labels: {team: web, tier: front}", "labels: {tier: front}", 1), "  tags: {env: prod}\n", "", 1))
	inOrder(t, "plan of a removal", mustRun(t, srv, "apply", "-f", v2, "--dry-run"),
		"~ nodepool web in cluster prod will be updated\n", `    - spec.labels.team: "web"`, `    - spec.tags.env: "prod"`,
		"= nodepool batch in cluster prod unchanged\n", "Plan: 0 to create, 1 to update, 0 to replace, 0 to delete, 2 unchanged.\n")
	out, err := run(srv, "", "diff", "-f", v2)
	if code(err) != 1 {
		t.Errorf("diff of a removal: exit %d (%v)", code(err), err)
	}
	inOrder(t, "diff of a removal", out, "--- nodepool web in cluster prod (live)\n+++ nodepool web in cluster prod (file)\n", "-spec.labels.team: \"web\"\n", "-spec.tags.env: \"prod\"\n")
	inOrder(t, "apply of a removal", mustRun(t, srv, "apply", "-f", v2), "~ nodepool web in cluster prod updated (generation 2)\n")
	web := pools(t, srv, "prod")["web"]
	if !maps.Equal(web.Spec.Labels, map[string]string{"tier": "front"}) || len(web.Spec.Tags) != 0 || web.Spec.Count() != 2 {
		t.Errorf("web after the removal: %+v", web.Spec)
	}
	inOrder(t, "apply after the removal", mustRun(t, srv, "apply", "-f", v2), "3 unchanged.\n")

	// What list -o yaml prints applies as it is: nothing changes.
	list := mustRun(t, srv, "nodepool", "list", "-o", "yaml")
	out, err = run(srv, list, "apply", "-f", "-")
	if err != nil {
		t.Fatalf("list -o yaml | apply -f -: %v\n%s", err, out)
	}
	inOrder(t, "list | apply", out, "Applied: 0 created, 0 updated, 0 replaced, 0 deleted, 3 unchanged.\n")
	if after := generations(t, srv, "prod", "stage"); after["prod/web"] != 2 || after["prod/batch"] != 1 || after["stage/api"] != 1 {
		t.Errorf("list | apply changed generations: %v", after)
	}
}

// TestApplyPrune: --prune deletes the pools of the file's clusters that
// the file does not name (with -l, only those matching), never those of
// other clusters, nor a logical pool's members; without --prune nothing is
// deleted.
func TestApplyPrune(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	createCluster(t, srv, "prod", fleetCloud)
	createCluster(t, srv, "stage", fleetCloud)
	createCluster(t, srv, "dev", fleetCloud)
	mustRun(t, srv, "apply", "-f", writeFile(t, "fleet.yaml", fleetV1))
	createPool(t, srv, "other", "stage", "--machine-type", "e2-small", "--label", "team=web")
	createPool(t, srv, "outside", "dev", "--machine-type", "e2-small", "--label", "team=web")
	mustRun(t, srv, "logicalpool", "create", "cache", "--cluster", "prod", "--machine-type", "e2-small", "--zones", "1", "--count", "1")
	mustRun(t, srv, "apply", "-f", writeFile(t, "member.yaml", "name: cache-1\ncluster: prod\nspec: {placementPool: cache, zones: ['1'], platform: {gcp: {machineType: e2-small}}}\n"))
	all := generations(t, srv, "prod", "stage", "dev")

	// batch is taken out of the file.
	v2 := writeFile(t, "fleet.yaml", strings.Replace(fleetV1, "name: batch\n", "name: batch2\n", 1))
	out := mustRun(t, srv, "apply", "-f", v2)
	if strings.Contains(out, "- nodepool") || len(generations(t, srv, "prod", "stage", "dev")) != len(all)+1 {
		t.Errorf("apply without --prune deleted:\n%s", out)
	}

	inOrder(t, "prune plan", mustRun(t, srv, "apply", "-f", v2, "--prune", "--dry-run"),
		"= nodepool batch2 in cluster prod unchanged\n",
		"- nodepool batch in cluster prod will be deleted", "# nodepool cache-1 in cluster prod skipped by --prune: made by logical pool cache",
		"- nodepool other in cluster stage will be deleted", "Plan: 0 to create, 0 to update, 0 to replace, 2 to delete, 3 unchanged, 1 skipped.\n")
	diff, err := run(srv, "", "diff", "-f", v2, "--prune")
	if code(err) != 1 {
		t.Errorf("diff --prune: exit %d (%v)", code(err), err)
	}
	inOrder(t, "diff --prune", diff, "--- nodepool batch in cluster prod (live)\n+++ /dev/null\n", "-spec.labels.team: \"data\"\n")
	if got := generations(t, srv, "prod", "stage", "dev"); len(got) != len(all)+1 {
		t.Errorf("a dry run deleted: %v", got)
	}

	// -l: only the pools it matches are candidates.
	inOrder(t, "prune -l", mustRun(t, srv, "apply", "-f", v2, "--prune", "-l", "team=web"),
		"- nodepool other in cluster stage deleted", "0 replaced, 1 deleted, 3 unchanged.\n")
	got := generations(t, srv, "prod", "stage", "dev")
	if _, ok := got["stage/other"]; ok || got["prod/batch"] == 0 {
		t.Errorf("after --prune -l team=web: %v", got)
	}
	inOrder(t, "prune", mustRun(t, srv, "apply", "-f", v2, "--prune"), "- nodepool batch in cluster prod deleted", "1 deleted, 3 unchanged, 1 skipped.\n")
	got = generations(t, srv, "prod", "stage", "dev")
	want := map[string]int64{"prod/web": 1, "prod/batch2": 1, "prod/cache-1": 1, "stage/api": 1, "dev/outside": 1}
	if !maps.Equal(got, want) {
		t.Errorf("after --prune: %v, want %v", got, want)
	}

	// A file none of whose clusters is found prunes nothing, and says why.
	lost := writeFile(t, "lost.yaml", "name: web\ncluster: nowhere\nspec: {}\n")
	if out, err := run(srv, "", "apply", "-f", lost, "--prune"); code(err) != 1 || !strings.Contains(out, `No cluster named "nowhere"`) ||
		strings.Contains(out, "- nodepool") {
		t.Errorf("--prune of unknown clusters: %v\n%s", err, out)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-l", "team=web"}, "give --prune too"},
		{[]string{"--prune", "-l", "team in (a"}, "selector"},
	} {
		if _, err := run(srv, "", append([]string{"apply", "-f", v2}, tt.args...)...); !strings.Contains(errorText(err), tt.want) {
			t.Errorf("apply %v: %q, want %q", tt.args, errorText(err), tt.want)
		}
	}
}

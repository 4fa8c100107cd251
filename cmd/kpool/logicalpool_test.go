package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
)

// lpFlags make a logical pool of six nodes over zones 1-3 of a GKE cluster,
// falling back to two other machine types in order.
var lpFlags = []string{"--machine-type", "n2-standard-4", "--zones", "1,2,3", "--count", "6",
	"--fallback-machine-types", "n2d-standard-4,e2-standard-4", "--label", "tier=web", "--taint", "dedicated=web:NoSchedule"}

// lpCluster registers a GKE cluster of name's own (us-central1: zones 1-3
// are a, b, c), by the command line's words for it.
func lpCluster(t *testing.T, srv, name string) {
	t.Helper()
	mustRun(t, srv, "cluster", "create", name, "--platform", "gcp", "--project-id", "acme-lp", "--location", "us-central1", "--cluster-name", name)
}

// TestLogicalPoolCreate: the flags make the spec (the machine type in the
// platform's own field, the fallbacks in order, spot's on-demand fallback
// last), and the dry run prints the plan without creating anything.
func TestLogicalPoolCreate(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	lpCluster(t, srv, "lp-create")

	plan := mustRun(t, srv, append([]string{"logicalpool", "create", "web", "--cluster", "lp-create", "--dry-run"}, lpFlags...)...)
	for _, want := range []string{"Members it would make:", "web-1", "web-3", "Fallback order:",
		"1. n2-standard-4 in zones 1,2,3 (preferred)", "2. n2d-standard-4 in zones 1,2,3", "3. e2-standard-4 in zones 1,2,3"} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan lacks %q:\n%s", want, plan)
		}
	}
	if out, err := run(srv, "", "lp", "get", "web", "--cluster", "lp-create"); err == nil {
		t.Fatalf("a dry run created the logical pool: %s", out)
	}

	lp := decode[kpool.LogicalPool](t, srv, append([]string{"lp", "create", "web", "--cluster", "lp-create"}, lpFlags...)...)
	tm := lp.Spec.Template
	block, _ := json.Marshal(tm.Platform)
	if lp.Spec.NodeCount == nil || *lp.Spec.NodeCount != 6 || !strings.Contains(string(block), `"machineType":"n2-standard-4"`) ||
		tm.Labels["tier"] != "web" || len(tm.Taints) != 1 || len(lp.Status.Members) != 3 {
		t.Errorf("created %+v", lp)
	}
	if len(lp.Spec.Fallbacks) != 2 || lp.Spec.Fallbacks[0].MachineType != "n2d-standard-4" || lp.Spec.Fallbacks[1].MachineType != "e2-standard-4" {
		t.Errorf("fallbacks %+v", lp.Spec.Fallbacks)
	}

	spot := decode[api.LogicalPoolDryRun](t, srv, "lp", "create", "batch", "--cluster", "lp-create", "--machine-type", "n2-standard-4",
		"--zones", "1,2", "--min", "2", "--max", "8", "--spot", "--fallback-machine-types", "n2d-standard-4", "--fallback-on-demand", "--dry-run")
	fb := spot.LogicalPool.Spec.Fallbacks
	if len(fb) != 2 || fb[0].MachineType != "n2d-standard-4" || fb[1].Spot == nil || *fb[1].Spot || spot.LogicalPool.Spec.Autoscaling == nil {
		t.Errorf("spot dry run: %+v", spot.LogicalPool.Spec)
	}
}

// TestLogicalPoolCreateRefused: flags that cannot make a logical pool are
// refused before anything is sent.
func TestLogicalPoolCreateRefused(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	lpCluster(t, srv, "lp-refused")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"on-demand fallback without spot", []string{"x", "--cluster", "lp-refused", "--machine-type", "n2-standard-4", "--count", "2", "--fallback-on-demand"}, "give --spot too"},
		{"no count", []string{"x", "--cluster", "lp-refused", "--machine-type", "n2-standard-4"}, "give --count"},
		{"no name", []string{"--cluster", "lp-refused", "--count", "2"}, "NAME"},
		{"no cluster", []string{"x", "--count", "2"}, "--cluster is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := run(srv, "", append([]string{"logicalpool", "create"}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

// TestLogicalPoolReads: get shows the members table, list fits 80 columns,
// -o json is the API's object, and delete says which members it deletes.
func TestLogicalPoolReads(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	lpCluster(t, srv, "lp-reads")
	mustRun(t, srv, append([]string{"lp", "create", "web", "--cluster", "lp-reads"}, lpFlags...)...)

	get := mustRun(t, srv, "lp", "get", "web", "--cluster", "lp-reads")
	for _, want := range []string{"Cluster:", "lp-reads", "Count/Ready:", "6/0", "NAME", "MACHINE-TYPE", "MADE", "web-2", "n2-standard-4"} {
		if !strings.Contains(get, want) {
			t.Errorf("get lacks %q:\n%s", want, get)
		}
	}
	list := mustRun(t, srv, "lp", "list", "--cluster", "lp-reads")
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		if len([]rune(line)) > 80 {
			t.Errorf("list line over 80 columns: %q", line)
		}
	}
	for sel, want := range map[string]int{"tier=web": 1, "tier in (db,cache)": 0, "!tier": 0} {
		if l := decode[api.LogicalPoolList](t, srv, "lp", "list", "--cluster", "lp-reads", "-l", sel); len(l.LogicalPools) != want || l.Total != want {
			t.Errorf("list -l %q: %d logical pools (total %d), want %d", sel, len(l.LogicalPools), l.Total, want)
		}
	}
	if out := mustRun(t, srv, "lp", "list", "--cluster", "lp-reads", "-o", "custom-columns=NAME:.name,COUNT:.spec.nodeCount", "--sort-by", ".name"); out != "NAME   COUNT\nweb    6\n" {
		t.Errorf("list -o custom-columns:\n%s", out)
	}
	if _, err := run(srv, "", "lp", "list", "--cluster", "lp-reads", "-l", "tier in web"); err == nil || !strings.Contains(err.Error(), "--selector (-l)") {
		t.Errorf("list -l with a bad selector: %v", err)
	}
	if !strings.HasPrefix(list, "NAME") || !strings.Contains(list, "web") {
		t.Errorf("list:\n%s", list)
	}
	var l api.LogicalPoolList
	if err := json.Unmarshal([]byte(mustRun(t, srv, "lp", "list", "--cluster", "lp-reads", "-o", "json")), &l); err != nil || l.Total != 1 {
		t.Errorf("list -o json: %+v, %v", l, err)
	}
	// -o name, and what it prints taken back by get, as kubectl's.
	if names := mustRun(t, srv, "lp", "list", "--cluster", "lp-reads", "-o", "name"); names != "logicalpool/web\n" {
		t.Errorf("list -o name: %q", names)
	}
	if back := mustRun(t, srv, "lp", "get", "logicalpool/web", "--cluster", "lp-reads", "-o", "name"); back != "logicalpool/web\n" {
		t.Errorf("get logicalpool/web -o name: %q", back)
	}
	id := strings.TrimSpace(mustRun(t, srv, "cluster", "get", "lp-reads", "-o", "name"))
	if back := mustRun(t, srv, "cluster", "get", id, "-o", "jsonpath={.name}"); !strings.HasPrefix(id, "cluster/") || strings.TrimSpace(back) != "lp-reads" {
		t.Errorf("cluster get -o name: %q, taken back: %q", id, back)
	}

	del := mustRun(t, srv, "lp", "delete", "web", "--cluster", "lp-reads")
	if !strings.Contains(del, "deleting its members: web-1, web-2, web-3") {
		t.Errorf("delete:\n%s", del)
	}
}

// TestLogicalPoolScale: scale changes the count; --wait polls on the
// command's clock, and an interrupt stops the wait with a word that the
// change goes on at the server.
func TestLogicalPoolScale(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	lpCluster(t, srv, "lp-scale")
	mustRun(t, srv, append([]string{"lp", "create", "web", "--cluster", "lp-scale"}, lpFlags...)...)

	lp := decode[kpool.LogicalPool](t, srv, "lp", "scale", "web", "--cluster", "lp-scale", "--count", "9")
	if lp.Spec.NodeCount == nil || *lp.Spec.NodeCount != 9 {
		t.Fatalf("scaled: %+v", lp.Spec)
	}
	// No controller runs here: the nodes never come, and Ctrl-C ends the
	// wait at its first tick.
	interrupted := clock{tick: func(context.Context) error { return context.Canceled }}
	_, stderr, err := executeOn(interrupted, "", "lp", "scale", "web", "--cluster", "lp-scale", "--count", "3", "--wait",
		"--server", srv, "--user", testUser)
	if err == nil || !strings.Contains(err.Error(), "the change goes on at the server") || !strings.Contains(stderr, "nodes Ready") {
		t.Errorf("interrupted wait: %v\n%s", err, stderr)
	}
	if _, err := run(srv, "", "lp", "scale", "web", "--cluster", "lp-scale"); err == nil || !strings.Contains(err.Error(), "--count") {
		t.Errorf("scale without a size: %v", err)
	}
}

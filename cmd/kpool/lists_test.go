package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
)

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
	if len(lines) != 4 || !reflect.DeepEqual(strings.Fields(lines[0]), []string{"NAME", "PLATFORM", "TEAM", "PHASE", "REACHABLE", "AGE"}) {
		t.Fatalf("cluster list:\n%s", out)
	}
	for i, want := range [][]string{{"alpha", "gcp", "-", "Active"}, {"beta", "aws", "-", "Active"}} {
		if got := strings.Fields(lines[i+1])[:4]; !reflect.DeepEqual(got, want) {
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
	if len(lines) != 3 || !reflect.DeepEqual(strings.Fields(lines[0]), []string{"NAME", "CLUSTER", "MACHINE", "NODES", "PHASE", "AGE"}) {
		t.Fatalf("nodepool list:\n%s", out)
	}
	for i, want := range [][]string{{"fixed", "alpha", "e2-small", "-/3", "Pending"}, {"auto", "alpha", "e2-small", "-/2", "Pending"}} {
		if got := strings.Fields(lines[i+1]); !reflect.DeepEqual(got[:len(want)], want) {
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
	out := mustRun(t, srv, "nodepool", "update", id, "-f", edited, "-o", "wide")
	if f := strings.Fields(strings.Split(strings.TrimSpace(out), "\n")[1]); f[3] != "-/2" || f[7] != "1-5" || f[8] != "(2)" || f[9] != "7/0" {
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

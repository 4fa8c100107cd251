package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpool/kpool"
)

// TestCustomColumnsAndTemplates: -o custom-columns and -o go-template (and
// their file forms) on lists and single objects, as kubectl has them, with
// --sort-by and --no-headers; bad ones are refused naming -o.
func TestCustomColumnsAndTemplates(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := createCluster(t, srv, "cols", "gcp")
	createPool(t, srv, "web", c, "--machine-type", "e2-small", "--count", "3", "--label", "team=web")
	createPool(t, srv, "api", c, "--machine-type", "e2-small", "--count", "1")
	dir := t.TempDir()
	colFile := filepath.Join(dir, "cols.txt")
	tmplFile := filepath.Join(dir, "t.tmpl")
	if err := os.WriteFile(colFile, []byte("NAME   NODES\n.name  .spec.nodeCount\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tmplFile, []byte(`{{range .nodepools}}{{.name}}={{.spec.nodeCount}};{{end}}`), 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		args []string
		want string
	}{
		{"columns of a list", []string{"nodepool", "list", "-o", "custom-columns=NAME:.name,NODES:.spec.nodeCount,TEAM:.spec.labels.team", "--sort-by", ".name"},
			"NAME   NODES   TEAM\napi    1       <none>\nweb    3       web\n"},
		{"no headers, a path without its dot, braces", []string{"nodepool", "list", "-o", "custom-columns=N:name,C:{.spec.nodeCount}", "--no-headers", "--sort-by", ".spec.nodeCount"},
			"api   1\nweb   3\n"},
		{"an object in a column as JSON", []string{"nodepool", "get", "web", "-o", "custom-columns=LABELS:.spec.labels"}, "LABELS\n{\"team\":\"web\"}\n"},
		{"columns from a file", []string{"nodepool", "list", "-o", "custom-columns-file=" + colFile, "--sort-by", ".name"}, "NAME   NODES\napi    1\nweb    3\n"},
		{"columns of clusters", []string{"cluster", "list", "-o", "custom-columns=NAME:.name,PLATFORM:.spec.platform.type"}, "NAME   PLATFORM\ncols   gcp\n"},
		{"a template over the list", []string{"nodepool", "list", "-o", `go-template={{range .nodepools}}{{.name}} {{end}}`, "--sort-by", ".name"}, "api web "},
		{"numbers compare as numbers", []string{"nodepool", "list", "-o", `go-template={{range .nodepools}}{{if gt .spec.nodeCount 2}}{{.name}}{{end}}{{end}}`}, "web"},
		{"a template over one pool", []string{"nodepool", "get", "web", "-o", `go-template={{.name}}: {{.spec.labels.team}}`}, "web: web"},
		{"a template from a file", []string{"nodepool", "list", "-o", "go-template-file=" + tmplFile, "--sort-by", ".name"}, "api=1;web=3;"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustRun(t, srv, tt.args...); got != tt.want {
				t.Errorf("got\n%q, want\n%q", got, tt.want)
			}
		})
	}

	bad := []struct {
		name, output, want string
	}{
		{"no columns", "custom-columns=", "--output (-o) custom-columns=: no columns: give HEADER:PATH pairs"},
		{"a column without a path", "custom-columns=NAME:.name,NODES", `--output (-o) custom-columns=NAME:.name,NODES: column 2 "NODES" is not HEADER:PATH`},
		{"a bad path", "custom-columns=NAME:{.name", "column 1 (NAME): unclosed action"},
		{"a missing columns file", "custom-columns-file=" + filepath.Join(dir, "none"), "--output (-o) custom-columns-file="},
		{"a columns file of one line", "custom-columns-file=" + tmplFile, "the file must have two lines"},
		{"a template that does not parse", "go-template={{.name", `--output (-o) go-template={{.name: template: output:1: unclosed action`},
		{"an empty template", "go-template=", "the template is empty"},
		{"a missing template file", "go-template-file=" + filepath.Join(dir, "none"), "--output (-o) go-template-file="},
		{"a template that fails", "go-template={{.name.first}}", "--output (-o) go-template: template: output:1:7: executing"},
		{"not a format", "go-templates={{.name}}", "is not a format"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := run(srv, "", "nodepool", "get", "web", "-o", tt.output)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("-o %s: error %v, want %q", tt.output, err, tt.want)
			}
		})
	}
}

// TestSelector: nodepool list -l picks pools by their labels with
// kubectl's syntax, also while watching; a bad selector is refused.
func TestSelector(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := createCluster(t, srv, "sel", kpool.PlatformType("gcp"))
	for _, p := range []struct{ name, labels string }{{"web", "team=web,env=prod"}, {"api", "team=api,env=staging"}, {"gpu", "gpu=yes"}} {
		flags := []string{"--machine-type", "e2-small", "--count", "1"}
		for _, l := range strings.Split(p.labels, ",") {
			flags = append(flags, "--label", l)
		}
		createPool(t, srv, p.name, c, flags...)
	}
	tests := []struct {
		selector string
		want     string
	}{
		{"team=web", "web"},
		{"team!=web", "api gpu"},
		{"env in (prod,staging)", "api web"},
		{"env notin (prod)", "api gpu"},
		{"gpu", "gpu"},
		{"!gpu,team", "api web"},
		{"team=nobody", ""},
	}
	for _, tt := range tests {
		got := mustRun(t, srv, "nodepool", "list", "-l", tt.selector, "--sort-by", ".name", "-o", "jsonpath={.nodepools[*].name}")
		if strings.TrimSpace(got) != tt.want {
			t.Errorf("-l %q: %q, want %q", tt.selector, got, tt.want)
		}
	}
	if out := mustRun(t, srv, "nodepool", "list", "--selector", "team=api", "--no-headers"); !strings.HasPrefix(out, "api ") || strings.Count(out, "\n") != 1 {
		t.Errorf("--selector team=api as a table:\n%s", out)
	}
	for _, bad := range []string{"=web", "env in (prod", "team in prod", "a b"} {
		_, err := run(srv, "", "nodepool", "list", "-l", bad)
		if err == nil || !strings.Contains(err.Error(), "--selector (-l)") || !strings.Contains(err.Error(), "is not a label selector") {
			t.Errorf("-l %q: %v", bad, err)
		}
	}
}

// TestListScope: a context's cluster scopes nodepool list as a kubectl
// namespace does; --cluster beats it, -A lists every cluster's, and -A with
// --cluster is refused.
func TestListScope(t *testing.T) {
	srv := newServer(t)
	t.Setenv("KPOOL_CONFIG", filepath.Join(t.TempDir(), "config.yaml"))
	a := createCluster(t, srv, "scope-a", kpool.PlatformType("gcp"))
	b := createCluster(t, srv, "scope-b", kpool.PlatformType("gcp"))
	createPool(t, srv, "in-a", a, "--machine-type", "e2-small", "--count", "1")
	createPool(t, srv, "in-b", b, "--machine-type", "e2-small", "--count", "1")
	if _, _, err := execute("", "config", "set-context", "dev", "--server", srv, "--user", testUser, "--cluster", "scope-a"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := execute("", "config", "use-context", "dev"); err != nil {
		t.Fatal(err)
	}
	names := func(args ...string) string {
		out, stderr, err := execute("", append([]string{"nodepool", "list", "--sort-by", ".name", "-o", "jsonpath={.nodepools[*].name}"}, args...)...)
		if err != nil {
			t.Fatalf("nodepool list %v: %v %s", args, err, stderr)
		}
		return strings.TrimSpace(out)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{{nil, "in-a"}, {[]string{"--cluster", "scope-b"}, "in-b"}, {[]string{"-A"}, "in-a in-b"}, {[]string{"--all-clusters"}, "in-a in-b"}} {
		if got := names(tt.args...); got != tt.want {
			t.Errorf("nodepool list %v in a context of scope-a: %q, want %q", tt.args, got, tt.want)
		}
	}
	out, _, err := execute("", "nodepool", "list", "-A")
	if err != nil || !strings.Contains(out, "in-a   scope-a") || !strings.Contains(out, "in-b   scope-b") {
		t.Errorf("-A as a table names each pool's cluster: %v\n%s", err, out)
	}
	if _, _, err := execute("", "nodepool", "list", "-A", "--cluster", "scope-b"); err == nil || !strings.Contains(err.Error(), "leave out --cluster") {
		t.Errorf("-A --cluster: %v", err)
	}
	_, stderr, err := execute("", "nodepool", "list", "-l", "team=none")
	if err != nil || !strings.Contains(stderr, "No node pools found in cluster scope-a (the context's; -A lists every cluster's)") {
		t.Errorf("an empty list in the context's cluster: %v %q", err, stderr)
	}
}

// TestGetWithoutNames: nodepool get with no name lists pools, those -l
// matches; -l with names is refused.
func TestGetWithoutNames(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := createCluster(t, srv, "getall", "gcp")
	createPool(t, srv, "web", c, "--machine-type", "e2-small", "--count", "1", "--label", "team=web")
	createPool(t, srv, "api", c, "--machine-type", "e2-small", "--count", "1")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "api web"},
		{[]string{"-l", "team=web"}, "web"},
		{[]string{"--selector", "team", "--cluster", "getall"}, "web"},
	} {
		got := mustRun(t, srv, append([]string{"nodepool", "get", "--sort-by", ".name", "-o", "jsonpath={.nodepools[*].name}"}, tt.args...)...)
		if strings.TrimSpace(got) != tt.want {
			t.Errorf("nodepool get %v: %q, want %q", tt.args, got, tt.want)
		}
	}
	if out := mustRun(t, srv, "nodepool", "get", "-l", "team=web"); !strings.HasPrefix(out, "NAME ") || !strings.Contains(out, "\nweb    getall ") {
		t.Errorf("nodepool get -l team=web as a table:\n%s", out)
	}
	if _, err := run(srv, "", "nodepool", "get", "web", "-l", "team=web"); err == nil || !strings.Contains(err.Error(), "give it or names, not both") {
		t.Errorf("get NAME -l: %v", err)
	}
	if p := decode[kpool.NodePool](t, srv, "nodepool", "get", "web"); p.Name != "web" {
		t.Errorf("get web: %+v", p)
	}
}

package main

import (
	"strings"
	"testing"

	"github.com/kpool/kpool"
)

// TestOutputFormats: -o wide, -o name (which commands take back), -o
// jsonpath, --no-headers and --sort-by, on the real command tree.
func TestOutputFormats(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := createCluster(t, srv, "fmt", kpool.PlatformGCP)
	b := createPool(t, srv, "bravo", c, "--machine-type", "e2-small", "--count", "3", "--label", "team=b")
	a := createPool(t, srv, "alpha", c, "--machine-type", "e2-small", "--count", "1")

	wide := mustRun(t, srv, "nodepool", "list", "-o", "wide")
	if !strings.Contains(wide, "PROVIDER NAME") || !strings.Contains(wide, "team=b") {
		t.Errorf("-o wide:\n%s", wide)
	}
	noHead := mustRun(t, srv, "nodepool", "list", "--no-headers")
	if strings.Contains(noHead, "NAME") || len(strings.Split(strings.TrimSpace(noHead), "\n")) != 2 {
		t.Errorf("--no-headers:\n%s", noHead)
	}
	names := mustRun(t, srv, "nodepool", "list", "-o", "name", "--sort-by", ".name")
	if names != "nodepool/"+a.ID+"\nnodepool/"+b.ID+"\n" {
		t.Errorf("-o name --sort-by .name:\n%s", names)
	}
	// What -o name prints, get takes back.
	if p := decode[kpool.NodePool](t, srv, "nodepool", "get", "nodepool/"+a.ID); p.ID != a.ID {
		t.Errorf("get nodepool/ID: %s", p.ID)
	}
	bySize := mustRun(t, srv, "nodepool", "list", "-o", "jsonpath={.nodepools[*].name}", "--sort-by", "{.spec.nodeCount}")
	if strings.TrimSpace(bySize) != "alpha bravo" {
		t.Errorf("jsonpath sorted by nodeCount: %q", bySize)
	}
	one := mustRun(t, srv, "nodepool", "get", "bravo", "-o", "jsonpath={.spec.labels.team}")
	if strings.TrimSpace(one) != "b" {
		t.Errorf("jsonpath of one pool: %q", one)
	}
	if missing := mustRun(t, srv, "nodepool", "get", "bravo", "-o", "jsonpath={.spec.labels.nosuch}"); strings.TrimSpace(missing) != "" {
		t.Errorf("jsonpath of a key the pool lacks: %q, want nothing (kubectl's --allow-missing-template-keys)", missing)
	}
	for _, tc := range []struct{ args []string }{{[]string{"nodepool", "list", "-o", "jsonpath={.nodepools[}"}}, {[]string{"nodepool", "list", "--sort-by", "{.x"}}} {
		if _, err := run(srv, "", tc.args...); err == nil {
			t.Errorf("%v: no error", tc.args)
		}
	}
}

// TestListsShowEverything: a list pages through every item by default;
// one page (--limit) says how many more there are.
func TestListsShowEverything(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := createCluster(t, srv, "many", kpool.PlatformGCP)
	for _, n := range []string{"a", "b", "c"} {
		createPool(t, srv, n, c, "--machine-type", "e2-small", "--count", "1")
	}
	out, stderr, err := execute("", "nodepool", "list", "--limit", "2", "--no-headers", "--server", srv, "--user", testUser)
	if err != nil || len(strings.Split(strings.TrimSpace(out), "\n")) != 2 || !strings.Contains(stderr, "Showing 2 of 3: --all lists every one, --after ") {
		t.Errorf("one page: %v\n%s\n%s", err, out, stderr)
	}
	out, stderr, err = execute("", "nodepool", "list", "--limit", "2", "--all", "--no-headers", "--server", srv, "--user", testUser)
	if err != nil || len(strings.Split(strings.TrimSpace(out), "\n")) != 3 || stderr != "" {
		t.Errorf("pages of 2, all of them: %v\n%s\n%s", err, out, stderr)
	}
	if l := decode[struct{ NodePools []kpool.NodePool }](t, srv, "nodepool", "list"); len(l.NodePools) != 3 {
		t.Errorf("the default: %d pools", len(l.NodePools))
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kpool/kpool/api"
)

// ttyIn and ttyOut stand for a terminal's stdin and stdout: isTerminal
// takes their word for it.
type ttyIn struct{ io.Reader }

func (ttyIn) IsTerminal() bool { return true }

type ttyOut struct{ bytes.Buffer }

func (*ttyOut) IsTerminal() bool { return true }

// onTerminal runs kpool args against srv as testUser with stdin and stdout
// a terminal, the person's answers on stdin.
func onTerminal(srv, answers string, args ...string) (stdout, stderr string, err error) {
	root := newRoot()
	var out ttyOut
	var errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetIn(ttyIn{strings.NewReader(answers)})
	root.SetArgs(append(args, "--server", srv, "--user", testUser))
	err = root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// TestSeveralNames: get and delete take several names or IDs (and what -o
// name prints); one that cannot be found is an error for it alone.
func TestSeveralNames(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	prod := drivenCluster(t, srv, "prod")
	drivenCluster(t, srv, "stage")
	for _, n := range []string{"a", "b", "c"} {
		createPool(t, srv, n, prod, "--machine-type", "e2-small")
	}

	out, errOut, err := execute("", "nodepool", "get", "a", "nowhere", "c", "--cluster", "prod", "-o", "name", "--server", srv, "--user", testUser)
	if code := exitCode(err, &bytes.Buffer{}); code != 1 || strings.Count(out, "nodepool/") != 2 ||
		!strings.Contains(errOut, `Error: NOT_FOUND: No node pool named "nowhere" in cluster prod`) {
		t.Errorf("get a nowhere c: exit %d\n%s\n%s", code, out, errOut)
	}

	// What -o name prints is read back, as xargs passes it.
	names := strings.Fields(mustRun(t, srv, "nodepool", "list", "-o", "name"))
	// Several with -o yaml or json: one list document, as kubectl's List,
	// in the shape of the list command's, which apply takes back unchanged.
	yml := mustRun(t, srv, append([]string{"nodepool", "get", "-o", "yaml"}, names...)...)
	var pools api.NodePoolList
	if err := yaml.UnmarshalStrict([]byte(yml), &pools); err != nil || len(names) != 3 || len(pools.NodePools) != 3 || pools.Total != 3 {
		t.Errorf("get %v -o yaml: one list of three wanted (%v):\n%s", names, err, yml)
	}
	if out, err := run(srv, yml, "apply", "-f", "-"); err != nil || !strings.Contains(out, "3 unchanged") {
		t.Errorf("get -o yaml | apply -f -: %v\n%s", err, out)
	}
	clusters := strings.Fields(mustRun(t, srv, "cluster", "list", "-o", "name"))
	var cl struct {
		Clusters []struct{ Name string } `json:"clusters"`
	}
	js := mustRun(t, srv, append([]string{"cluster", "get", "-o", "json"}, clusters...)...)
	if err := json.Unmarshal([]byte(js), &cl); err != nil || len(clusters) != 2 || len(cl.Clusters) != 2 || cl.Clusters[1].Name != "stage" {
		t.Errorf("cluster get prod stage -o json: %v\n%s", err, js)
	}

	// Not a terminal: delete does not ask; both go.
	if out := mustRun(t, srv, "nodepool", "delete", "a", "b", "--cluster", "prod"); out != "node pool a in cluster prod deleted\nnode pool b in cluster prod deleted\n" {
		t.Errorf("delete a b: %q", out)
	}
	if left := strings.Fields(mustRun(t, srv, "nodepool", "list", "-o", "jsonpath={.nodepools[*].name}")); len(left) != 1 || left[0] != "c" {
		t.Errorf("left after delete a b: %q", left)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"cluster", "get"}, "give the cluster's NAME or ID (or several)"}, // nodepool get with none lists (TestGetWithoutNames)
		{[]string{"nodepool", "get", "c", ""}, "argument 2: the node pool's NAME or ID must not be empty"},
		{[]string{"nodepool", "get", "a", "c", "-w"}, "-w follows one node pool"},
	} {
		if _, err := run(srv, "", tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: %v, want %q", tt.args, err, tt.want)
		}
	}
}

// TestDeleteConfirm: on a terminal delete asks, naming what it deletes, and
// deletes only on yes; --yes and --dry-run do not ask.
func TestDeleteConfirm(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	prod := drivenCluster(t, srv, "prod")
	drivenCluster(t, srv, "empty")
	for _, n := range []string{"a", "b", "c", "d"} {
		createPool(t, srv, n, prod, "--machine-type", "e2-small", "--count", "3")
	}
	lpCluster(t, srv, "lp-confirm")
	mustRun(t, srv, append([]string{"lp", "create", "web", "--cluster", "lp-confirm"}, lpFlags...)...)

	tests := []struct {
		name, answers string
		args          []string
		code          int
		stdout        string
		asked         []string // the questions on stderr, in order
	}{
		{"no, then yes", "n\ny\n", []string{"nodepool", "delete", "a", "b", "--cluster", "prod"}, 1,
			"node pool b in cluster prod deleted\n",
			[]string{"Delete node pool a in cluster prod (3 nodes)? [y/N] ", "Delete node pool b in cluster prod (3 nodes)? [y/N] "}},
		{"end of input is no", "", []string{"nodepool", "delete", "c", "--cluster", "prod"}, 1, "",
			[]string{"Delete node pool c in cluster prod (3 nodes)? [y/N] "}},
		{"--dry-run does not ask", "", []string{"nodepool", "delete", "c", "--cluster", "prod", "--dry-run"}, 0,
			"- nodepool", nil},
		{"-y does not ask", "", []string{"nodepool", "delete", "c", "d", "--cluster", "prod", "-y"}, 0,
			"node pool c in cluster prod deleted\nnode pool d in cluster prod deleted\n", nil},
		{"cluster", "yes\n", []string{"cluster", "delete", "empty"}, 0, "cluster empty deleted\n",
			[]string{"Delete cluster empty from kpool (the Kubernetes cluster itself stays)? [y/N] "}},
		{"logical pool", "N\n", []string{"lp", "delete", "web", "--cluster", "lp-confirm"}, 1, "",
			[]string{"Delete logical pool web in cluster lp-confirm and the 3 member pools it made? [y/N] "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := onTerminal(srv, tt.answers, tt.args...)
			if code := exitCode(err, &bytes.Buffer{}); code != tt.code || !strings.HasPrefix(out, tt.stdout) {
				t.Errorf("exit %d, want %d; stdout %q, want %q…; stderr %q", code, tt.code, out, tt.stdout, errOut)
			}
			rest := errOut
			for _, q := range tt.asked {
				i := strings.Index(rest, q)
				if i < 0 {
					t.Fatalf("not asked %q; stderr %q", q, errOut)
				}
				rest = rest[i+len(q):]
			}
			if tt.asked == nil && strings.Contains(errOut, "[y/N]") {
				t.Errorf("asked: %q", errOut)
			}
			if tt.code != 0 && !strings.Contains(errOut+errText(err), "nothing deleted, as the answer was not y (--yes deletes without asking)") {
				t.Errorf("a no says nothing was deleted: %q %v", errOut, err)
			}
		})
	}
	// What was answered no to is still there.
	if got := strings.TrimSpace(mustRun(t, srv, "nodepool", "list", "-o", "jsonpath={.nodepools[*].name}")); got != "a" {
		t.Errorf("pools left: %q, want a", got)
	}
	if _, err := run(srv, "", "lp", "get", "web", "--cluster", "lp-confirm"); err != nil {
		t.Errorf("the logical pool answered no to: %v", err)
	}
}

// drivenCluster registers a cluster of name's own on the platform whose pools
// newServer's fake driver acts on, by the command line's words (see
// lpCluster), and returns its ID.
func drivenCluster(t *testing.T, srv, name string) string {
	t.Helper()
	lpCluster(t, srv, name)
	return strings.TrimSpace(mustRun(t, srv, "cluster", "get", name, "-o", "jsonpath={.id}"))
}

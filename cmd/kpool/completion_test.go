package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool"
)

// complete runs kpool __complete args (the last one the word being
// completed) and returns the completions offered (without descriptions),
// the directive line, and stderr.
func complete(args ...string) (values []string, directive, stderr string) {
	out, errOut, _ := execute("", append([]string{cobra.ShellCompRequestCmd}, args...)...)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	directive = lines[len(lines)-1]
	for _, l := range lines[:len(lines)-1] {
		v, _, _ := strings.Cut(l, "\t")
		values = append(values, v)
	}
	return values, directive, errOut
}

func TestCompletion(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	prod := createCluster(t, srv, "prod", kpool.PlatformGCP)
	stage := createCluster(t, srv, "stage", kpool.PlatformGCP)
	web := createPool(t, srv, "web", prod, "--machine-type", "e2-small")
	worker := createPool(t, srv, "worker", prod, "--machine-type", "e2-small")
	webStage := createPool(t, srv, "web", stage, "--machine-type", "e2-small")
	// A server that fails every request (not one that is down: its port
	// could be another test's server by now).
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "<html>bad gateway</html>", http.StatusBadGateway)
	}))
	t.Cleanup(down.Close)

	as := []string{"--server", srv, "--user", testUser}
	noFiles := ":4" // ShellCompDirectiveNoFileComp
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"pools, every cluster's", append([]string{"nodepool", "get"}, append(as, "")...),
			[]string{"web", web.ID, "worker", worker.ID, "web", webStage.ID}},
		{"pools by prefix", append([]string{"nodepool", "delete"}, append(as, "wo")...), []string{"worker"}},
		{"pools of --cluster, named", append([]string{"nodepool", "status", "--cluster", "stage"}, append(as, "")...), []string{"web", webStage.ID}},
		{"pools for update and scale", append([]string{"nodepool", "scale"}, append(as, web.ID[:20])...), []string{web.ID}},
		{"one argument only", append([]string{"nodepool", "update", web.ID}, append(as, "")...), nil},
		{"--cluster", append([]string{"nodepool", "list"}, append(as, "--cluster", "")...), []string{"prod", prod, "stage", stage}},
		{"--cluster by prefix", append([]string{"nodepool", "create", "x"}, append(as, "--cluster", "st")...), []string{"stage"}},
		{"--cluster of events", append([]string{"events"}, append(as, "--cluster", "pr")...), []string{"prod"}},
		{"clusters for cluster get", append([]string{"cluster", "get"}, append(as, "s")...), []string{"stage"}},
		{"server failing: nothing", []string{"nodepool", "get", "--server", down.URL, "--user", testUser, ""}, nil},
		{"no credentials: nothing", []string{"nodepool", "get", "--server", srv, "--user", "", "--token", "", ""}, nil},
		{"unknown --cluster: nothing", append([]string{"nodepool", "get", "--cluster", "nowhere"}, append(as, "")...), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, directive, stderr := complete(tt.args...)
			slices.Sort(got)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if !slices.Equal(got, want) || directive != noFiles {
				t.Errorf("completions %q %s, want %q %s", got, directive, want, noFiles)
			}
			// Nothing but cobra's own line on stderr: no errors shown.
			if strings.TrimSpace(stderr) != "Completion ended with directive: ShellCompDirectiveNoFileComp" {
				t.Errorf("stderr %q", stderr)
			}
		})
	}

	// Descriptions name the pool's cluster by its name, as a person reads it.
	out, _, _ := execute("", append([]string{cobra.ShellCompRequestCmd, "nodepool", "get"}, append(as, "wo")...)...)
	if !strings.Contains(out, "worker\tnode pool "+worker.ID+" in cluster prod") {
		t.Errorf("completion of worker does not name its cluster prod:\n%s", out)
	}

	// The scripts themselves, one per shell.
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		out, _, err := execute("", "completion", shell)
		if err != nil || !strings.Contains(out, "kpool") || !strings.Contains(out, cobra.ShellCompRequestCmd) {
			t.Errorf("completion %s: %v\n%.200s", shell, err, out)
		}
	}
}

// TestExamples: every command that runs shows examples in its --help.
func TestExamples(t *testing.T) {
	t.Parallel()
	root := newRoot()
	n := 0
	walk(root, func(c *cobra.Command) {
		if !c.Runnable() || c.Hidden {
			return
		}
		n++
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no Example", c.CommandPath())
			return
		}
		// Each example line that runs kpool names this command.
		for _, l := range strings.Split(c.Example, "\n") {
			l = strings.TrimSpace(l)
			if strings.HasPrefix(l, "kpool ") && c.Parent() != nil && c.Parent().Parent() != nil &&
				!strings.Contains(l, c.Parent().Name()) {
				t.Errorf("%s: example %q is not of it", c.CommandPath(), l)
			}
		}
	})
	if n < 25 {
		t.Errorf("only %d runnable commands", n)
	}
	// examples names no command that does not exist.
	for path := range examples {
		if c, _, err := root.Find(strings.Fields(path)); err != nil || c.CommandPath() != "kpool "+path {
			t.Errorf("examples[%q]: no such command", path)
		}
	}
	out, _, err := execute("", "nodepool", "create", "--help")
	if err != nil || !strings.Contains(out, "Examples:\n  kpool nodepool create web --cluster prod") {
		t.Errorf("nodepool create --help:\n%s", out)
	}
}

// TestCompletionContext: with no flags, completion asks the context's
// server as its user, and offers the pools of its cluster.
func TestCompletionContext(t *testing.T) {
	srv := newServer(t)
	prod := createCluster(t, srv, "prod", kpool.PlatformGCP)
	stage := createCluster(t, srv, "stage", kpool.PlatformGCP)
	createPool(t, srv, "web", prod, "--machine-type", "e2-small")
	webStage := createPool(t, srv, "web", stage, "--machine-type", "e2-small")
	t.Setenv("KPOOL_CONFIG", filepath.Join(t.TempDir(), "config.yaml"))
	for _, k := range []string{"KPOOL_SERVER", "KPOOL_USER", "KPOOL_TOKEN", "KPOOL_CONTEXT"} {
		t.Setenv(k, "")
	}
	if _, _, err := execute("", "config", "set-context", "stage", "--server", srv, "--user", testUser, "--cluster", "stage"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := execute("", "config", "use-context", "stage"); err != nil {
		t.Fatal(err)
	}
	got, _, _ := complete("nodepool", "get", "")
	slices.Sort(got)
	want := []string{webStage.ID, "web"}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("pools of the context's cluster: %q, want %q", got, want)
	}
	if got, _, _ := complete("nodepool", "list", "--cluster", "p"); !slices.Equal(got, []string{"prod"}) {
		t.Errorf("--cluster from the context's server: %q", got)
	}
}

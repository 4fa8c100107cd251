package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kpool/kpool"
)

// Nothing the CLI prints, help or error, shows a secret from the
// environment: these tests set the variables that hold secrets (and, for
// help, every variable a flag reads) to random values and walk every
// command of the tree, so that a command added later is covered without
// being named here.

// minLeak is the length of the shortest piece of a secret that counts as
// showing it.
const minLeak = 8

// secrets are random values, by what they are, that must not be printed.
type secrets map[string]string

// leak returns what the first secret found in out is and the piece of it
// found (the whole, or any minLeak characters), or "" when none is.
func (s secrets) leak(out string) (what, piece string) {
	for _, what := range slices.Sorted(func(yield func(string) bool) {
		for k := range s {
			if !yield(k) {
				return
			}
		}
	}) {
		v := s[what]
		for i := 0; i+minLeak <= len(v); i++ {
			if p := v[i : i+minLeak]; strings.Contains(out, p) {
				return what, p
			}
		}
	}
	return "", ""
}

// check fails the test if anything a command printed or returned shows a
// secret: its stdout and stderr, its error and the error as main prints it.
func (s secrets) check(t *testing.T, args []string, stdout, stderr string, err error) {
	t.Helper()
	var printed strings.Builder
	exitCode(err, &printed)
	errText := ""
	if err != nil {
		errText = err.Error()
	}
	for name, out := range map[string]string{"stdout": stdout, "stderr": stderr, "the error": errText, "the printed error": printed.String()} {
		if what, piece := s.leak(out); what != "" {
			t.Errorf("kpool %s: %s shows the %s (%q):\n%s", strings.Join(args, " "), name, what, piece, out)
		}
	}
}

// token is a random token of the API's form (kpool_ and 43 characters).
func token(t *testing.T) string {
	return kpool.TokenPrefix + base64.RawURLEncoding.EncodeToString(mustDecodeHex(t, randomHex(t, 32)))
}

func mustDecodeHex(t *testing.T, s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// tree is every command of a new root, cobra's help command included.
func tree() []*cobra.Command {
	root := newRoot()
	root.InitDefaultHelpCmd()
	var all []*cobra.Command
	walk(root, func(c *cobra.Command) { all = append(all, c) })
	return all
}

// argv is a command's path as arguments, without kpool.
func argv(c *cobra.Command) []string {
	return strings.Fields(strings.TrimPrefix(c.CommandPath(), c.Root().Name()))
}

// kpoolVar is a variable of kpool's named in a help text.
var kpoolVar = regexp.MustCompile(`\bKPOOL_[A-Z0-9_]*[A-Z0-9]\b`)

// variables are the environment variables the tree reads for flags, those
// its help texts name (as a flag that reads one at start would), and the
// ones that hold secrets.
func variables(cmds []*cobra.Command) []string {
	seen := map[string]bool{"KPOOL_TOKEN": true, "KPOOL_DATABASE": true}
	note := func(text string) {
		for _, v := range kpoolVar.FindAllString(text, -1) {
			seen[v] = true
		}
	}
	for _, c := range cmds {
		note(c.Short + c.Long + c.Example)
		visit := func(fl *pflag.Flag) {
			if v := envOf(fl); v != "" {
				seen[v] = true
			}
			note(fl.Usage)
		}
		c.LocalFlags().VisitAll(visit)
		c.InheritedFlags().VisitAll(visit)
	}
	return slices.Sorted(func(yield func(string) bool) {
		for v := range seen {
			if !yield(v) {
				return
			}
		}
	})
}

// defaults are the flags' defaults, by command path and flag, of a new
// tree made in the current environment.
func defaults() map[string]string {
	out := map[string]string{}
	for _, c := range tree() {
		c.LocalFlags().VisitAll(func(fl *pflag.Flag) { out[c.CommandPath()+" --"+fl.Name] = fl.DefValue })
	}
	return out
}

// TestHelpShowsNoEnvironment sets every variable the CLI reads to a random
// value and runs --help (and kpool help) for every command: no value may
// show. A flag whose default a variable changes fails too, even a hidden
// one: the environment is read when a command runs, not when its flags
// are made.
func TestHelpShowsNoEnvironment(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	cmds := tree()
	vars := variables(cmds)
	for _, v := range vars {
		t.Setenv(v, "")
	}
	clean := defaults()
	s := secrets{}
	for _, v := range vars {
		s[v] = randomHex(t, 12)
		t.Setenv(v, strings.ToLower(v[len("KPOOL_"):])+"-"+s[v])
	}
	for flag, def := range defaults() {
		if def != clean[flag] {
			t.Errorf("%s: its default %q comes from the environment (without it, %q)", flag, def, clean[flag])
		}
	}
	for _, c := range cmds {
		for _, args := range [][]string{append(argv(c), "--help"), append([]string{"help"}, argv(c)...)} {
			stdout, stderr, err := execute("", args...)
			if err != nil || !strings.Contains(stdout, "Usage:") {
				t.Errorf("kpool %s: %v, no usage in\n%s", strings.Join(args, " "), err, stdout)
			}
			s.check(t, args, stdout, stderr, err)
		}
	}
	for _, want := range []string{"kpool nodepool", "kpool token create", "kpool serve", "kpool config set-context", "kpool help"} {
		if !slices.ContainsFunc(cmds, func(c *cobra.Command) bool { return c.CommandPath() == want }) {
			t.Errorf("the walk missed %s", want)
		}
	}
	t.Logf("--help and help of %d commands, %d variables set", len(cmds), len(vars))
}

// TestBoundFlagsNameTheirVariable: the help of a flag the environment
// sets names the variable (never its value).
func TestBoundFlagsNameTheirVariable(t *testing.T) {
	for _, c := range tree() {
		c.LocalFlags().VisitAll(func(fl *pflag.Flag) {
			if v := envOf(fl); v != "" && !strings.Contains(fl.Usage, v) {
				t.Errorf("%s --%s: its help does not name %s: %q", c.CommandPath(), fl.Name, v, fl.Usage)
			}
		})
	}
}

// secretEnv is an environment that holds secrets, for
// TestErrorsShowNoSecret: setup puts an API token where the CLI reads one
// and returns it; database is a KPOOL_DATABASE with the password pw, at the
// closed address.
type secretEnv struct {
	name     string
	setup    func(t *testing.T) string
	database func(pw, closed string) string
}

// secretEnvs hold the API token in KPOOL_TOKEN (random, or of a token's
// form), or in the file or variable a context names, and the database
// password in KPOOL_DATABASE's URL, as its userinfo or a parameter.
var secretEnvs = []secretEnv{
	{"KPOOL_TOKEN, a password in the URL", func(t *testing.T) string {
		tok := randomHex(t, 20)
		t.Setenv("KPOOL_TOKEN", tok)
		return tok
	}, userinfoPassword},
	{"KPOOL_TOKEN of a token's form, a password parameter", func(t *testing.T) string {
		tok := token(t)
		t.Setenv("KPOOL_TOKEN", tok)
		return tok[len(kpool.TokenPrefix):]
	}, func(pw, closed string) string {
		return "postgresql://kpool@" + closed + "/kpool?sslmode=disable&password=" + pw
	}},
	{"the context's token-file", func(t *testing.T) string {
		tok := randomHex(t, 20)
		file := filepath.Join(t.TempDir(), "token")
		if err := os.WriteFile(file, []byte(tok+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		useContext(t, "token-file: "+file)
		return tok
	}, userinfoPassword},
	{"the context's token-env", func(t *testing.T) string {
		tok := randomHex(t, 20)
		t.Setenv("KPOOL_TEST_CONTEXT_TOKEN", tok)
		useContext(t, "token-env: KPOOL_TEST_CONTEXT_TOKEN")
		return tok
	}, userinfoPassword},
}

func userinfoPassword(pw, closed string) string {
	return "postgres://kpool:" + pw + "@" + closed + "/kpool?sslmode=disable"
}

// useContext writes a config file whose current context has the token
// given by source, and clears the variables that would beat it.
func useContext(t *testing.T, source string) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("current-context: leak\ncontexts:\n  leak:\n    "+source+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KPOOL_CONFIG", cfg)
	t.Setenv("KPOOL_TOKEN", "")
	t.Setenv("KPOOL_USER", "")
}

// reach are the arguments, beyond a command's positional ones, that take
// it as far as the server or the database. A command not named here gets
// its positional arguments only; if that is not enough, the test says so.
var reach = map[string][]string{
	"apply":              {"-f", "POOLS"},
	"diff":               {"-f", "POOLS"},
	"place":              {"-f", "MANIFESTS", "--cluster", "prod"},
	"cluster create":     {"--platform", "gcp", "--project-id", "acme-prod", "--location", "us-central1", "--cluster-name", "prod"},
	"cluster update":     {"--endpoint", "https://container.example.com"},
	"nodepool create":    {"--cluster", "prod", "--machine-type", "e2-small"},
	"nodepool scale":     {"--count", "2"},
	"nodepool update":    {"--count", "2"},
	"token create":       {"--user", "alice@example.com"},
	"logicalpool create": {"--cluster", "prod", "--machine-type", "e2-small", "--count", "2"},
	"logicalpool get":    {"--cluster", "prod"},
	"logicalpool list":   {"--cluster", "prod"},
	"logicalpool scale":  {"--cluster", "prod", "--count", "2"},
	"logicalpool delete": {"--cluster", "prod"},
}

// positional are placeholder arguments for the positional ones c's Use
// names (NAME, NAME|ID, ID) up to its first flag or alternative.
func positional(c *cobra.Command) []string {
	var out []string
	for _, w := range strings.Fields(c.Use)[1:] {
		if strings.HasPrefix(w, "-") || strings.HasPrefix(w, "[") || w == "|" {
			break
		}
		out = append(out, "web")
	}
	return out
}

// client reports whether c talks to a kpool server or a database that the
// environment names: the commands that may print what they were given to
// get there.
func client(c *cobra.Command) bool {
	found := false
	visit := func(fl *pflag.Flag) {
		v := envOf(fl)
		found = found || v == "KPOOL_SERVER" || v == "KPOOL_TOKEN" || v == "KPOOL_DATABASE"
	}
	c.LocalFlags().VisitAll(visit)
	c.InheritedFlags().VisitAll(visit)
	return found
}

// TestErrorsShowNoSecret runs every client command (one that reads a
// server, token or database from the environment or the context) against a closed loopback port, server and
// database, in each of secretEnvs: each must fail there (and say so) and
// show no secret; a command group prints its help, and shell completion
// completes nothing, without showing one either.
func TestErrorsShowNoSecret(t *testing.T) {
	closed := closedAddr(t)
	files := map[string]string{
		"POOLS":     writeFile(t, "pools.yaml", "name: web\ncluster: prod\nspec: {nodeCount: 1, platform: {gcp: {machineType: e2-small}}}\n"),
		"MANIFESTS": writeFile(t, "app.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {template: {spec: {containers: [{name: web, image: nginx}]}}}\n"),
	}
	walked := 0
	for _, env := range secretEnvs {
		t.Run(env.name, func(t *testing.T) {
			t.Setenv("XDG_DATA_HOME", t.TempDir()) // no default database of the user's, should one be opened
			s := secrets{"API token": env.setup(t), "database password": randomHex(t, 12)}
			t.Setenv("KPOOL_DATABASE", env.database(s["database password"], closed))
			t.Setenv("KPOOL_SERVER", "http://"+closed)
			for _, c := range tree() {
				if !c.Runnable() || !client(c) {
					continue
				}
				walked++
				args := append(argv(c), positional(c)...)
				for _, a := range reach[strings.Join(argv(c), " ")] {
					args = append(args, cmp.Or(files[a], a))
				}
				if c.Flags().Lookup("listen") != nil {
					args = append(args, "--listen", "127.0.0.1:0")
				}
				stdout, stderr, err := executeWithin(t, args...)
				s.check(t, args, stdout, stderr, err)
				switch {
				case c.HasSubCommands():
					if err != nil || !strings.Contains(stdout, "Available Commands") {
						t.Errorf("kpool %s: %v, no help in\n%s", strings.Join(args, " "), err, stdout)
					}
				case err == nil || !strings.Contains(err.Error()+stdout+stderr, closed):
					// Refused, as a rule; another test of the package may
					// listen on the port meanwhile, and answer otherwise.
					t.Errorf("kpool %s: %v; want it to fail at the closed port %s (give it arguments in reach)", strings.Join(args, " "), err, closed)
				}
				complete := append(append([]string{cobra.ShellCompRequestCmd}, argv(c)...), "")
				stdout, stderr, err = executeWithin(t, complete...)
				s.check(t, complete, stdout, stderr, err)
			}
		})
	}
	t.Logf("%d invocations (and completions) in %d environments", walked, len(secretEnvs))
}

// executeWithin is execute, stopped after a minute: a command that should
// have failed at the closed port but serves instead fails the test rather
// than hanging it.
func executeWithin(t *testing.T, args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	root := newRoot()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetIn(strings.NewReader(""))
	root.SetArgs(args)
	err = root.ExecuteContext(ctx)
	if ctx.Err() != nil {
		t.Errorf("kpool %s ran until stopped: %v", strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), err
}

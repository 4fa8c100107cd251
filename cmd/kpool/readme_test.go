package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// walkthroughHeading is the README section TestReadmeWalkthrough runs.
const walkthroughHeading = "## Walk through the guide"

// readmeURL is where README's curl commands send their requests; the test
// sends them to its own server instead.
const readmeURL = "http://localhost:8080"

// TestReadmeWalkthrough runs README's "Walk through the guide" as written:
// the server command of its sh block, in process, with a database of its
// own and a free loopback port, then every curl of its sh blocks in one
// bash, so that $POOL carries from one command to the next. Each command's
// answer is checked against what README says it does.
func TestReadmeWalkthrough(t *testing.T) {
	t.Parallel()
	bash, curl := readmeTools(t)
	server, commands := walkthrough(t)
	if len(commands) != len(walkthroughSteps) {
		t.Fatalf("README %q has %d commands, the test checks %d steps: update walkthroughSteps with README", walkthroughHeading, len(commands), len(walkthroughSteps))
	}
	for i, c := range commands {
		if step := walkthroughSteps[i]; !step.matches(c) {
			t.Fatalf("README command %d should be %s (containing %q):\n%s", i+1, step.name, step.markers, c)
		}
		if !strings.Contains(c, readmeURL) {
			t.Fatalf("README command %d does not call %s, where the server command listens:\n%s", i+1, readmeURL, c)
		}
	}
	url := startReadmeServer(t, server)
	for i, c := range commands {
		commands[i] = strings.ReplaceAll(c, readmeURL, url)
	}
	var w walkState
	for i, r := range runShell(t, bash, curl, commands) {
		step := walkthroughSteps[i]
		if err := step.check(r, &w); err != nil {
			t.Fatalf("README command %d (%s) failed: %v\n%s", i+1, step.name, err, r)
		}
	}
}

// walkthrough returns the server command of README's walk-through (the line
// of its sh blocks with kpool serve) and the commands of its sh blocks that
// hold a curl.
func walkthrough(t *testing.T) (server string, commands []string) {
	t.Helper()
	for _, block := range shBlocks(readmeSection(t, walkthroughHeading)) {
		for _, line := range strings.Split(block, "\n") {
			if !strings.Contains(line, "kpool serve") {
				continue
			}
			if server != "" {
				t.Fatalf("README %q has two kpool serve commands: %q and %q", walkthroughHeading, server, line)
			}
			server = strings.TrimSpace(line)
		}
		if !strings.Contains(block, "curl") {
			continue
		}
		cmds, err := shellCommands(block)
		if err != nil {
			t.Fatalf("README %q: %v in\n%s", walkthroughHeading, err, block)
		}
		commands = append(commands, cmds...)
	}
	if server == "" {
		t.Fatalf("README %q has no kpool serve command in an sh block", walkthroughHeading)
	}
	return server, commands
}

// readmeTools finds what README's commands need, bash, curl and python3
// (its one-liner reads the pool's id), and returns bash's and curl's
// paths. Without one the test fails saying what to install: README's
// walk-through is for anyone with those, so the test leaves no one out.
func readmeTools(t *testing.T) (bash, curl string) {
	t.Helper()
	paths := map[string]string{}
	var missing []string
	for _, name := range []string{"bash", "curl", "python3"} {
		p, err := exec.LookPath(name)
		if err != nil {
			missing = append(missing, name)
		}
		paths[name] = p
	}
	if len(missing) > 0 {
		t.Fatalf("README's walk-through needs %s, not found on PATH: install it (apt-get install %s)", strings.Join(missing, ", "), strings.Join(missing, " "))
	}
	return paths["bash"], paths["curl"]
}

// readmeSection returns README's section under heading, up to the next
// second-level heading outside a code block.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	in, fenced := false, false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		switch {
		case !fenced && line == heading:
			in = true
		case in && !fenced && strings.HasPrefix(line, "## "):
			return strings.Join(out, "\n")
		case in:
			out = append(out, line)
		}
	}
	if !in {
		t.Fatalf("README has no section %q", heading)
	}
	return strings.Join(out, "\n")
}

// shBlocks returns the bodies of the ```sh code blocks in markdown md.
func shBlocks(md string) []string {
	var blocks []string
	var cur []string
	in := false
	for _, line := range strings.Split(md, "\n") {
		switch {
		case !in && strings.TrimSpace(line) == "```sh":
			in, cur = true, nil
		case in && strings.TrimSpace(line) == "```":
			in = false
			blocks = append(blocks, strings.Join(cur, "\n"))
		case in:
			cur = append(cur, line)
		}
	}
	return blocks
}

// shellCommands splits a shell script into its commands, as bash reads
// them: a command goes on past a line that ends in a backslash, inside
// quotes (a multi-line -d body) and inside open parentheses ($( … )).
// Comment lines and blank lines between commands are left out.
func shellCommands(script string) ([]string, error) {
	var cmds []string
	var cur strings.Builder
	var quote byte // ' or ", or 0 outside quotes
	depth := 0
	for _, line := range strings.Split(script, "\n") {
		if cur.Len() == 0 {
			if s := strings.TrimSpace(line); s == "" || strings.HasPrefix(s, "#") {
				continue
			}
		}
		cur.WriteString(line + "\n")
		escaped := false
		for i := 0; i < len(line); i++ {
			c := line[i]
			switch {
			case escaped:
				escaped = false
			case quote == '\'':
				if c == '\'' {
					quote = 0
				}
			case c == '\\':
				escaped = true
			case quote == '"':
				if c == '"' {
					quote = 0
				}
			case c == '\'' || c == '"':
				quote = c
			case c == '(':
				depth++
			case c == ')':
				depth--
			case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
				i = len(line) // a comment to the end of the line
			}
		}
		if quote == 0 && depth == 0 && !escaped {
			cmds = append(cmds, strings.TrimRight(cur.String(), "\n"))
			cur.Reset()
		}
	}
	if cur.Len() > 0 {
		return nil, fmt.Errorf("unfinished command (open quote, parenthesis or trailing backslash): %s", cur.String())
	}
	return cmds, nil
}

// startReadmeServer runs command, README's `go run ./cmd/kpool serve …`,
// in this process with its flags as written plus a database in a temporary
// directory and a free loopback port, until the test ends; it returns the
// server's URL, read from the log line that says where it serves. serve
// reads no file in HOME or XDG_* once --database is given.
func startReadmeServer(t *testing.T, command string) string {
	t.Helper()
	flags, ok := strings.CutPrefix(command, "go run ./cmd/kpool ")
	if !ok || strings.ContainsAny(flags, `'"\$`) {
		t.Fatalf("README's server command %q: want go run ./cmd/kpool serve with plain flags", command)
	}
	args := append(strings.Fields(flags), "--database", "sqlite:"+filepath.Join(t.TempDir(), "x.db"), "--listen", "127.0.0.1:0")
	log := newLogWatch()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		root := newRoot()
		root.SetOut(log)
		root.SetErr(log)
		root.SetArgs(args)
		served <- root.ExecuteContext(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("kpool %s: %v\n%s", strings.Join(args, " "), err, log)
		}
	})
	m := log.waitFor(t, regexp.MustCompile(`msg="kpool serving" url=(\S+) .*controllers=(\w+)`))
	if m[2] != "false" {
		// The walk-through's pools wait for the guide's controller: a
		// kpool running its own would act on the guide's real cluster.
		t.Fatalf("README's server command %q runs kpool's controllers (controllers=%s); the walk-through wants --reconcile=false", command, m[2])
	}
	return m[1]
}

// shellResult is what one README command did.
type shellResult struct {
	command string
	// stdout is what the command printed; for an assignment (POOL=…) the
	// value it assigned. stderr is its errors, without the status lines
	// curl added; statuses are the HTTP status of each request it made.
	stdout, stderr string
	statuses       []int
	exit           int
}

func (r shellResult) String() string {
	return fmt.Sprintf("command:\n%s\nexit status %d, HTTP status %v\nstdout:\n%s\nstderr:\n%s", r.command, r.exit, r.statuses, r.stdout, r.stderr)
}

// statusLine is the line the curl wrapper writes to stderr after each
// request.
var statusLine = regexp.MustCompile(`(?m)^HTTP (\d{3})\n`)

// assignment is a command that sets a shell variable.
var assignment = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)=`)

// runShell runs commands one after another in one bash, each with its
// stdout and stderr in files of its own. curl is a wrapper first on PATH
// that adds to each request, without a change to README's text: -sS (no
// progress meter, errors shown), the HTTP status on stderr (so a pipe into
// python3 reads only the body), no ~/.curlrc (-q) and no proxy.
func runShell(t *testing.T, bash, curl string, commands []string) []shellResult {
	t.Helper()
	dir, bin := t.TempDir(), t.TempDir()
	wrapper := "#!/bin/sh\nexec " + shellQuote(curl) + ` -q -sS --noproxy '*' --max-time 60 -w '%{stderr}HTTP %{http_code}\n' "$@"` + "\n"
	if err := os.WriteFile(filepath.Join(bin, "curl"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	for i, c := range commands {
		fmt.Fprintf(&script, "{\n%s\n} >%d.out 2>%d.err\necho $? >%d.exit\n", c, i, i, i)
		if m := assignment.FindStringSubmatch(c); m != nil {
			fmt.Fprintf(&script, "printf '%%s\\n' \"$%s\" >%d.out\n", m[1], i)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, "--noprofile", "--norc", "-c", script.String())
	cmd.Dir = dir
	cmd.Env = append(shellEnv(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bash: %v\n%s\nscript:\n%s", err, out, script.String())
	}
	results := make([]shellResult, len(commands))
	for i, c := range commands {
		r := shellResult{command: c}
		read := func(ext string) string {
			b, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(i)+ext))
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
		r.stdout, r.stderr = read(".out"), read(".err")
		for _, m := range statusLine.FindAllStringSubmatch(r.stderr, -1) {
			code, _ := strconv.Atoi(m[1])
			r.statuses = append(r.statuses, code)
		}
		r.stderr = statusLine.ReplaceAllString(r.stderr, "")
		r.exit, _ = strconv.Atoi(strings.TrimSpace(read(".exit")))
		results[i] = r
	}
	return results
}

// shellEnv is this process's environment less what would make bash read a
// start-up file (BASH_ENV, ENV) or replace PATH.
func shellEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name != "BASH_ENV" && name != "ENV" && name != "PATH" {
			env = append(env, kv)
		}
	}
	return env
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// TestReadmeShellCommands checks shellCommands on the shapes README's sh
// blocks take, so that TestReadmeWalkthrough runs each command whole.
func TestReadmeShellCommands(t *testing.T) {
	t.Parallel()
	script := `# a comment
curl -X POST http://x/a \
  -d '{"a": 1,
       "b": "it''s # not a comment"}'

POOL=$(curl -s "http://x/b" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
# 2. another comment
curl -H "X-Note: it's (here)" "http://x/$POOL" # a trailing comment (with a paren
echo done`
	want := []string{
		"curl -X POST http://x/a \\\n  -d '{\"a\": 1,\n       \"b\": \"it''s # not a comment\"}'",
		"POOL=$(curl -s \"http://x/b\" \\\n  | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"id\"])')",
		"curl -H \"X-Note: it's (here)\" \"http://x/$POOL\" # a trailing comment (with a paren",
		"echo done",
	}
	got, err := shellCommands(script)
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("shellCommands = %q, %v; want %q", got, err, want)
	}
	for _, bad := range []string{"curl -d '{", "curl \\", "x=$(curl"} {
		if cmds, err := shellCommands(bad); err == nil {
			t.Errorf("shellCommands(%q) = %q, want an error: the command is unfinished", bad, cmds)
		}
	}
}

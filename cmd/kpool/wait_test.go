package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/provider/catalog"
)

// stepper is the clock of the commands a test of --wait runs: each poll
// after the first waits for the test to change the pool's status and let it
// go on. Each test has its own, so the tests run in parallel.
type stepper struct {
	waiting chan struct{}
	proceed chan struct{}
}

func stepWaits() *stepper {
	return &stepper{waiting: make(chan struct{}), proceed: make(chan struct{})}
}

// tick is the stepper's clock's Tick.
func (s *stepper) tick(ctx context.Context) error {
	select {
	case s.waiting <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-s.proceed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// step waits until the command has read the pool and waits for its next
// poll, runs change, and lets the command poll again.
func (s *stepper) step(change func()) {
	<-s.waiting
	change()
	s.proceed <- struct{}{}
}

// result is what a command run in the background ended with.
type result struct {
	stdout, stderr string
	err            error
}

// background runs a client command against srv as testUser, on the
// stepper's clock.
func (s *stepper) background(srv string, args ...string) <-chan result {
	done := make(chan result, 1)
	go func() {
		out, errOut, err := executeOn(clock{tick: s.tick}, "", append(args, "--server", srv, "--user", testUser)...)
		done <- result{out, errOut, err}
	}()
	return done
}

// reportAs sends a controller's report with node counts in its metadata.
func reportAs(t *testing.T, srv, pool string, gen int64, meta string, conds ...kpool.Condition) {
	t.Helper()
	c := api.NewClient(srv, testController)
	_, err := c.ReportNodePoolStatus(context.Background(), pool, api.StatusReport{
		ControllerName: "gcp-nodepool-controller", ObservedGeneration: gen, Conditions: conds, Metadata: json.RawMessage(meta)})
	if err != nil {
		t.Error(err)
	}
}

var (
	ready       = kpool.Condition{Type: kpool.ConditionReady, Status: kpool.ConditionTrue, Reason: "NodesReady"}
	notReady    = kpool.Condition{Type: kpool.ConditionReady, Status: kpool.ConditionFalse, Reason: "Creating"}
	progressing = kpool.Condition{Type: kpool.ConditionProgressing, Status: kpool.ConditionTrue, Reason: "Creating"}
	stuck       = kpool.Condition{Type: kpool.ConditionProgressing, Status: kpool.ConditionFalse, Reason: "ProviderRefused"}
	deleted     = kpool.Condition{Type: kpool.ConditionDeleted, Status: kpool.ConditionTrue, Reason: "Deleted"}
)

func TestCreateWait(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	cluster := createCluster(t, srv, "gke", kpool.PlatformGCP)
	s := stepWaits()
	const id = "0b1f4c2e-5d6a-4e7b-8c9d-0e1f2a3b4c5d"
	done := s.background(srv, "nodepool", "create", "web", "--cluster", cluster, "--id", id, "--machine-type", "e2-small", "--count", "3", "--wait", "-o", "json")

	s.step(func() { // no controller yet
		reportAs(t, srv, id, 1, `{"active_nodes": 1, "desired_nodes": 3}`, notReady, progressing)
	})
	s.step(func() {
		reportAs(t, srv, id, 1, `{"active_nodes": 3, "desired_nodes": 3}`, ready)
	})
	r := <-done
	if r.err != nil {
		t.Fatalf("create --wait: %v\n%s", r.err, r.stderr)
	}
	var p kpool.NodePool
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatalf("%v in %s", err, r.stdout)
	}
	if p.ID != id || p.Status.Phase != kpool.PhaseReady || p.Status.ObservedGeneration != 1 {
		t.Errorf("the pool printed is not the Ready one: %+v", p.Status)
	}
	// Not a terminal: a line per change, in order.
	lines := withoutWarnings(r.stderr)
	want := []string{
		"nodepool web: Pending  ?/3 nodes ready  (no controller has reported on this pool yet)",
		"nodepool web: Provisioning  1/3 nodes ready  (waiting for generation 1: gcp-nodepool-controller: Creating)",
		"nodepool web: Ready  3/3 nodes ready",
	}
	if len(lines) != len(want) {
		t.Fatalf("progress:\n%s", r.stderr)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w+"  ") || !strings.HasSuffix(lines[i], "s") {
			t.Errorf("progress line %d: %q, want %q and the time elapsed", i, lines[i], w)
		}
	}
}

func TestScaleWaitFails(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	cluster := createCluster(t, srv, "gke", kpool.PlatformGCP)
	p := createPool(t, srv, "web", cluster, "--machine-type", "e2-small", "--count", "3")
	reportAs(t, srv, p.ID, 1, `{"active_nodes": 3, "desired_nodes": 3}`, ready)
	s := stepWaits()
	done := s.background(srv, "nodepool", "scale", p.ID, "--count", "50", "--wait")

	// A Ready report of the old generation does not end the wait.
	s.step(func() {
		reportAs(t, srv, p.ID, 2, `{"active_nodes": 3, "desired_nodes": 3, "last_error": "quota exceeded: 50 vCPUs wanted, 24 left"}`,
			kpool.Condition{Type: kpool.ConditionReady, Status: kpool.ConditionFalse, Reason: "ProviderRefused", Message: "quota exceeded"}, stuck)
	})
	r := <-done
	if r.err == nil {
		t.Fatalf("scale --wait to a failed pool succeeded:\n%s", r.stdout)
	}
	var errOut bytes.Buffer
	if code := exitCode(r.err, &errOut); code != exitFailed {
		t.Errorf("exit code %d, want %d", code, exitFailed)
	}
	for _, w := range []string{"nodepool web (" + p.ID + ") failed at generation 2", "quota exceeded",
		"gcp-nodepool-controller: quota exceeded: 50 vCPUs wanted, 24 left"} {
		if !strings.Contains(errOut.String(), w) {
			t.Errorf("no %q in\n%s", w, errOut.String())
		}
	}
	if !strings.Contains(r.stderr, "nodepool web: Updating  3/3 nodes ready") || !strings.Contains(r.stderr, "last error: gcp-nodepool-controller: quota exceeded") {
		t.Errorf("progress:\n%s", r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("a failed wait printed the pool:\n%s", r.stdout)
	}
}

func TestUpdateWaitTimeout(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	cluster := createCluster(t, srv, "gke", kpool.PlatformGCP)
	p := createPool(t, srv, "web", cluster, "--machine-type", "e2-small", "--count", "3")
	// The wall clock: nothing reports, so the 1ms deadline ends the wait.
	_, _, err := execute("", "nodepool", "update", p.ID, "--label", "team=web", "--wait", "--timeout", "1ms", "--server", srv, "--user", testUser)
	var errOut bytes.Buffer
	if code := exitCode(err, &errOut); code != exitTimeout || !strings.Contains(errOut.String(), "Not done within --timeout 1ms") {
		t.Errorf("exit code %d: %s", code, errOut.String())
	}
}

func TestDeleteWait(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	cluster := createCluster(t, srv, "gke", kpool.PlatformGCP)
	p := createPool(t, srv, "web", cluster, "--machine-type", "e2-small")
	reportAs(t, srv, p.ID, 1, `{}`, ready)
	s := stepWaits()
	done := s.background(srv, "nodepool", "delete", p.ID, "--wait")
	s.step(func() { reportAs(t, srv, p.ID, 1, `{}`, deleted) })
	r := <-done
	if r.err != nil || r.stdout != "node pool web in cluster gke deleted\n" {
		t.Fatalf("delete --wait: %q, %v", r.stdout, r.err)
	}
	if !strings.HasPrefix(r.stderr, "nodepool web: Deleting  (waiting for the pool to be deleted by gcp-nodepool-controller)") {
		t.Errorf("progress:\n%s", r.stderr)
	}

	// Deleted behind the back of a wait for Ready.
	q := createPool(t, srv, "other", cluster, "--machine-type", "e2-small")
	reportAs(t, srv, q.ID, 1, `{}`, notReady, progressing)
	done = s.background(srv, "nodepool", "scale", q.ID, "--count", "2", "--wait")
	s.step(func() {
		mustRun(t, srv, "nodepool", "delete", q.ID)
		reportAs(t, srv, q.ID, 2, `{}`, deleted)
	})
	if r := <-done; r.err == nil || !strings.Contains(r.err.Error(), "was deleted while waiting") {
		t.Errorf("a pool deleted during the wait: %v", r.err)
	}
}

// TestWaitNoController checks that --wait on a pool that no controller in
// this kpool acts on stops at once and says why, and that get shows it.
func TestWaitNoController(t *testing.T) {
	t.Parallel()
	srv := newServerOn(t, catalog.Registry()) // no driver at all
	cluster := createCluster(t, srv, "gke", kpool.PlatformGCP)
	const id = "5e0b4a8c-2f1d-4c3b-9a7e-6d5c4b3a2f10"
	_, errOut, err := execute("", "nodepool", "create", "web", "--cluster", cluster, "--id", id, "--machine-type", "e2-small", "--wait",
		"--server", srv, "--user", testUser)
	var out bytes.Buffer
	if code := exitCode(err, &out); code != exitFailed {
		t.Fatalf("exit code %d, want %d: %v", code, exitFailed, err)
	}
	for _, w := range []string{"nodepool web (" + id + ") stays Pending", "no controller in this kpool acts on gcp pools; an external controller must report status",
		"kpool nodepool status " + id} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("no %q in\n%s", w, out.String())
		}
	}
	if !strings.HasPrefix(errOut, "nodepool web: Pending  ?/1 nodes ready  (no controller in this kpool acts on gcp pools") {
		t.Errorf("progress:\n%s", errOut)
	}
	get := mustRun(t, srv, "nodepool", "get", id)
	if !strings.Contains(get, "Controller:") || !strings.Contains(get, "none in this kpool acts on gcp pools") {
		t.Errorf("get does not say that no controller acts:\n%s", get)
	}

	// Once an external controller reports, the status is its, and --wait
	// follows it as any other.
	reportAs(t, srv, id, 1, `{"active_nodes": 1, "desired_nodes": 1}`, notReady, progressing)
	s := stepWaits()
	done := s.background(srv, "nodepool", "scale", id, "--count", "2", "--wait")
	s.step(func() { reportAs(t, srv, id, 2, `{"active_nodes": 2, "desired_nodes": 2}`, ready) })
	if r := <-done; r.err != nil {
		t.Fatalf("scale --wait with an external controller: %v\n%s", r.err, r.stderr)
	}
	if get := mustRun(t, srv, "nodepool", "get", id); strings.Contains(get, "Controller:") || !strings.Contains(get, "Ready") {
		t.Errorf("get after the external controller's report:\n%s", get)
	}
}

func TestWaitFlags(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	cluster := createCluster(t, srv, "gke", kpool.PlatformGCP)
	p := createPool(t, srv, "web", cluster, "--machine-type", "e2-small")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"scale", p.ID, "--count", "2", "--wait", "--dry-run"}, "--wait and --dry-run"},
		{[]string{"update", p.ID, "--count", "2", "--wait", "--dry-run"}, "--wait and --dry-run"},
		{[]string{"scale", p.ID, "--count", "2", "--timeout", "1m"}, "give --wait too"},
		{[]string{"delete", p.ID, "--wait", "--timeout", "0s"}, "--timeout 0s: give a positive duration"},
		{[]string{"create", "x", "--cluster", cluster, "--wait", "--timeout", "-1m"}, "--timeout -1m0s"},
	} {
		if _, err := run(srv, "", append([]string{"nodepool"}, tt.args...)...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: %v, want %q", tt.args, err, tt.want)
		}
	}
	// Nothing was changed by the refused commands.
	if got := decode[kpool.NodePool](t, srv, "nodepool", "get", p.ID); got.Generation != 1 || got.Spec.Count() != 1 {
		t.Errorf("pool changed: generation %d, count %d", got.Generation, got.Spec.Count())
	}
}

func TestProgressOnTerminal(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := &waiter{out: &out, tty: true, start: time.Now()}
	w.show("nodepool web: Provisioning  1/3 nodes ready  (waiting)")
	w.show("nodepool web: Ready  3/3 nodes ready")
	w.finish()
	got := out.String()
	parts := strings.Split(got, "\r")
	if len(parts) != 3 || parts[0] != "" || !strings.HasSuffix(got, "\n") {
		t.Fatalf("%q: want two redraws of one line, then a newline", got)
	}
	// The shorter second line blanks what is left of the first.
	if len(parts[2]) != len(parts[1])+1 || !strings.HasPrefix(parts[2], "nodepool web: Ready  3/3 nodes ready  0s ") {
		t.Errorf("second line %q after %q", parts[2], parts[1])
	}
}

func TestExitCode(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		err  error
		code int
	}{
		{nil, 0},
		{errors.New("x"), 1},
		{&exitError{code: exitTimeout, err: errors.New("late")}, 2},
		{&exitError{code: exitTimeout, err: &kpool.Error{Code: kpool.CodeUnavailable, Message: "down"}}, 2},
	} {
		if got := exitCode(tt.err, &bytes.Buffer{}); got != tt.code {
			t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.code)
		}
	}
}

// TestProgressFitsTheTerminal: the redrawn line never wraps an 80-column
// terminal (or any width), and has colour only when asked for.
func TestProgressFitsTheTerminal(t *testing.T) {
	long := "nodepool web: Provisioning  1/3 nodes ready  (waiting for generation 2: aks-nodepool-controller (at generation 1: Updating at azure))"
	for _, cols := range []int{80, 40} {
		var out bytes.Buffer
		w := &waiter{out: &out, tty: true, start: time.Now(), cols: cols}
		w.show(long)
		line := strings.TrimPrefix(out.String(), "\r")
		if n := len([]rune(line)); n > cols-1 || !strings.HasSuffix(line, "…") {
			t.Errorf("%d columns: a line of %d runes: %q", cols, n, line)
		}
		if strings.Contains(line, "\x1b[") {
			t.Errorf("colour without being asked: %q", line)
		}
	}
	var out bytes.Buffer
	w := &waiter{out: &out, tty: true, start: time.Now(), cols: 80, colour: true}
	w.show("nodepool web: Ready  3/3 nodes ready")
	if !strings.Contains(out.String(), "\x1b[32mReady\x1b[0m") {
		t.Errorf("no colour on a terminal: %q", out.String())
	}
	// NO_COLOR and a pipe: none (newWaiter decides).
	t.Run("NO_COLOR", func(t *testing.T) {
		t.Setenv("NO_COLOR", "1")
		if os.Getenv("NO_COLOR") == "" {
			t.Fatal("setenv")
		}
		cmd := newRoot()
		cmd.SetErr(&bytes.Buffer{})
		if w := newWaiter(cmd, nil, clock{}.Tick, &kpool.NodePool{}, false); w.colour || w.tty {
			t.Errorf("a buffer is no terminal: %+v", w)
		}
	})
}

// withoutWarnings are the lines of a command's stderr but the API's
// warnings (preflight's, on a cluster whose facts no controller learnt).
func withoutWarnings(stderr string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if !strings.HasPrefix(l, "Warning: ") {
			out = append(out, l)
		}
	}
	return out
}

package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// kpoolProc is a kpool process a test runs: this test binary as kpool
// (see TestMain), its log kept for the test to read.
type kpoolProc struct {
	name   string
	cmd    *exec.Cmd
	log    *logWatch
	url    string // what its start line names: serve's API, a controller's listener
	exited chan struct{}
}

// controllerLine is kpool controller's start line, naming its /metrics.
var controllerLine = regexp.MustCompile(`msg="kpool controllers" metrics=(http://127\.0\.0\.1:\d+)/metrics`)

// startKpool runs kpool args and waits until its log has line, whose first
// group is its URL. The process is killed when the test ends, if it still
// runs.
func startKpool(t *testing.T, name string, line *regexp.Regexp, args ...string) *kpoolProc {
	t.Helper()
	p := &kpoolProc{name: name, cmd: exec.Command(os.Args[0], args...), log: newLogWatch(), exited: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), "KPOOL_TEST_MAIN=1")
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			t.Logf("%s's log, its end:\n%s", p.name, tail(p.log.String(), 40))
		}
	})
	p.url = p.log.waitFor(t, line)[1]
	return p
}

// alive is an error naming the process if it has exited.
func (p *kpoolProc) alive() error {
	select {
	case <-p.exited:
		return fmt.Errorf("%s exited: %v\n%s", p.name, p.cmd.ProcessState, tail(p.log.String(), 20))
	default:
		return nil
	}
}

// kill kills the process with SIGKILL (it gives nothing back) and waits
// until it is gone; it returns when the signal was sent.
func (p *kpoolProc) kill(t *testing.T) time.Time {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	at := time.Now()
	<-p.exited
	return at
}

// gauges reads the named gauges of the process's /metrics, each summed
// over its series; one it does not serve is absent.
func (p *kpoolProc) gauges(ctx context.Context, names ...string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s/metrics: %s", p.url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, n := range names {
		if mf, ok := mfs[n]; ok {
			for _, m := range mf.GetMetric() {
				out[n] += m.GetGauge().GetValue()
			}
		}
	}
	return out, nil
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// pollUntil calls cond every 20ms until it is true, and returns how long
// that took; it fails the test when cond errs or timeout passes, saying
// what cond last said.
func pollUntil(t *testing.T, timeout time.Duration, what string, cond func() (bool, string, error)) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		ok, state, err := cond()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			t.Fatalf("%s: not within %v; last: %s", what, timeout, state)
		}
		time.Sleep(20 * time.Millisecond) // the poll's period: what is waited for is cond
	}
}

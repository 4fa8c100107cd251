package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkIdleRSS starts `kpool serve` on SQLite (this test binary as
// kpool: see TestMain), waits for /healthz and reports its resident memory
// from /proc four times: 5 s after it serves (start-*), after 60 s idle
// with its controllers running (idle-*), right after 2,000 GETs (served-*)
// and a quiet period later, when the heap they left is given back
// (rested-*).
// Each time: all of it (VmRSS), the process's own (RssAnon: heap, stacks)
// and the pages of the binary and libraries it touched (RssFile: shared,
// clean, dropped first when memory is short). The idle figure is the one to
// compare: by then the pages released after the start that are still in
// use have come back.
func BenchmarkIdleRSS(b *testing.B) {
	cmd := exec.Command(os.Args[0], "serve", "--listen", "127.0.0.1:0", "--auth", "header", "--rate", "0",
		"--database", "sqlite:"+filepath.Join(b.TempDir(), "kpool.db"))
	cmd.Env = append(os.Environ(), "KPOOL_TEST_MAIN=1")
	out, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	url := serving(b, bufio.NewScanner(out))
	if r, err := http.Get(url + "/healthz"); err != nil || r.StatusCode != http.StatusOK {
		b.Fatalf("healthz: %v", err)
	}
	// Idle is what is measured: these sleeps are the periods measured.
	time.Sleep(5 * time.Second)
	start := status(b, cmd.Process.Pid)
	time.Sleep(55 * time.Second)
	idle := status(b, cmd.Process.Pid)
	get(b, url, 2000)
	served := status(b, cmd.Process.Pid)
	time.Sleep(quietPeriod + 10*time.Second)
	rested := status(b, cmd.Process.Pid)
	for b.Loop() {
	}
	for _, k := range []string{"VmRSS", "RssAnon", "RssFile"} {
		b.ReportMetric(start[k]/1024, "start-"+k+"-MB")
		b.ReportMetric(idle[k]/1024, "idle-"+k+"-MB")
		b.ReportMetric(served[k]/1024, "served-"+k+"-MB")
		b.ReportMetric(rested[k]/1024, "rested-"+k+"-MB")
	}
}

// get sends n GETs of the clusters and the node pools to the server at url,
// as one user, and fails unless each is answered 200.
func get(b *testing.B, url string, n int) {
	c := &http.Client{}
	for i := range n {
		req, err := http.NewRequest("GET", url+[]string{"/api/v1/clusters", "/api/v1/nodepools"}[i%2], nil)
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("X-User-Email", "bench@example.com")
		r, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
		if r.StatusCode != http.StatusOK {
			b.Fatalf("GET %s: %s", req.URL.Path, r.Status)
		}
	}
}

var servingLine = regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+)`)

// serving reads the server's log up to its "kpool serving" line and
// returns its URL; the rest of the log is drained.
func serving(b *testing.B, sc *bufio.Scanner) string {
	for sc.Scan() {
		if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
			go func() {
				for sc.Scan() {
				}
			}()
			return m[1]
		}
	}
	b.Fatal("kpool serve stopped before serving")
	return ""
}

// status returns the kB figures of /proc/PID/status.
func status(b *testing.B, pid int) map[string]float64 {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(raw), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if f := strings.Fields(v); ok && len(f) == 2 && f[1] == "kB" {
			out[k], _ = strconv.ParseFloat(f[0], 64)
		}
	}
	return out
}

// TestQuiet: the heap's surplus is given back only when it is worth a
// collection and the process allocated less than it in the period; and
// heapSurplus counts a burst's allocations. (What the surplus is after a
// give-back depends on every goroutine of the test process; the effect is
// BenchmarkIdleRSS's served-* figures.)
func TestQuiet(t *testing.T) {
	for _, tc := range []struct {
		allocated, surplus uint64
		want               bool
	}{
		{1 << 20, 20 << 20, true},    // idle after a burst
		{500 << 20, 20 << 20, false}, // under load
		{0, 1 << 20, false},          // too little to be worth a collection
		{4 << 20, 4 << 20, false},    // allocating as much as it holds
	} {
		if got := quiet(tc.allocated, tc.surplus, quietMinimum); got != tc.want {
			t.Errorf("quiet(%d, %d) = %v, want %v", tc.allocated, tc.surplus, got, tc.want)
		}
	}
	before, _ := heapSurplus()
	var sum int
	for range 64 {
		b := make([]byte, 512<<10)
		b[len(b)-1] = 1
		sum += int(b[len(b)-1])
	}
	if after, _ := heapSurplus(); after-before < 32<<20 || sum != 64 {
		t.Errorf("allocated %d bytes in 32 MB of slices", after-before)
	}
}

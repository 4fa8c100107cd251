package main

import (
	"bufio"
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
// kpool: see TestMain), waits for /healthz, lets it idle and reports its
// resident memory from /proc: all of it (VmRSS), the process's own
// (RssAnon: heap, stacks) and the pages of the binary and libraries it
// touched (RssFile: shared, clean, dropped first when memory is short).
func BenchmarkIdleRSS(b *testing.B) {
	cmd := exec.Command(os.Args[0], "serve", "--listen", "127.0.0.1:0", "--auth", "header",
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
	time.Sleep(3 * time.Second) // idle is what is measured: a few seconds of it
	mem := status(b, cmd.Process.Pid)
	for b.Loop() {
	}
	for _, k := range []string{"VmRSS", "RssAnon", "RssFile"} {
		b.ReportMetric(mem[k]/1024, k+"-MB")
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

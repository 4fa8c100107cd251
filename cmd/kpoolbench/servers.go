package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// moduleRoot is the directory of the go.mod kpool is built from.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not inside a Go module: run kpoolbench from the kpool checkout")
	}
	return filepath.Dir(gomod), nil
}

// buildKpool builds ./cmd/kpool of the module into dir and returns the
// binary's path.
func buildKpool(ctx context.Context, dir string) (string, error) {
	root, err := moduleRoot(ctx)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "kpool")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/kpool")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/kpool in %s: %w\n%s", root, err, out)
	}
	return bin, nil
}

// server is one `kpool serve` child process and the objects the workloads
// use on it.
type server struct {
	store   string // "postgres" or "sqlite"
	url     string // http://127.0.0.1:PORT
	pprof   string // http://127.0.0.1:PORT/debug/pprof/
	logPath string
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the process has exited

	getPool    string         // pool "workers" of cluster "get": GET and PUT
	fresh      map[int]string // per connection count, an empty cluster to create into
	big        string         // cluster preloaded with -big pools
	list       string         // cluster preloaded with -list pools
	listDeep   string         // cursor after config.listPos of cluster list
	million    string         // PostgreSQL only: cluster with -million pools
	millionCur [2]string      // cursors after config.millionPos
}

var (
	servingLine = regexp.MustCompile(`msg="kpool serving" url=(\S+)`)
	pprofLine   = regexp.MustCompile(`msg="pprof serving" url=(\S+)`)
)

// startServer starts `kpool serve` on database with its log in logPath and
// waits until it answers /healthz. Unless keep, the child is killed if this
// process dies, so that no server outlives the benchmark.
func startServer(ctx context.Context, bin, store, database, logPath string, keep bool) (*server, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	// --rate 0: the API's per-caller limit (429 past it) would throttle
	// the preloads and wrk, which all run as one user.
	cmd := exec.Command(bin, "serve", "--auth", "header", "--reconcile=false", "--rate", "0", "--listen", "127.0.0.1:0", "--pprof", "127.0.0.1:0",
		"--log-format", "text", "--database", database)
	// The child writes its (large) access log straight into the file: no
	// pipe through this process, which may exit first with -keep.
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = childAttr(keep)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{store: store, logPath: logPath, cmd: cmd, exited: make(chan struct{}), fresh: map[int]string{}}
	go func() { _ = cmd.Wait(); close(s.exited) }()
	if err := s.await(ctx); err != nil {
		s.stop()
		return nil, fmt.Errorf("kpool serve (%s): %w; log: %s", store, err, logPath)
	}
	return s, nil
}

// await reads the server's log until it names both addresses it bound, then
// waits for /healthz. Migrations run before serving, so allow a minute.
func (s *server) await(ctx context.Context) error {
	deadline := time.Now().Add(time.Minute)
	for s.url == "" || s.pprof == "" {
		b, _ := os.ReadFile(s.logPath)
		if m := servingLine.FindSubmatch(b); m != nil {
			s.url = string(m[1])
		}
		if m := pprofLine.FindSubmatch(b); m != nil {
			s.pprof = string(m[1])
		}
		if s.url != "" && s.pprof != "" {
			break
		}
		select {
		case <-s.exited:
			return fmt.Errorf("exited at start: %s", lastLines(b, 5))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no \"kpool serving\" and \"pprof serving\" lines in its log within a minute")
		}
	}
	for time.Now().Before(deadline) {
		resp, err := http.Get(s.url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("GET %s/healthz did not answer 200 within a minute", s.url)
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// stop asks the server to shut down (SIGTERM: it drains for up to 10s) and
// kills it if it has not exited after 15s.
func (s *server) stop() {
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

func (s *server) pid() int { return s.cmd.Process.Pid }

// memory is a server's resident memory from /proc/PID/status, in kB.
type memory struct {
	rss, hwm int64
}

func readMemory(pid int) (memory, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memory{}, err
	}
	var m memory
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			m.rss, _ = strconv.ParseInt(f[1], 10, 64)
		case "VmHWM:":
			m.hwm, _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	return m, nil
}

// processCPU is the CPU time the process has used (user + system), in
// seconds, from /proc/PID/stat (clock ticks of 1/100 s on Linux).
func processCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0
	}
	return (utime + stime) / 100
}

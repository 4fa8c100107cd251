package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// proc is one kpool child process of the fleet mode: a serve or a
// controller, its log in a file.
type proc struct {
	name    string
	logPath string
	url     string // the address its log names: the API, or the controller's /metrics listener
	cmd     *exec.Cmd
	exited  chan struct{}
}

var (
	controllerLine = regexp.MustCompile(`msg="kpool controllers" metrics=(\S+)/metrics`)
)

// startProc starts bin with args, its output into logPath, and waits until
// its log names its address (line's first group) and /healthz there
// answers 200. The child dies with this process.
func startProc(ctx context.Context, name, bin string, args []string, logPath string, line *regexp.Regexp) (*proc, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = childAttr(false)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{name: name, logPath: logPath, cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	if err := p.await(ctx, line); err != nil {
		p.stop()
		return nil, fmt.Errorf("%s: %w; log: %s", name, err, logPath)
	}
	return p, nil
}

// await waits for the address line, then for /healthz; migrations run
// first, so it allows a minute.
func (p *proc) await(ctx context.Context, line *regexp.Regexp) error {
	deadline := time.Now().Add(time.Minute)
	for p.url == "" {
		b, _ := os.ReadFile(p.logPath)
		if m := line.FindSubmatch(b); m != nil {
			p.url = string(m[1])
			break
		}
		select {
		case <-p.exited:
			return fmt.Errorf("exited at start: %s", lastLines(b, 5))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("its log named no address within a minute")
		}
	}
	for time.Now().Before(deadline) {
		resp, err := http.Get(p.url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("GET %s/healthz did not answer 200 within a minute", p.url)
}

// stop sends SIGTERM and kills the process if it has not exited in 15s.
func (p *proc) stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// alive is an error if the process has exited.
func (p *proc) alive() error {
	select {
	case <-p.exited:
		b, _ := os.ReadFile(p.logPath)
		return fmt.Errorf("%s exited: %s", p.name, lastLines(b, 5))
	default:
		return nil
	}
}

// procsCPU is the CPU seconds the processes have used.
func procsCPU(ps []*proc) float64 {
	var s float64
	for _, p := range ps {
		s += processCPU(p.pid())
	}
	return s
}

// peakRSS is the largest VmHWM of the processes, in kB.
func peakRSS(ps []*proc) int64 {
	var m int64
	for _, p := range ps {
		if mem, err := readMemory(p.pid()); err == nil {
			m = max(m, mem.hwm)
		}
	}
	return m
}

// gauges reads the gauges names from the Prometheus text at url, each
// summed over its series (labelled or not); a gauge the page lacks is
// absent from the answer.
func gauges(ctx context.Context, url string, names ...string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	out := map[string]float64{}
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 64*1024), 1024*1024)
	for s.Scan() {
		line := s.Text()
		i := strings.LastIndexByte(line, ' ')
		if i < 0 || strings.HasPrefix(line, "#") {
			continue
		}
		metric := line[:i]
		if j := strings.IndexByte(metric, '{'); j >= 0 {
			metric = metric[:j]
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err == nil && slices.Contains(names, metric) {
			out[metric] += v
		}
	}
	return out, s.Err()
}

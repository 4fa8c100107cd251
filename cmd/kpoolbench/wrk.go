package main

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// postLua and putLua are wrk's scripts for creates (a new pool name per
// request, into cluster $CID) and blind PUTs (of pool $NP).
var (
	//go:embed scripts/post.lua
	postLua []byte
	//go:embed scripts/put.lua
	putLua []byte
)

// writeScripts writes the Lua scripts into dir, where wrk can read them.
func writeScripts(dir string) (post, put string, err error) {
	post, put = filepath.Join(dir, "post.lua"), filepath.Join(dir, "put.lua")
	if err := os.WriteFile(post, postLua, 0o644); err != nil {
		return "", "", err
	}
	return post, put, os.WriteFile(put, putLua, 0o644)
}

// wrkResult is what one wrk run reports.
type wrkResult struct {
	rps          float64
	avgMs        float64
	p50Ms        float64
	p99Ms        float64
	requests     int
	non2xx       int    // "Non-2xx or 3xx responses"
	socketErrors int    // connect + read + write + timeout
	socketDetail string // wrk's own words, "connect 0, read 0, write 0, timeout 4"
}

var (
	wrkRPS      = regexp.MustCompile(`Requests/sec:\s+([\d.]+)`)
	wrkAvg      = regexp.MustCompile(`\n\s+Latency\s+(\S+)`)
	wrkP50      = regexp.MustCompile(`\n\s+50%\s+(\S+)`)
	wrkP99      = regexp.MustCompile(`\n\s+99%\s+(\S+)`)
	wrkRequests = regexp.MustCompile(`(\d+) requests in`)
	wrkNon2xx   = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
	wrkSocket   = regexp.MustCompile(`Socket errors: (.*)`)
	wrkSocketN  = regexp.MustCompile(`\d+`)
)

// parseWrk reads wrk's --latency output. Requests/sec must be there; a
// latency wrk did not print (no request finished) is left 0.
func parseWrk(out string) (wrkResult, error) {
	var r wrkResult
	m := wrkRPS.FindStringSubmatch(out)
	if m == nil {
		return r, fmt.Errorf("no Requests/sec in wrk's output")
	}
	r.rps, _ = strconv.ParseFloat(m[1], 64)
	for _, f := range []struct {
		re  *regexp.Regexp
		dst *float64
	}{{wrkAvg, &r.avgMs}, {wrkP50, &r.p50Ms}, {wrkP99, &r.p99Ms}} {
		if m := f.re.FindStringSubmatch(out); m != nil {
			ms, err := wrkMillis(m[1])
			if err != nil {
				return r, err
			}
			*f.dst = ms
		}
	}
	if m := wrkRequests.FindStringSubmatch(out); m != nil {
		r.requests, _ = strconv.Atoi(m[1])
	}
	if m := wrkNon2xx.FindStringSubmatch(out); m != nil {
		r.non2xx, _ = strconv.Atoi(m[1])
	}
	if m := wrkSocket.FindStringSubmatch(out); m != nil {
		r.socketDetail = strings.TrimSpace(m[1])
		for _, n := range wrkSocketN.FindAllString(r.socketDetail, -1) {
			v, _ := strconv.Atoi(n)
			r.socketErrors += v
		}
	}
	return r, nil
}

// wrkMillis converts one of wrk's times ("497.00us", "2.42ms", "1.05s",
// "1.20m", "2.00h") to milliseconds.
func wrkMillis(s string) (float64, error) {
	units := []struct {
		suffix string
		ms     float64
	}{{"us", 0.001}, {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}}
	for _, u := range units {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				break
			}
			return f * u.ms, nil
		}
	}
	return 0, fmt.Errorf("wrk time %q: unknown format", s)
}

// wrkRun is one wrk invocation: GET url with the benchmark user's header,
// or a Lua script (which sets method, headers and body) with env.
type wrkRun struct {
	url    string
	conns  int
	script string   // path of a Lua script, or ""
	env    []string // for the script: CID=…, NP=…
}

// runWrk runs `wrk -t2 -cN -dD --latency --timeout 10s`, saves its output
// in outPath and parses it.
func runWrk(ctx context.Context, r wrkRun, d time.Duration, outPath string) (wrkResult, error) {
	args := []string{
		"-t" + strconv.Itoa(min(2, r.conns)), // wrk wants at least one connection per thread
		"-c" + strconv.Itoa(r.conns),
		"-d" + strconv.Itoa(int(d.Seconds())) + "s",
		"--latency", "--timeout", "10s",
	}
	if r.script != "" {
		args = append(args, "-s", r.script)
	} else {
		args = append(args, "-H", "X-User-Email: "+user)
	}
	args = append(args, r.url)
	cmd := exec.CommandContext(ctx, "wrk", args...)
	cmd.Env = append(os.Environ(), r.env...)
	out, err := cmd.CombinedOutput()
	if werr := os.WriteFile(outPath, append([]byte("wrk "+strings.Join(args, " ")+"\n"), out...), 0o644); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return wrkResult{}, fmt.Errorf("wrk %s: %w: %s", strings.Join(args, " "), err, lastLines(out, 3))
	}
	return parseWrk(string(out))
}

// cpuTimes reads the whole machine's total and idle (idle + iowait) CPU
// ticks from /proc/stat.
func cpuTimes() (total, idle uint64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0, 0
	}
	for i, v := range f[1:] {
		n, _ := strconv.ParseUint(v, 10, 64)
		if i >= 8 { // guest and guest_nice are already counted in user and nice
			break
		}
		total += n
		if i == 3 || i == 4 {
			idle += n
		}
	}
	return total, idle
}

// busyPercent is the share of CPU time not idle between two cpuTimes readings.
func busyPercent(t0, i0, t1, i1 uint64) float64 {
	if t1 <= t0 {
		return 0
	}
	return 100 * float64((t1-t0)-(i1-i0)) / float64(t1-t0)
}

// waitIdle is waitIdle below, but with -smoke, which measures nothing
// worth waiting for, it only reads how idle the machine was over 100ms.
func (b *bench) waitIdle(ctx context.Context) (float64, error) {
	if !b.cfg.quick {
		return waitIdle(ctx)
	}
	t0, i0 := cpuTimes()
	if err := sleep(ctx, 100*time.Millisecond); err != nil {
		return 0, err
	}
	t1, i1 := cpuTimes()
	return 100 - busyPercent(t0, i0, t1, i1), nil
}

// waitIdle waits until the machine was at least 60% idle over one second,
// trying for about 20 seconds, and returns the last idle percentage. Other
// processes on a shared machine would otherwise take the CPU a run measures.
func waitIdle(ctx context.Context) (float64, error) {
	var idle float64
	for range 20 {
		t0, i0 := cpuTimes()
		if err := sleep(ctx, time.Second); err != nil {
			return 0, err
		}
		t1, i1 := cpuTimes()
		idle = 100 - busyPercent(t0, i0, t1, i1)
		if idle >= 60 {
			return idle, nil
		}
	}
	progress("the machine stayed busy (%.0f%% idle); measuring anyway", idle)
	return idle, nil
}

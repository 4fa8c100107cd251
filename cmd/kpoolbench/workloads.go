package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// workload is one request shape the benchmark measures with wrk.
type workload struct {
	name    string // as -skip names it
	label   string // as the table names it
	ceiling string // the pgbench statement it is compared with: "select" or "insert"
	// target is the wrk run against s at n connections; ok false when s has
	// nothing to run it on (a store without the 1M cluster, say).
	target func(s *server, n int) (r wrkRun, ok bool)
	// count is, if set, what the run changes and is read before and after
	// it: the pools of the cluster created into, or the generation of the
	// pool PUT to.
	count     func(ctx context.Context, c *client, s *server, n int) (int64, error)
	firstOnly bool // only at the first -conns value (the 1M offset page, which is slow)
}

// workloads are the measured workloads in the order they run, labelled with
// this run's sizes.
func (b *bench) workloads() []workload {
	cfg := b.cfg
	// reads is the target of a plain GET of the path.
	reads := func(path func(s *server) (string, bool)) func(s *server, n int) (wrkRun, bool) {
		return func(s *server, n int) (wrkRun, bool) {
			p, ok := path(s)
			return wrkRun{url: s.url + p, conns: n}, ok
		}
	}
	pools := func(cluster func(s *server, n int) string) func(context.Context, *client, *server, int) (int64, error) {
		return func(ctx context.Context, c *client, s *server, n int) (int64, error) {
			total, err := c.poolCount(ctx, cluster(s, n))
			return int64(total), err
		}
	}
	listPos := cfg.listPos()
	near, far := cfg.millionPos()
	return []workload{
		{name: "get", label: "a. GET /nodepools/{id}", ceiling: "select",
			target: reads(func(s *server) (string, bool) { return "/api/v1/nodepools/" + s.getPool, true })},
		{name: "create", label: "b1. POST /nodepools, empty cluster", ceiling: "insert",
			target: func(s *server, n int) (wrkRun, bool) {
				return wrkRun{url: s.url, conns: n, script: b.postLua, env: []string{"CID=" + s.fresh[n]}}, s.fresh[n] != ""
			},
			count: pools(func(s *server, n int) string { return s.fresh[n] })},
		{name: "create-big", label: fmt.Sprintf("b2. POST /nodepools, cluster of %s pools", thousands(int64(cfg.big))), ceiling: "insert",
			target: func(s *server, n int) (wrkRun, bool) {
				return wrkRun{url: s.url, conns: n, script: b.postLua, env: []string{"CID=" + s.big}}, s.big != ""
			},
			count: pools(func(s *server, _ int) string { return s.big })},
		{name: "put", label: "c. PUT /nodepools/{id}, same pool, blind", ceiling: "insert",
			target: func(s *server, n int) (wrkRun, bool) {
				return wrkRun{url: s.url, conns: n, script: b.putLua, env: []string{"NP=" + s.getPool}}, true
			},
			count: func(ctx context.Context, c *client, s *server, _ int) (int64, error) {
				return c.generation(ctx, s.getPool)
			}},
		{name: "list-first", label: fmt.Sprintf("d1. list 50 of %s, first page", thousands(int64(cfg.list))), ceiling: "select",
			target: reads(func(s *server) (string, bool) { return listPath(s.list, pageSize, "", 0), s.list != "" })},
		{name: "list-offset", label: fmt.Sprintf("d2. list 50 of %s, offset=%d", thousands(int64(cfg.list)), listPos), ceiling: "select",
			target: reads(func(s *server) (string, bool) {
				return listPath(s.list, pageSize, "", listPos), s.list != "" && listPos > 0
			})},
		{name: "list-keyset", label: fmt.Sprintf("d3. list 50 of %s, keyset after≈%s", thousands(int64(cfg.list)), thousands(int64(listPos))), ceiling: "select",
			target: reads(func(s *server) (string, bool) { return listPath(s.list, pageSize, s.listDeep, 0), s.listDeep != "" })},
		{name: "1m-first", label: fmt.Sprintf("e1. %s pools: first page", thousands(int64(cfg.million))), ceiling: "select",
			target: reads(func(s *server) (string, bool) { return listPath(s.million, pageSize, "", 0), s.million != "" })},
		{name: "1m-keyset-near", label: fmt.Sprintf("e2. %s pools: keyset after≈%s", thousands(int64(cfg.million)), thousands(int64(near))), ceiling: "select",
			target: reads(func(s *server) (string, bool) {
				return listPath(s.million, pageSize, s.millionCur[0], 0), s.millionCur[0] != ""
			})},
		{name: "1m-keyset-far", label: fmt.Sprintf("e3. %s pools: keyset after≈%s", thousands(int64(cfg.million)), thousands(int64(far))), ceiling: "select",
			target: reads(func(s *server) (string, bool) {
				return listPath(s.million, pageSize, s.millionCur[1], 0), s.millionCur[1] != ""
			})},
		{name: "1m-offset", label: fmt.Sprintf("e4. %s pools: offset=%d", thousands(int64(cfg.million)), far), ceiling: "select", firstOnly: true,
			target: reads(func(s *server) (string, bool) {
				return listPath(s.million, pageSize, "", far), s.million != "" && far > 0
			})},
	}
}

// profiled are the workloads profiled on PostgreSQL at the first -conns
// value, and the file each profile goes to.
var profiled = map[string]string{"get": "cpu-get.pb.gz", "create": "cpu-create.pb.gz", "put": "cpu-put.pb.gz"}

// result is one wrk run and what was read around it.
type result struct {
	workload  string // name
	label     string
	ceiling   string
	store     string
	conns     int
	wrk       wrkResult
	idle      float64 // % idle in the second before the run
	busy      float64 // % of the machine's CPU busy during the run
	serverCPU float64 // CPU seconds the server used during the run
	before    int64   // pools or generation before and after, when counted
	after     int64
	counted   bool
	notes     string
}

// runWorkloads runs every workload not skipped at each -conns value on each
// store, in that nesting, so that the stores take turns. It does so twice,
// for half of -duration each: forwards, then backwards, and merges the two
// legs of each run (-smoke: one leg of a second). Any drift over the run (a checkpoint, a table that grows,
// a busier machine) then weighs about the same on every workload, so the
// ratios between them, in which the goals are stated, cancel it.
func (b *bench) runWorkloads(ctx context.Context) error {
	type run struct {
		w workload
		s *server
		n int
		r wrkRun
	}
	var runs []run
	for _, w := range b.workloads() {
		if b.cfg.skip[w.name] {
			continue
		}
		conns := b.cfg.conns
		if w.firstOnly {
			conns = conns[:1]
		}
		for _, n := range conns {
			for _, s := range b.servers {
				if r, ok := w.target(s, n); ok {
					runs = append(runs, run{w, s, n, r})
				}
			}
		}
	}
	leg := b.cfg.legDuration()
	results := make([]result, len(runs))
	for i, r := range runs {
		var err error
		if results[i], err = b.measure(ctx, r.w, r.s, r.n, r.r, leg, nil); err != nil {
			return err
		}
	}
	for i := len(runs) - 1; i >= 0 && !b.cfg.quick; i-- {
		r := runs[i]
		var err error
		if results[i], err = b.measure(ctx, r.w, r.s, r.n, r.r, leg, &results[i]); err != nil {
			return err
		}
	}
	b.results = append(b.results, results...)
	return nil
}

// measure runs one leg of a workload, with the accounting around it. With
// first, the result of the first leg, it is the second leg and returns the
// two merged.
func (b *bench) measure(ctx context.Context, w workload, s *server, n int, r wrkRun, d time.Duration, first *result) (result, error) {
	res := result{workload: w.name, label: w.label, ceiling: w.ceiling, store: s.store, conns: n}
	legNo := 1
	if first != nil {
		legNo = 2
	}
	name := fmt.Sprintf("%s-%s-c%d", w.name, s.store, n)
	c := newClient(s.url, 2)
	defer c.http.CloseIdleConnections()
	var err error
	if w.count != nil {
		if res.before, err = w.count(ctx, c, s, n); err != nil {
			return res, err
		}
	}
	if res.idle, err = b.waitIdle(ctx); err != nil {
		return res, err
	}
	var wait func() error
	profile := profiled[w.name]
	if b.cfg.profile && profile != "" && s.store == "postgres" && n == b.cfg.conns[0] && first == nil {
		profile = filepath.Join(b.out, profile)
		wait = startProfile(ctx, s.pprof, d, profile)
	}
	t0, i0 := cpuTimes()
	cpu0 := processCPU(s.pid())
	res.wrk, err = runWrk(ctx, r, d, filepath.Join(b.out, "wrk", fmt.Sprintf("%s-leg%d.txt", name, legNo)))
	t1, i1 := cpuTimes()
	res.busy, res.serverCPU = busyPercent(t0, i0, t1, i1), processCPU(s.pid())-cpu0
	if wait != nil {
		if perr := wait(); perr != nil {
			b.warn(fmt.Sprintf("CPU profile of %s: %v", name, perr))
		} else {
			b.profiles = append(b.profiles, profile)
		}
	}
	if err != nil {
		return res, err
	}
	if w.count != nil {
		// Requests in flight when wrk stopped finish within a moment.
		if err := sleep(ctx, time.Second); err != nil {
			return res, err
		}
		if res.after, err = w.count(ctx, c, s, n); err != nil {
			return res, err
		}
		res.counted = true
	}
	line := fmt.Sprintf("%s leg %d: %.1f req/s, p50 %.2f ms, p99 %.2f ms, %d non-2xx, %d socket errors, %.0f%% idle before",
		name, legNo, res.wrk.rps, res.wrk.p50Ms, res.wrk.p99Ms, res.wrk.non2xx, res.wrk.socketErrors, res.idle)
	if first != nil {
		res = merge(*first, res)
		if res.counted {
			res.notes = countNote(w.name, res)
		}
		if res.idle < 60 {
			busy := fmt.Sprintf("**busy machine: %.0f%% idle before a leg**", res.idle)
			if res.notes != "" {
				busy = "; " + busy
			}
			res.notes += busy
		}
		line += fmt.Sprintf("; both legs: %.1f req/s, p99 %.2f ms", res.wrk.rps, res.wrk.p99Ms)
		if res.notes != "" {
			line += "; " + res.notes
		}
	}
	if first == nil && b.cfg.quick && res.counted {
		res.notes = countNote(w.name, res)
	}
	progress("%s", line)
	return res, nil
}

// merge is the result of two legs of one run of equal length: rates and
// latencies are the means of the legs' (wrk reports percentiles, not the
// histogram to add), counts their sums; what was counted (pools, a
// generation) runs from a's before by both legs' changes, as if the legs ran
// back to back (between them a run at another connection count may change
// the same object); idle is the lower of the two.
func merge(a, b result) result {
	m := a
	m.wrk.rps = (a.wrk.rps + b.wrk.rps) / 2
	m.wrk.p50Ms = (a.wrk.p50Ms + b.wrk.p50Ms) / 2
	m.wrk.p99Ms = (a.wrk.p99Ms + b.wrk.p99Ms) / 2
	if n := a.wrk.requests + b.wrk.requests; n > 0 {
		m.wrk.avgMs = (a.wrk.avgMs*float64(a.wrk.requests) + b.wrk.avgMs*float64(b.wrk.requests)) / float64(n)
	}
	m.wrk.requests += b.wrk.requests
	m.wrk.non2xx += b.wrk.non2xx
	m.wrk.socketErrors += b.wrk.socketErrors
	if b.wrk.socketDetail != "" {
		m.wrk.socketDetail = strings.TrimPrefix(a.wrk.socketDetail+"; "+b.wrk.socketDetail, "; ")
	}
	m.idle = min(a.idle, b.idle)
	m.busy = (a.busy + b.busy) / 2
	m.serverCPU += b.serverCPU
	m.after = a.after + (b.after - b.before)
	m.counted = a.counted && b.counted
	return m
}

// countNote describes what a counted run changed: pools before → after a
// create, and for a PUT the lost updates, 2xx answers − generations made.
// A negative difference (at most one per connection) is requests the server
// finished after wrk stopped counting, so it is 0 lost.
func countNote(name string, r result) string {
	if name != "put" {
		return fmt.Sprintf("pools %d→%d", r.before, r.after)
	}
	lost := fmt.Sprint(lostUpdates(r))
	if lostUpdates(r) > 0 {
		lost = "**!! " + lost + "**"
	}
	return fmt.Sprintf("2xx %d, generation +%d, lost %s", r.wrk.requests-r.wrk.non2xx, r.after-r.before, lost)
}

// lostUpdates is a PUT run's lost updates (see countNote).
func lostUpdates(r result) int64 {
	return max(0, int64(r.wrk.requests-r.wrk.non2xx)-(r.after-r.before))
}

// find returns the result of workload name on store at n connections.
func find(results []result, name, store string, n int) (result, bool) {
	i := slices.IndexFunc(results, func(r result) bool { return r.workload == name && r.store == store && r.conns == n })
	if i < 0 {
		return result{}, false
	}
	return results[i], true
}

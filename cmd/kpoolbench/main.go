// Command kpoolbench measures kpool's REST API under load next to the
// ceilings of the PostgreSQL it runs on, in one run, and prints one Markdown
// table (and writes it, with the raw data, into an output directory).
//
// It builds ./cmd/kpool, starts `kpool serve --reconcile=false --pprof …` on
// PostgreSQL and on SQLite (fresh databases), creates what the workloads
// need through the API, and runs each workload with wrk at each -conns:
//
//	a   GET one pool
//	b1  POST pools into an empty cluster; b2 into a cluster preloaded with -big
//	c   blind PUT of one pool, with lost-update accounting by generation
//	d   list 50 of -list pools: first page, deep offset, deep keyset cursor
//	e   (PostgreSQL) list 50 of -million pools, bulk-loaded by SQL: first
//	    page, keyset near and far, offset far
//
// next to pgbench's one-row INSERT and primary-key SELECT in a database of
// its own. CPU profiles of GET, create and PUT come from the server's pprof.
//
// -mode fleet serves -fleet.clusters clusters on the clouds' emulators (one
// emulator each, in this process) and, for each -fleet.pools pools per
// cluster, runs one `kpool serve` on each store, then serve
// --reconcile=false beside each -fleet.procs count of `kpool controller`
// processes on PostgreSQL: convergence time, the kpool processes' CPU and
// peak RSS, the calls each cloud's emulators answered (GET /_cloudsim/calls)
// per pool created and per cluster at rest, and each controller's shard
// gauges (fleet.go).
//
// At the end it stops the servers and drops its databases, also on an error
// or Ctrl-C (unless -keep).
//
//	go run ./cmd/kpoolbench                 # full size: 100k, 10k and 1M pools
//	go run ./cmd/kpoolbench -big 200 -list 600 -million 2000 -duration 2s -conns 4
//	go run ./cmd/kpoolbench -mode fleet -fleet.clusters 50 -fleet.pools 10,100
//	go run ./cmd/kpoolbench -smoke          # every mode, tiny: what go test runs
//
// It needs Linux (/proc), Go, wrk and pgbench (installed with apt-get when
// missing and running as root) and PostgreSQL on 127.0.0.1:5432 with trust
// auth (started with pg_ctlcluster when down). Everything it talks to is on
// loopback.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// user is the identity every request carries (X-User-Email).
const user = "bench@example.com"

// config is what the flags ask for.
type config struct {
	pgURL    string // admin database URL; "" tries postgres, then root
	big      int    // pools preloaded into cluster "big"
	list     int    // pools preloaded into cluster "list"
	million  int    // pools bulk-loaded into cluster "million"; 0 skips
	duration time.Duration
	conns    []int
	stores   []string
	skip     map[string]bool
	keep     bool
	out      string
	profile  bool
	workers  int
	modes    map[string]bool // "load", "fleet"
	quick    bool            // -smoke: one short leg per workload, no wait for an idle machine
	fleet    fleetConfig
	stdout   io.Writer // the report (nil: os.Stdout)
	kpool    string    // a kpool binary to run instead of building ./cmd/kpool
}

// workloadNames are the names -skip takes, in the order they run.
var workloadNames = []string{
	"get", "create", "create-big", "put",
	"list-first", "list-offset", "list-keyset",
	"1m-first", "1m-keyset-near", "1m-keyset-far", "1m-offset",
	"pgbench",
}

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("kpoolbench", flag.ContinueOnError)
	var c config
	var conns, stores, skip, modes, pools, procs, cs string
	var smoke bool
	fs.StringVar(&c.pgURL, "pg", "", "PostgreSQL admin URL (default postgres://postgres@127.0.0.1:5432/test?sslmode=disable, then user root)")
	fs.IntVar(&c.big, "big", 100000, "pools preloaded through the API into the cluster that creates go into (b2)")
	fs.IntVar(&c.list, "list", 10000, "pools preloaded through the API into the cluster the list workloads read (d)")
	fs.IntVar(&c.million, "million", 1000000, "pools bulk-loaded by SQL into the PostgreSQL cluster of workload e; 0 skips e")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "length of each wrk and pgbench run, in whole seconds")
	fs.StringVar(&conns, "conns", "16,64", "comma-separated connection counts; each workload runs at each")
	fs.StringVar(&stores, "stores", "postgres,sqlite", "comma-separated stores to measure: postgres, sqlite")
	fs.StringVar(&skip, "skip", "", "comma-separated workloads not to run: "+strings.Join(workloadNames, ", "))
	fs.BoolVar(&c.keep, "keep", false, "leave the servers running and the databases in place at the end, and print how to reach them")
	fs.StringVar(&c.out, "out", "", "directory for the report, raw TSV, wrk outputs, profiles and server logs (default a new temporary directory)")
	fs.BoolVar(&c.profile, "profile", true, "take CPU profiles of the PostgreSQL server during GET, create and PUT at the first -conns value")
	fs.IntVar(&c.workers, "workers", 32, "concurrent requests of the preloader")
	fs.StringVar(&modes, "mode", "load", "comma-separated modes: load (the API under wrk, next to pgbench), fleet (clusters and pools on the clouds' emulators: convergence, calls, controller processes)")
	fs.BoolVar(&smoke, "smoke", false, "every mode at tiny sizes in well under a minute (what .ci/run runs through go test); overrides the size flags")
	fs.StringVar(&c.kpool, "kpool", "", "run this kpool binary instead of building ./cmd/kpool of the module")
	c.fleet.register(fs, &pools, &procs, &cs)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	var err error
	if c.conns, err = parseConns(conns); err != nil {
		return c, err
	}
	if err := c.fleet.parse(pools, procs, cs); err != nil {
		return c, err
	}
	c.modes = map[string]bool{}
	for _, m := range splitList(modes) {
		if !slices.Contains(modeNames, m) {
			return c, fmt.Errorf("-mode: unknown mode %q; known: %s", m, strings.Join(modeNames, ", "))
		}
		c.modes[m] = true
	}
	if smoke {
		c.quick = true
		c.modes = map[string]bool{"load": true, "fleet": true}
		c.smoke()
	}
	if len(c.modes) == 0 {
		return c, fmt.Errorf("-mode: name at least one of %s", strings.Join(modeNames, ", "))
	}
	c.stores = splitList(stores)
	if len(c.stores) == 0 {
		return c, fmt.Errorf("-stores: name at least one of postgres, sqlite")
	}
	for i, s := range c.stores {
		if s != "postgres" && s != "sqlite" {
			return c, fmt.Errorf("-stores: %q is neither postgres nor sqlite", s)
		}
		if slices.Contains(c.stores[:i], s) {
			return c, fmt.Errorf("-stores: %s is named twice", s)
		}
	}
	c.skip = map[string]bool{}
	for _, s := range splitList(skip) {
		if !slices.Contains(workloadNames, s) {
			return c, fmt.Errorf("-skip: unknown workload %q; known: %s", s, strings.Join(workloadNames, ", "))
		}
		c.skip[s] = true
	}
	switch {
	case c.duration < 2*time.Second:
		return c, fmt.Errorf("-duration must be at least 2s: each workload runs in two legs of half of it")
	case c.big < 0 || c.list < 0 || c.million < 0:
		return c, fmt.Errorf("-big, -list and -million must not be negative")
	case c.workers < 1:
		return c, fmt.Errorf("-workers must be at least 1")
	}
	return c, nil
}

// legDuration is the length of each of a workload's two legs (see
// runWorkloads): half of -duration, in whole seconds as wrk takes them.
func (c config) legDuration() time.Duration {
	if c.quick {
		return time.Second
	}
	return max(time.Second, (c.duration / 2).Truncate(time.Second))
}

// parseConns parses -conns: positive integers, comma-separated.
func parseConns(s string) ([]int, error) {
	var out []int
	for _, p := range splitList(s) {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-conns: %q is not a positive number", p)
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("-conns: %d is named twice", n)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-conns: give at least one connection count")
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// progress prints a line of progress on stderr.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s kpoolbench: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err == flag.ErrHelp {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kpoolbench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = run(ctx, cfg)
	interrupted := ctx.Err() != nil
	stop()
	if interrupted {
		fmt.Fprintln(os.Stderr, "kpoolbench: interrupted")
		os.Exit(130)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kpoolbench:", err)
		os.Exit(1)
	}
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

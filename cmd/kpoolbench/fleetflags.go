package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kpool/kpool/cloudsim"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider/catalog/clouds"
)

// fleetConfig is what the -fleet.* flags ask of the fleet mode.
type fleetConfig struct {
	clusters   int      // clusters in all, round the clouds
	pools      []int    // pools per cluster, one run each
	procs      []int    // controller processes on PostgreSQL, one run each
	clouds     []string // the clouds' names (provider/catalog/clouds)
	drift      time.Duration
	resyncFast time.Duration
	settle     time.Duration // after convergence, before the rest window
	window     time.Duration // the rest window
	operation  time.Duration // an emulated operation's time, and per node
	node       time.Duration
	timeout    time.Duration // for convergence
	workers    int
	kpoolArgs  []string // more flags for every kpool serve and controller of a run
	serveRuns  bool     // run serve with its controllers at each pools count too
}

// modeNames are the modes -mode takes.
var modeNames = []string{"load", "fleet"}

func (f *fleetConfig) register(fs *flag.FlagSet, pools, procs, cs *string) {
	fs.Func("fleet.kpool-arg", "fleet mode: a flag for every kpool serve and controller of the runs, such as --account-budget=aws=writes:50 (a fleet's emulated clusters share a few accounts, whose budgets otherwise bound the creates); repeat for more", func(s string) error {
		if !strings.HasPrefix(s, "--") {
			return fmt.Errorf("%q: give a kpool flag, --name=value", s)
		}
		f.kpoolArgs = append(f.kpoolArgs, s)
		return nil
	})
	fs.BoolVar(&f.serveRuns, "fleet.serve", true, "fleet mode: run one kpool serve with its controllers at each -fleet.pools on each -stores; false runs only the -fleet.procs runs (PostgreSQL)")
	fs.IntVar(&f.clusters, "fleet.clusters", 10, "fleet mode: clusters in all, spread round -fleet.clouds, each on an emulator of its own")
	fs.StringVar(pools, "fleet.pools", "10,30", "fleet mode: pools per cluster, comma-separated: one run each, side by side in the report (30 is EKS's limit of managed node groups per cluster, which its emulator keeps)")
	fs.StringVar(procs, "fleet.procs", "1,2,3", "fleet mode: kpool controller processes beside serve --reconcile=false on PostgreSQL (at the last -fleet.pools), one run each")
	fs.StringVar(cs, "fleet.clouds", strings.Join(clouds.Names(), ","), "fleet mode: the clouds whose emulators hold the clusters")
	fs.DurationVar(&f.drift, "fleet.drift", 5*time.Second, "fleet mode: kpool's --drift-interval (its default is 1m; calls at rest are also given per drift pass and scaled to 1m)")
	fs.DurationVar(&f.resyncFast, "fleet.resync-fast", 2*time.Second, "fleet mode: kpool's --resync-fast, how often a settling pool is looked at")
	fs.DurationVar(&f.settle, "fleet.settle", 10*time.Second, "fleet mode: wait after convergence for the fast resyncs to end, before the rest window")
	fs.DurationVar(&f.window, "fleet.window", 30*time.Second, "fleet mode: the window at rest in which the emulators' calls are counted")
	fs.DurationVar(&f.operation, "fleet.operation", time.Second, "fleet mode: an emulated cloud operation's time (cloudsim's wall-clock default is 5s)")
	fs.DurationVar(&f.node, "fleet.node", 200*time.Millisecond, "fleet mode: an emulated operation's extra time per node (cloudsim's default is 2s)")
	fs.DurationVar(&f.timeout, "fleet.timeout", 15*time.Minute, "fleet mode: the longest a run may take to converge")
	fs.IntVar(&f.workers, "fleet.workers", 16, "fleet mode: concurrent creates through the API")
}

// parse checks the fleet flags and reads the lists.
func (f *fleetConfig) parse(pools, procs, cs string) error {
	var err error
	if f.pools, err = positives("-fleet.pools", pools); err != nil {
		return err
	}
	if f.procs, err = positives("-fleet.procs", procs); err != nil {
		return err
	}
	f.clouds = splitList(cs)
	if _, err := fleetClouds(f.clouds); err != nil {
		return err
	}
	switch {
	case len(f.clouds) == 0:
		return fmt.Errorf("-fleet.clouds: name at least one cloud")
	case f.clusters < len(f.clouds):
		return fmt.Errorf("-fleet.clusters %d: give at least one cluster per cloud (%d)", f.clusters, len(f.clouds))
	case f.drift < time.Second:
		return fmt.Errorf("-fleet.drift: kpool takes at least 1s")
	case f.window < f.drift:
		return fmt.Errorf("-fleet.window must hold at least one drift interval")
	case f.workers < 1 || f.timeout <= 0 || f.resyncFast <= 0 || f.settle < 0 || f.operation < 0 || f.node < 0:
		return fmt.Errorf("-fleet.workers, -fleet.timeout and -fleet.resync-fast must be positive, the other durations not negative")
	}
	return nil
}

// options are the emulators' engine options: the flags' timings, and a
// short call log (the counts, which the fleet reads, are never cut).
func (f fleetConfig) options() sim.Options {
	o := cloudsim.Defaults()
	o.OperationTime, o.NodeTime, o.MaxCalls = f.operation, f.node, 1000
	return o
}

// positives parses a comma-separated list of positive integers.
func positives(flagName, s string) ([]int, error) {
	var out []int
	for _, p := range splitList(s) {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s: %q is not a positive number", flagName, p)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: give at least one number", flagName)
	}
	return out, nil
}

// smoke is -smoke: every mode at tiny sizes, in well under a minute,
// for .ci/run; what the flags set besides is overridden.
func (c *config) smoke() {
	c.big, c.list, c.million = 60, 120, 300
	c.duration, c.conns, c.profile, c.workers = 2*time.Second, []int{2}, false, 8
	c.fleet.clusters = len(c.fleet.clouds)
	c.fleet.pools, c.fleet.procs = []int{1, 3}, []int{1, 2, 3}
	c.fleet.drift, c.fleet.resyncFast, c.fleet.settle, c.fleet.window = time.Second, 300*time.Millisecond, 500*time.Millisecond, 2*time.Second
	c.fleet.operation, c.fleet.node, c.fleet.timeout = 100*time.Millisecond, 20*time.Millisecond, time.Minute
}

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider/catalog/clouds"
)

// The fleet mode: -fleet.clusters clusters on the clouds' emulators with
// each -fleet.pools pools per cluster, on kpool serve (with its
// controllers) on each store; then, on PostgreSQL, kpool serve
// --reconcile=false beside each -fleet.procs count of kpool controller
// processes. Each run starts from fresh emulators and a fresh database,
// creates every pool through the API, and measures convergence (every pool
// Ready), the kpool processes' CPU and peak RSS, the calls each cloud's
// emulators answered per pool, and, after the fast resyncs have settled,
// the calls over -fleet.window of rest.

// fleetRun is one run of the fleet mode and what it measured.
type fleetRun struct {
	Store    string `json:"store"`
	Procs    int    `json:"controller_processes"` // 0: one kpool serve running the controllers
	PerPool  int    `json:"pools_per_cluster"`
	Clusters int    `json:"clusters"`
	Pools    int    `json:"pools"`
	// Converge is from the first create to every pool Ready; CPU the kpool
	// processes' CPU seconds in it; PeakRSS their largest VmHWM (kB).
	Converge float64 `json:"converge_s"`
	CPU      float64 `json:"cpu_s"`
	PeakRSS  int64   `json:"peak_rss_kb"`
	// Window is the length of the rest window (s), Passes the drift
	// passes in it, RestCPU the processes' CPU seconds in it.
	Settled float64      `json:"settled_after_s"` // from convergence to the rest window
	Window  float64      `json:"rest_window_s"`
	Passes  float64      `json:"rest_drift_passes"`
	RestCPU float64      `json:"rest_cpu_s"`
	Clouds  []fleetCloud `json:"clouds"`
	// Shards are each controller process's kpool_controller_shards and
	// kpool_controller_clusters, when it serves them.
	Shards []shardGauge `json:"shards,omitempty"`
	Notes  []string     `json:"notes,omitempty"`
}

// fleetCloud is one cloud's share of a run.
type fleetCloud struct {
	Name     string      `json:"cloud"`
	Clusters int         `json:"clusters"`
	Pools    int         `json:"pools"`
	Converge *cloudCalls `json:"calls_to_converge"`
	Rest     *cloudCalls `json:"calls_at_rest"`
}

// shardGauge is what one controller process says it holds.
type shardGauge struct {
	Shards   float64 `json:"shards"`
	Clusters float64 `json:"clusters"`
}

// perPool is the calls to converge per pool created.
func (c fleetCloud) perPool() float64 { return float64(c.Converge.Total) / float64(max(c.Pools, 1)) }

// perPass is the calls at rest per cluster per drift pass.
func (c fleetCloud) perPass(r *fleetRun) float64 {
	return float64(c.Rest.Total) / float64(max(c.Clusters, 1)) / max(r.Passes, 1e-9)
}

// perHour is the calls at rest per cluster-hour at the default drift
// interval of 1m: 60 passes an hour.
func (c fleetCloud) perHour(r *fleetRun) float64 { return 60 * c.perPass(r) }

// largestShard is the most clusters one controller process holds, -1 when
// no process served the gauge.
func (r *fleetRun) largestShard() float64 {
	largest := -1.0
	for _, s := range r.Shards {
		largest = max(largest, s.Clusters)
	}
	return largest
}

// runFleet runs every fleet run the flags ask for.
func (b *bench) runFleet(ctx context.Context) error {
	f := b.cfg.fleet
	cs, err := fleetClouds(f.clouds)
	if err != nil {
		return err
	}
	if slices.Contains(b.cfg.stores, "postgres") && b.adminURL == "" {
		if b.adminURL, err = findAdmin(ctx, b.cfg.pgURL); err != nil {
			return err
		}
	}
	for _, store := range b.cfg.stores {
		for _, m := range f.pools {
			if !f.serveRuns {
				break
			}
			r, err := b.fleetOnce(ctx, cs, store, m, 0)
			if err != nil {
				return err
			}
			b.fleet = append(b.fleet, r)
		}
	}
	if !slices.Contains(b.cfg.stores, "postgres") {
		return nil
	}
	m := f.pools[len(f.pools)-1]
	for _, p := range f.procs {
		r, err := b.fleetOnce(ctx, cs, "postgres", m, p)
		if err != nil {
			return err
		}
		b.fleet = append(b.fleet, r)
		if p == 1 && r.largestShard() < 0 {
			b.fleetNote = "P > 1 not run: the controller processes serve no kpool_controller_clusters gauge (sharding over processes has not landed at this commit); with one lease holder, more processes are standbys"
			break
		}
	}
	return nil
}

// fleetOnce is one run: store, m pools per cluster, procs controller
// processes (0: serve runs the controllers).
func (b *bench) fleetOnce(ctx context.Context, cs []clouds.Cloud, store string, m, procs int) (*fleetRun, error) {
	f := b.cfg.fleet
	label := fmt.Sprintf("fleet_%s_m%d_p%d", store, m, procs)
	progress("%s: %d clusters, %d pools each", label, f.clusters, m)
	dir, err := os.MkdirTemp(b.work, label+"-")
	if err != nil {
		return nil, err
	}
	emus, ca, stopEmus, err := startEmulators(cs, f.clusters, f.options(), dir)
	if err != nil {
		return nil, err
	}
	defer stopEmus()
	database, drop, err := b.fleetDatabase(ctx, store, dir, label)
	if err != nil {
		return nil, err
	}
	defer drop()
	ps, err := b.startFleetProcs(ctx, database, emus, dir, procs, label)
	defer func() {
		for _, p := range ps {
			p.stop()
		}
	}()
	if err != nil {
		return nil, err
	}
	r := &fleetRun{Store: store, Procs: procs, PerPool: m, Clusters: len(emus), Pools: m * len(emus)}
	c := newClient(ps[0].url, 2*f.workers)
	defer c.http.CloseIdleConnections()
	if err := registerClusters(ctx, c, emus); err != nil {
		return nil, err
	}
	cpu0, start := procsCPU(ps), time.Now()
	if err := createPools(ctx, c, emus, m, f.workers); err != nil {
		return nil, err
	}
	if err := waitConverged(ctx, c, r.Pools, ps, f.timeout); err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	r.Converge, r.CPU = time.Since(start).Seconds(), procsCPU(ps)-cpu0
	conv, err := callCounts(ctx, ca, emus)
	if err != nil {
		return nil, err
	}
	r.Shards = readShards(ctx, ps, procs)
	progress("%s: converged in %.1fs; settling %s, then %s at rest", label, r.Converge, f.settle, f.window)
	if err := b.measureRest(ctx, r, ca, emus, conv, ps); err != nil {
		return nil, err
	}
	for _, p := range ps {
		if err := p.alive(); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// measureRest waits for the fast resyncs to settle, then counts the calls
// and the CPU over the rest window, and fills in each cloud's figures.
func (b *bench) measureRest(ctx context.Context, r *fleetRun, ca *sim.CA, emus []*fleetEmulator, conv []sim.CallCounts, ps []*proc) error {
	f := b.cfg.fleet
	if err := b.settle(ctx, r, ca, emus); err != nil {
		return err
	}
	before, err := callCounts(ctx, ca, emus)
	if err != nil {
		return err
	}
	cpu1, t1 := procsCPU(ps), time.Now()
	if err := sleep(ctx, f.window); err != nil {
		return err
	}
	after, err := callCounts(ctx, ca, emus)
	if err != nil {
		return err
	}
	r.RestCPU, r.Window = procsCPU(ps)-cpu1, time.Since(t1).Seconds()
	r.Passes = r.Window / f.drift.Seconds()
	r.PeakRSS = peakRSS(ps)
	converge, rest := callsByCloud(emus, nil, conv), callsByCloud(emus, before, after)
	for _, e := range emus {
		i := slices.IndexFunc(r.Clouds, func(c fleetCloud) bool { return c.Name == e.cloud.Name })
		if i < 0 {
			r.Clouds = append(r.Clouds, fleetCloud{Name: e.cloud.Name, Converge: converge[e.cloud.Name], Rest: rest[e.cloud.Name]})
			i = len(r.Clouds) - 1
		}
		r.Clouds[i].Clusters++
		r.Clouds[i].Pools += r.PerPool
	}
	return nil
}

// settle waits -fleet.settle, then until the calls the emulators answer
// stop falling (the fast resyncs of settling pools have ended): two
// windows of two drift intervals in a row within 10% of each other, for
// at most 10 × -fleet.settle, noting it when they do not.
func (b *bench) settle(ctx context.Context, r *fleetRun, ca *sim.CA, emus []*fleetEmulator) error {
	f := b.cfg.fleet
	start := time.Now()
	if err := sleep(ctx, f.settle); err != nil {
		return err
	}
	total := func() (int, error) {
		cs, err := callCounts(ctx, ca, emus)
		n := 0
		for _, c := range cs {
			n += c.Total
		}
		return n, err
	}
	prev := -1
	for time.Since(start) < 10*f.settle {
		c0, err := total()
		if err != nil {
			return err
		}
		if err := sleep(ctx, 2*f.drift); err != nil {
			return err
		}
		c1, err := total()
		if err != nil {
			return err
		}
		if n := c1 - c0; prev >= 0 && float64(n) >= 0.9*float64(prev) {
			r.Settled = time.Since(start).Seconds()
			return nil
		}
		prev = c1 - c0
	}
	r.Settled = time.Since(start).Seconds()
	r.Notes = append(r.Notes, fmt.Sprintf("the calls were still falling %.0fs after convergence: the window at rest may hold fast resyncs", r.Settled))
	return nil
}

// fleetDatabase is a fresh database for a run and what drops it: on
// PostgreSQL a new database, on SQLite a file in dir.
func (b *bench) fleetDatabase(ctx context.Context, store, dir, label string) (string, func(), error) {
	if store == "sqlite" {
		return "sqlite:" + filepath.Join(dir, "fleet.db"), func() {}, nil
	}
	name := fmt.Sprintf("kpoolbench_%d_%s", time.Now().Unix(), label)
	if err := createDatabase(ctx, b.adminURL, name); err != nil {
		return "", nil, fmt.Errorf("create database %s: %w", name, err)
	}
	drop := func() {
		if b.cfg.keep {
			return
		}
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := dropDatabase(dctx, b.adminURL, name); err != nil {
			progress("could not drop database %s: %v", name, err)
		}
	}
	return databaseURL(b.adminURL, name), drop, nil
}

// startFleetProcs starts kpool serve (first, so that it migrates) and, when
// procs > 0, serve --reconcile=false beside procs kpool controller
// processes, all on database and the emulators. The API is the first's.
func (b *bench) startFleetProcs(ctx context.Context, database string, emus []*fleetEmulator, dir string, procs int, label string) ([]*proc, error) {
	f := b.cfg.fleet
	common := []string{"--database", database, "--log-format", "text", "--drift-interval", f.drift.String(),
		"--resync-fast", f.resyncFast.String(), "--emulators", emulatorURLs(emus), "--emulator-ca", filepath.Join(dir, "ca.pem")}
	common = append(common, f.kpoolArgs...)
	args := append([]string{"serve", "--auth", "header", "--rate", "0", "--listen", "127.0.0.1:0"}, common...)
	if procs > 0 {
		args = append(args, "--reconcile=false")
	}
	var ps []*proc
	p, err := startProc(ctx, "kpool serve", b.bin, args, filepath.Join(b.out, label+"-serve.log"), servingLine)
	if err != nil {
		return ps, err
	}
	ps = append(ps, p)
	for i := range procs {
		args := append([]string{"controller", "--listen", "127.0.0.1:0"}, common...)
		name := fmt.Sprintf("kpool controller %d", i+1)
		p, err := startProc(ctx, name, b.bin, args, filepath.Join(b.out, fmt.Sprintf("%s-controller%d.log", label, i+1)), controllerLine)
		if err != nil {
			return ps, err
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// readShards reads each controller process's shard gauges (serve's own
// when it runs the controllers); processes without them are left out.
func readShards(ctx context.Context, ps []*proc, procs int) []shardGauge {
	ctl := ps
	if procs > 0 {
		ctl = ps[1:]
	}
	var out []shardGauge
	for _, p := range ctl {
		g, err := gauges(ctx, p.url+"/metrics", "kpool_controller_shards", "kpool_controller_clusters")
		if err != nil {
			continue
		}
		if c, ok := g["kpool_controller_clusters"]; ok {
			out = append(out, shardGauge{Shards: g["kpool_controller_shards"], Clusters: c})
		}
	}
	return out
}

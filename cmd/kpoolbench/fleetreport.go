package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// fleetReport writes the fleet mode's section and fleet.json.
func (b *bench) fleetReport(md *strings.Builder) error {
	f := b.cfg.fleet
	fmt.Fprintf(md, "\n## A fleet on the emulators, %s\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(md, "%d clusters round %s, each on an emulator of its own on 127.0.0.1 (an operation takes %s + %s per node); ",
		f.clusters, strings.Join(f.clouds, ", "), f.operation, f.node)
	fmt.Fprintf(md, "every pool created through the API (%d at once), converged when every pool is Ready. ", f.workers)
	fmt.Fprintf(md, "kpool runs with `--drift-interval %s --resync-fast %s`; after convergence it settles (at least %s, until the calls per two drift intervals stop falling), then the emulators' `GET /_cloudsim/calls` are read over a rest window of %s. ",
		f.drift, f.resyncFast, f.settle, f.window)
	fmt.Fprintf(md, "Calls at rest are per cluster per drift pass (window ÷ %s), and per cluster-hour at kpool's default drift interval of 1m (60 passes); at %s an hour holds %.0f passes. ",
		f.drift, f.drift, time.Hour.Seconds()/f.drift.Seconds())
	md.WriteString("CPU and peak RSS (VmHWM) are the kpool processes', not the emulators' (they run in kpoolbench).\n\n")
	md.WriteString(convergenceTable(b.fleet))
	for _, store := range b.cfg.stores {
		if t := callsTable(b.fleet, store); t != "" {
			fmt.Fprintf(md, "\n### Calls per cloud (%s, one kpool serve)\n\n%s", store, t)
		}
	}
	if b.fleetNote != "" {
		fmt.Fprintf(md, "\n- %s\n", b.fleetNote)
	}
	for _, r := range b.fleet {
		for _, n := range r.Notes {
			fmt.Fprintf(md, "- %s: %s\n", runLabel(r), n)
		}
	}
	js, err := json.MarshalIndent(map[string]any{"runs": b.fleet, "note": b.fleetNote, "drift_interval_s": f.drift.Seconds()}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(b.out, "fleet.json"), append(js, '\n'), 0o644)
}

// runLabel names a run's kpool processes.
func runLabel(r *fleetRun) string {
	if r.Procs == 0 {
		return fmt.Sprintf("serve (%s)", r.Store)
	}
	return fmt.Sprintf("serve --reconcile=false + %d controller (%s)", r.Procs, r.Store)
}

// convergenceTable is a row per run: how long, how much CPU and memory,
// and the largest shard.
func convergenceTable(runs []*fleetRun) string {
	var t strings.Builder
	t.WriteString("| kpool processes | pools/cluster | pools | converge | CPU s | peak RSS | CPU s at rest | largest shard | settled after |\n")
	t.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range runs {
		shard := "—"
		if l := r.largestShard(); l >= 0 {
			shard = fmt.Sprintf("%.0f of %d clusters (%d processes)", l, r.Clusters, len(r.Shards))
		}
		fmt.Fprintf(&t, "| %s | %d | %d | %.1f s | %.1f | %.1f MB | %.2f in %.0f s | %s | %.0f s |\n",
			runLabel(r), r.PerPool, r.Pools, r.Converge, r.CPU, float64(r.PeakRSS)/1024, r.RestCPU, r.Window, shard, r.Settled)
	}
	return t.String()
}

// callsTable puts a store's serve runs side by side per cloud: calls per
// pool created, and at rest per cluster per pass and per hour, each for
// every pools-per-cluster value; "" when the store has no such run.
func callsTable(runs []*fleetRun, store string) string {
	var rs []*fleetRun
	for _, r := range runs {
		if r.Store == store && r.Procs == 0 {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return ""
	}
	var ms []string
	for _, r := range rs {
		ms = append(ms, fmt.Sprintf("M=%d", r.PerPool))
	}
	m := strings.Join(ms, " / ")
	var t strings.Builder
	fmt.Fprintf(&t, "| cloud | clusters | calls per pool created, %s | at rest per cluster per pass, %s | per cluster-hour at 1m, %s | at rest | most called at rest (M=%d) |\n",
		m, m, m, rs[len(rs)-1].PerPool)
	t.WriteString("|---|---:|---:|---:|---:|---|---|\n")
	for _, c := range rs[0].Clouds {
		var created, pass, hour []string
		var passes []float64
		for _, r := range rs {
			i := slices.IndexFunc(r.Clouds, func(x fleetCloud) bool { return x.Name == c.Name })
			if i < 0 {
				continue
			}
			rc := r.Clouds[i]
			created = append(created, fmt.Sprintf("%.2f", rc.perPool()))
			pass = append(pass, fmt.Sprintf("%.2f", rc.perPass(r)))
			hour = append(hour, formatRate(rc.perHour(r)))
			passes = append(passes, rc.perPass(r))
		}
		last := rs[len(rs)-1]
		top := ""
		if i := slices.IndexFunc(last.Clouds, func(x fleetCloud) bool { return x.Name == c.Name }); i >= 0 {
			top = last.Clouds[i].Rest.top(3)
		}
		fmt.Fprintf(&t, "| %s | %d | %s | %s | %s | %s | %s |\n", c.Name, c.Clusters, strings.Join(created, " / "),
			strings.Join(pass, " / "), strings.Join(hour, " / "), restVerdict(passes), top)
	}
	return t.String()
}

// restVerdict says whether the calls at rest per cluster stayed the same
// as the pools per cluster grew: within 25% (or one call a pass) of the
// first run's.
func restVerdict(passes []float64) string {
	if len(passes) < 2 {
		return "—"
	}
	first, last := passes[0], passes[len(passes)-1]
	if last <= first*1.25 || last-first < 1 {
		return "flat"
	}
	return fmt.Sprintf("**grows ×%.1f**", last/max(first, 1e-9))
}

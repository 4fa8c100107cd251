package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// report writes the Markdown report (also to stdout), the raw TSV files,
// the fleet's JSON and the top of each CPU profile.
func (b *bench) report(ctx context.Context) error {
	out := b.cfg.stdout
	if out == nil {
		out = os.Stdout
	}
	var md strings.Builder
	if b.cfg.modes["load"] {
		if err := b.loadReport(&md); err != nil {
			return err
		}
	}
	if b.cfg.modes["fleet"] {
		if err := b.fleetReport(&md); err != nil {
			return err
		}
	}
	fmt.Fprintf(&md, "\nRaw data: `%s` (results.tsv, pgbench.tsv, fleet.json, wrk/, pgbench/, profiles, logs).\n", b.out)
	if err := os.WriteFile(filepath.Join(b.out, "report.md"), []byte(md.String()), 0o644); err != nil {
		return err
	}
	fmt.Fprint(out, md.String())

	for _, p := range b.profiles {
		top, err := pprofTop(ctx, b.bin, p)
		if err != nil {
			b.warn(err.Error())
			continue
		}
		_ = os.WriteFile(strings.TrimSuffix(p, ".pb.gz")+".top.txt", []byte(top), 0o644)
		fmt.Fprintf(out, "\n### %s (PostgreSQL, %d connections)\n\n```\n%s```\n", filepath.Base(p), b.cfg.conns[0], top)
	}
	progress("report in %s", filepath.Join(b.out, "report.md"))
	for _, s := range b.servers {
		progress("server log (%s): %s", s.store, s.logPath)
	}
	return nil
}

// loadReport writes the load mode's section and its TSV files.
func (b *bench) loadReport(md *strings.Builder) error {
	fmt.Fprintf(md, "## kpool under load, %s\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(md, "wrk -t2 -c<conns> -d%s --latency --timeout 10s against `kpool serve --reconcile=false` on 127.0.0.1; user %s. ", b.cfg.legDuration(), user)
	if b.cfg.quick {
		md.WriteString("**Smoke run (-smoke): one leg of a second per row, no wait for an idle machine: the figures say that each workload runs, not how fast.** ")
	} else {
		md.WriteString("Each row is two such legs, one in a pass through the workloads forwards and one in a pass backwards, merged (req/s and percentiles the legs' means), so that drift over the run weighs alike on every row and cancels in the ratios. ")
	}
	md.WriteString("% of ceiling compares req/s with pgbench on the same PostgreSQL at the same client count: GET and lists with the primary-key SELECT, POST and PUT with the one-row INSERT. ")
	md.WriteString("A request runs several statements, so 100% is out of reach; the ceiling is a yardstick, and PostgreSQL's also for the SQLite rows.\n\n")
	md.WriteString(resultsTable(b.results, b.ceilings))
	if bad := flagged(b.results); len(bad) > 0 {
		fmt.Fprintf(md, "\n**!! %d runs had errors (non-2xx responses or socket errors): %s. Their req/s is not a measure of the workload.**\n", len(bad), strings.Join(bad, ", "))
	}
	if len(b.ceilings) > 0 {
		md.WriteString("\n### pgbench ceilings\n\n")
		d := b.cfg.duration
		if b.cfg.quick {
			d = time.Second
		}
		md.WriteString(ceilingsTable(b.ceilings, d))
	}
	if t := ratiosTable(ratiosFor(b.cfg), b.results, b.cfg.conns); t != "" {
		md.WriteString("\n### Ratios\n\n")
		md.WriteString(t)
	}
	md.WriteString("\n### Memory of kpool serve (VmRSS; VmHWM is the peak)\n\n")
	md.WriteString(memoryTable(b.cfg.stores, b.memStart, b.memEnd))
	md.WriteString("\n### Set-up\n\n")
	for _, f := range b.facts {
		fmt.Fprintf(md, "- %s\n", f)
	}
	for _, w := range b.warnings {
		fmt.Fprintf(md, "- **warning:** %s\n", w)
	}
	if err := os.WriteFile(filepath.Join(b.out, "results.tsv"), []byte(resultsTSV(b.results, b.ceilings)), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(b.out, "pgbench.tsv"), []byte(ceilingsTSV(b.ceilings)), 0o644)
}

// resultsTable is the main table: one row per wrk run.
func resultsTable(results []result, ceilings []ceiling) string {
	var t strings.Builder
	t.WriteString("| workload | conns | store | req/s | p50 | p99 | errors | % of ceiling | notes |\n")
	t.WriteString("|---|---:|---|---:|---:|---:|---|---:|---|\n")
	for _, r := range results {
		fmt.Fprintf(&t, "| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n",
			r.label, r.conns, r.store, formatRate(r.wrk.rps), formatMs(r.wrk.p50Ms), formatMs(r.wrk.p99Ms),
			errorsCell(r.wrk), ceilingCell(r, ceilings), r.notes)
	}
	return t.String()
}

// errorsCell is "0", or the errors in bold so that they are not missed.
func errorsCell(w wrkResult) string {
	var parts []string
	if w.non2xx > 0 {
		parts = append(parts, fmt.Sprintf("%d non-2xx", w.non2xx))
	}
	if w.socketErrors > 0 {
		parts = append(parts, "socket "+w.socketDetail)
	}
	if len(parts) == 0 {
		return "0"
	}
	return "**!! " + strings.Join(parts, "; ") + "**"
}

// flagged names the runs with errors.
func flagged(results []result) []string {
	var out []string
	for _, r := range results {
		if r.wrk.non2xx > 0 || r.wrk.socketErrors > 0 {
			out = append(out, fmt.Sprintf("%s c%d %s", r.label, r.conns, r.store))
		}
	}
	return out
}

// ceilingOf is the tps of the pgbench statement at n clients, 0 if not measured.
func ceilingOf(ceilings []ceiling, statement string, n int) float64 {
	i := slices.IndexFunc(ceilings, func(c ceiling) bool { return c.statement == statement && c.clients == n })
	if i < 0 {
		return 0
	}
	return ceilings[i].tps
}

func ceilingPercent(r result, ceilings []ceiling) float64 {
	if c := ceilingOf(ceilings, r.ceiling, r.conns); c > 0 {
		return 100 * r.wrk.rps / c
	}
	return 0
}

func ceilingCell(r result, ceilings []ceiling) string {
	p := ceilingPercent(r, ceilings)
	switch {
	case p == 0:
		return "—"
	case p < 0.1:
		return fmt.Sprintf("%.2f%% of %s", p, r.ceiling)
	}
	return fmt.Sprintf("%.1f%% of %s", p, r.ceiling)
}

func ceilingsTable(ceilings []ceiling, d time.Duration) string {
	var t strings.Builder
	fmt.Fprintf(&t, "pgbench -n -M prepared -j2 -c<clients> -T%d, in a database of its own, servers idle.\n\n", int(d.Seconds()))
	t.WriteString("| statement | clients | tps | avg | p50 | p99 | idle before |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range ceilings {
		what := "INSERT one nodepool-shaped row"
		if c.statement == "select" {
			what = "SELECT by primary key (100,000 rows)"
		}
		idle := fmt.Sprintf("%.0f%%", c.idle)
		if c.idle < 60 {
			idle = "**!! " + idle + " (busy machine)**"
		}
		fmt.Fprintf(&t, "| %s | %d | %s | %s | %s | %s | %s |\n", what, c.clients, formatRate(c.tps), formatMs(c.avgMs), formatMs(c.p50Ms), formatMs(c.p99Ms), idle)
	}
	return t.String()
}

// ratio is a derived figure: req/s of one workload over another's, on the
// same store at the same connection count.
type ratio struct {
	label    string
	num, den string // workload names
	min      float64
	meaning  string
}

// ratiosFor are the ratios the goals ask about, labelled with this run's sizes.
func ratiosFor(cfg config) []ratio {
	n := func(v int) string { return thousands(int64(v)) }
	listPos := cfg.listPos()
	near, far := cfg.millionPos()
	same := "1.0: a keyset page costs the same at any depth"
	return []ratio{
		{"b2 ÷ b1: create into " + n(cfg.big) + "+ pools ÷ into an empty cluster", "create-big", "create", 0.83,
			"want ≥ 0.83 (within 1.2×): a create must not cost more in a bigger cluster"},
		{"d3 ÷ d1: list keyset after≈" + n(listPos) + " ÷ first page", "list-keyset", "list-first", 0, same},
		{"d2 ÷ d1: list offset=" + n(listPos) + " ÷ first page", "list-offset", "list-first", 0, "offset pages cost more the deeper they start"},
		{"e1 ÷ d1: first page of " + n(cfg.million) + " pools ÷ of " + n(cfg.list), "1m-first", "list-first", 0,
			"1.0: a first page costs the same in a cluster of any size"},
		{"e3 ÷ e2: keyset after≈" + n(far) + " ÷ after≈" + n(near), "1m-keyset-far", "1m-keyset-near", 0, same},
		{"e2 ÷ e1: keyset after≈" + n(near) + " ÷ first page", "1m-keyset-near", "1m-first", 0, same},
		{"e4 ÷ e3: offset=" + n(far) + " ÷ keyset after≈" + n(far), "1m-offset", "1m-keyset-far", 0, "below 1: what keyset saves over offset at depth"},
	}
}

// ratiosTable computes every ratio both of whose workloads ran.
func ratiosTable(ratios []ratio, results []result, conns []int) string {
	var t strings.Builder
	for _, q := range ratios {
		for _, n := range conns {
			for _, store := range []string{"postgres", "sqlite"} {
				num, ok1 := find(results, q.num, store, n)
				den, ok2 := find(results, q.den, store, n)
				if !ok1 || !ok2 || den.wrk.rps == 0 {
					continue
				}
				v := num.wrk.rps / den.wrk.rps
				verdict := ""
				if q.min > 0 {
					verdict = " ok"
					if v < q.min {
						verdict = " **!! below " + strconv.FormatFloat(q.min, 'f', 2, 64) + "**"
					}
				}
				fmt.Fprintf(&t, "| %s | %d | %s | %.2f%s | %s |\n", q.label, n, store, v, verdict, q.meaning)
			}
		}
	}
	if t.Len() == 0 {
		return ""
	}
	return "| ratio of req/s | conns | store | value | reading |\n|---|---:|---|---:|---|\n" + t.String()
}

func memoryTable(stores []string, start, end map[string]memory) string {
	var t strings.Builder
	t.WriteString("| store | idle after start | after all runs | peak (VmHWM) |\n|---|---:|---:|---:|\n")
	for _, s := range stores {
		if _, ok := start[s]; !ok {
			continue
		}
		fmt.Fprintf(&t, "| %s | %.1f MB | %.1f MB | %.1f MB |\n", s, float64(start[s].rss)/1024, float64(end[s].rss)/1024, float64(max(end[s].hwm, start[s].hwm))/1024)
	}
	return t.String()
}

// resultsTSV is the raw data of every wrk run, one line each.
func resultsTSV(results []result, ceilings []ceiling) string {
	var t strings.Builder
	t.WriteString("workload\tlabel\tstore\tconns\treq_s\tavg_ms\tp50_ms\tp99_ms\trequests\tnon2xx\tsocket_errors\tidle_before_pct\tbusy_pct\tserver_cpu_s\tpct_of_ceiling\tbefore\tafter\tnotes\n")
	for _, r := range results {
		before, after := "", ""
		if r.counted {
			before, after = strconv.FormatInt(r.before, 10), strconv.FormatInt(r.after, 10)
		}
		fmt.Fprintf(&t, "%s\t%s\t%s\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%d\t%d\t%d\t%.0f\t%.0f\t%.1f\t%.2f\t%s\t%s\t%s\n",
			r.workload, r.label, r.store, r.conns, r.wrk.rps, r.wrk.avgMs, r.wrk.p50Ms, r.wrk.p99Ms, r.wrk.requests,
			r.wrk.non2xx, r.wrk.socketErrors, r.idle, r.busy, r.serverCPU, ceilingPercent(r, ceilings), before, after, r.notes)
	}
	return t.String()
}

func ceilingsTSV(ceilings []ceiling) string {
	var t strings.Builder
	t.WriteString("statement\tclients\ttps\tavg_ms\tp50_ms\tp99_ms\tidle_before_pct\n")
	for _, c := range ceilings {
		fmt.Fprintf(&t, "%s\t%d\t%.2f\t%.3f\t%.3f\t%.3f\t%.0f\n", c.statement, c.clients, c.tps, c.avgMs, c.p50Ms, c.p99Ms, c.idle)
	}
	return t.String()
}

// formatRate prints a rate with thousands separators, and with decimals
// only when it is small.
func formatRate(v float64) string {
	switch {
	case v >= 100:
		return thousands(int64(v + 0.5))
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// formatMs prints milliseconds like formatRate, with the unit; "—" for 0
// (not measured).
func formatMs(v float64) string {
	switch {
	case v == 0:
		return "—"
	case v >= 100:
		return thousands(int64(v+0.5)) + " ms"
	case v >= 10:
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.2f ms", v)
}

func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSmoke runs kpoolbench -smoke, every mode at tiny sizes, as README's
// test command and so .ci/run do, and checks the report it prints: every
// workload's row with requests and no errors, the ceilings, the memory,
// and every fleet run with its convergence and each cloud's calls, so that
// a kpoolbench that no longer runs at HEAD fails here. With
// KPOOL_TEST_POSTGRES it measures PostgreSQL beside SQLite (creating its
// own databases through that URL); without, SQLite alone.
func TestSmoke(t *testing.T) {
	if raceEnabled {
		t.Skip("the smoke run measures kpool child processes, which -race does not build; the plain go test ./... runs it")
	}
	for _, tool := range []string{"wrk", "pgbench"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("KPOOL_BENCH_TOOLS") == "required" {
				t.Fatalf("%s not found and KPOOL_BENCH_TOOLS=required", tool)
			}
			t.Skipf("%s not found: install it (apt-get install wrk postgresql) or set KPOOL_BENCH_TOOLS=required to fail", tool)
		}
	}
	out := t.TempDir()
	args := []string{"-smoke", "-out", out}
	if pg := os.Getenv("KPOOL_TEST_POSTGRES"); pg != "" {
		args = append(args, "-pg", pg)
	} else {
		args = append(args, "-stores", "sqlite", "-skip", "pgbench")
	}
	cfg, err := parseFlags(args)
	if err != nil {
		t.Fatal(err)
	}
	var report bytes.Buffer
	cfg.stdout = &report
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	if err := run(ctx, cfg); err != nil {
		t.Fatalf("kpoolbench %s: %v", strings.Join(args, " "), err)
	}
	t.Logf("kpoolbench -smoke took %s", time.Since(start).Round(time.Second))
	md := report.String()
	checkLoad(t, md, cfg)
	checkFleet(t, md, cfg, filepath.Join(out, "fleet.json"))
	if t.Failed() {
		t.Logf("the report:\n%s", md)
	}
}

// checkLoad checks the load mode's tables.
func checkLoad(t *testing.T, md string, cfg config) {
	rows := tableRows(md, "| workload | conns | store |")
	for _, store := range cfg.stores {
		labels := []string{"a.", "b1.", "b2.", "c.", "d1.", "d2.", "d3."}
		if store == "postgres" {
			labels = append(labels, "e1.", "e2.", "e3.", "e4.")
		}
		for _, l := range labels {
			r := findRow(rows, func(r []string) bool { return strings.HasPrefix(r[0], l) && r[2] == store })
			switch {
			case r == nil:
				t.Errorf("no row %s… for %s in the results table", l, store)
			case number(r[3]) <= 0 || r[6] != "0":
				t.Errorf("row %q: want requests a second and 0 errors", strings.Join(r, " | "))
			case l == "c." && !strings.Contains(r[8], "lost 0"):
				t.Errorf("PUT row %q: want lost 0", strings.Join(r, " | "))
			case strings.HasPrefix(l, "b") && !grew(r[8]):
				t.Errorf("create row %q: want the pools counted, more after than before", strings.Join(r, " | "))
			}
		}
		mb := func(s string) float64 { return number(strings.TrimSuffix(s, " MB")) }
		if r := findRow(tableRows(md, "| store | idle after start |"), func(r []string) bool { return r[0] == store }); r == nil || mb(r[1]) <= 0 || mb(r[3]) < mb(r[1]) {
			t.Errorf("memory row of %s: %q", store, r)
		}
	}
	if !cfg.skip["pgbench"] {
		ceil := tableRows(md, "| statement | clients |")
		if len(ceil) != 2 || number(ceil[0][2]) <= 0 || number(ceil[1][2]) <= 0 {
			t.Errorf("pgbench ceilings: %q", ceil)
		}
	}
}

// checkFleet checks the fleet mode's tables and fleet.json.
func checkFleet(t *testing.T, md string, cfg config, jsonPath string) {
	f := cfg.fleet
	conv := tableRows(md, "| kpool processes | pools/cluster |")
	want := len(cfg.stores) * len(f.pools)
	for _, r := range conv {
		if secs := number(strings.TrimSuffix(r[3], " s")); secs <= 0 || secs > f.timeout.Seconds() || number(r[4]) <= 0 || number(strings.TrimSuffix(r[5], " MB")) < 10 {
			t.Errorf("convergence row %q: want a time, CPU seconds and a peak RSS", strings.Join(r, " | "))
		}
	}
	if len(conv) < want+1 {
		t.Errorf("%d convergence rows, want %d runs of serve and at least one of controller processes", len(conv), want)
	}
	for _, store := range cfg.stores {
		_, section, _ := strings.Cut(md, "### Calls per cloud ("+store)
		calls := tableRows(section, "| cloud | clusters | calls per pool created")
		for _, cloud := range f.clouds {
			r := findRow(calls, func(r []string) bool { return r[0] == cloud })
			if r == nil {
				t.Errorf("%s: no calls row for %s", store, cloud)
				continue
			}
			for i, cell := range []string{r[2], r[3]} {
				for _, v := range strings.Split(cell, " / ") {
					if n := number(v); n <= 0 || n > 1000 || (i == 1 && n < 0.3) {
						t.Errorf("%s %s: %q is not a sane count of calls (row %q)", store, cloud, v, strings.Join(r, " | "))
					}
				}
			}
		}
	}
	var doc struct {
		Runs []fleetRun `json:"runs"`
	}
	b, err := os.ReadFile(jsonPath)
	if err == nil {
		err = json.Unmarshal(b, &doc)
	}
	if err != nil || len(doc.Runs) != len(conv) {
		t.Errorf("fleet.json: %v, %d runs for %d rows", err, len(doc.Runs), len(conv))
	}
	for _, r := range doc.Runs {
		if len(r.Clouds) != len(f.clouds) || r.Pools != r.PerPool*r.Clusters {
			t.Errorf("fleet.json run %+v: want every cloud and its pools", r)
		}
	}
}

// tableRows are the rows (cells trimmed) of the first Markdown table whose
// header line starts with header.
func tableRows(md, header string) [][]string {
	lines := strings.Split(md, "\n")
	var out [][]string
	for i, l := range lines {
		if !strings.HasPrefix(l, header) {
			continue
		}
		for _, row := range lines[min(i+2, len(lines)):] {
			if !strings.HasPrefix(row, "|") {
				break
			}
			var cells []string
			for _, c := range strings.Split(strings.Trim(row, "|"), " | ") {
				cells = append(cells, strings.TrimSpace(c))
			}
			out = append(out, cells)
		}
		break
	}
	return out
}

func findRow(rows [][]string, match func([]string) bool) []string {
	for _, r := range rows {
		if len(r) > 3 && match(r) {
			return r
		}
	}
	return nil
}

// number reads a figure as the report prints it ("1,234", "3.17"); -1 if
// it is none.
func number(s string) float64 {
	f, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(s), ",", ""), 64)
	if err != nil {
		return -1
	}
	return f
}

// grew reads a create's note "pools A→B…" and reports B > A.
func grew(note string) bool {
	_, counts, _ := strings.Cut(note, "pools ")
	a, b, ok := strings.Cut(counts, "→")
	if !ok {
		return false
	}
	b, _, _ = strings.Cut(b, ";")
	return number(a) >= 0 && number(b) > number(a)
}

package main

import (
	"bufio"
	"context"
	_ "embed"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The pgbench ceilings' schema and statements, those of perf.md section
// "f. pgbench": a one-row INSERT of a nodepool-shaped row and a primary-key
// SELECT from 100,000 such rows.
var (
	//go:embed scripts/pgbench_schema.sql
	pgbenchSchema string
	//go:embed scripts/pgbench_insert.sql
	pgbenchInsert []byte
	//go:embed scripts/pgbench_select.sql
	pgbenchSelect []byte
)

// ceiling is one pgbench measurement of a statement at a client count.
type ceiling struct {
	statement string // "insert" or "select"
	clients   int
	tps       float64
	avgMs     float64
	p50Ms     float64 // from the per-transaction logs; 0 if there were none
	p99Ms     float64
	idle      float64 // % idle in the second before the run
}

// preparePgbench creates the ceilings' tables in the database at dbURL and
// writes the two pgbench scripts into dir.
func preparePgbench(ctx context.Context, dbURL, dir string) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, pgbenchSchema); err != nil {
		return fmt.Errorf("pgbench schema: %w", err)
	}
	if _, err := conn.Exec(ctx, "VACUUM ANALYZE np_sel"); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "pgbench_insert.sql"), pgbenchInsert, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "pgbench_select.sql"), pgbenchSelect, 0o644)
}

// runPgbench runs `pgbench -n -M prepared -j2 -cN -TD -l` with the
// statement's script in dir, keeps its output there as
// pgbench-STATEMENT-cN.txt and reads the latency percentiles from its
// per-transaction logs, which it then removes (they are large).
func runPgbench(ctx context.Context, dbURL, dir, statement string, clients int, d time.Duration) (ceiling, error) {
	c := ceiling{statement: statement, clients: clients}
	name := fmt.Sprintf("pgbench-%s-c%d", statement, clients)
	logPrefix := name + ".log"
	args := []string{"-n", "-M", "prepared", "-j", strconv.Itoa(min(2, clients)), "-c", strconv.Itoa(clients),
		"-T", strconv.Itoa(int(d.Seconds())), "-f", "pgbench_" + statement + ".sql", "-l", "--log-prefix=" + logPrefix, dbURL}
	cmd := exec.CommandContext(ctx, "pgbench", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	_ = os.WriteFile(filepath.Join(dir, name+".txt"), append([]byte("pgbench "+strings.Join(args, " ")+"\n"), out...), 0o644)
	logs, _ := filepath.Glob(filepath.Join(dir, logPrefix+".*"))
	defer func() {
		for _, l := range logs {
			os.Remove(l)
		}
	}()
	if err != nil {
		return c, fmt.Errorf("pgbench %s: %w: %s", strings.Join(args[:len(args)-1], " "), err, lastLines(out, 3))
	}
	if c.tps, c.avgMs, err = parsePgbench(string(out)); err != nil {
		return c, err
	}
	lat, err := readPgbenchLogs(logs)
	if err != nil {
		return c, err
	}
	c.p50Ms, c.p99Ms = percentile(lat, 0.50), percentile(lat, 0.99)
	return c, nil
}

var (
	pgbenchTPS = regexp.MustCompile(`(?m)^tps = ([\d.]+)`)
	pgbenchAvg = regexp.MustCompile(`(?m)^latency average = ([\d.]+) ms`)
)

// parsePgbench reads tps and the average latency (ms) from pgbench's report.
func parsePgbench(out string) (tps, avgMs float64, err error) {
	m := pgbenchTPS.FindStringSubmatch(out)
	if m == nil {
		return 0, 0, fmt.Errorf("no tps in pgbench's output")
	}
	tps, _ = strconv.ParseFloat(m[1], 64)
	if m := pgbenchAvg.FindStringSubmatch(out); m != nil {
		avgMs, _ = strconv.ParseFloat(m[1], 64)
	}
	return tps, avgMs, nil
}

// readPgbenchLogs reads the latencies (ms) from pgbench -l logs, whose lines
// are "client_id transaction_no time_us script_no epoch epoch_us …". Failed
// and skipped transactions, which have a word in place of the time, are left
// out.
func readPgbenchLogs(paths []string) ([]float64, error) {
	var lat []float64
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		s := bufio.NewScanner(f)
		for s.Scan() {
			fields := strings.Fields(s.Text())
			if len(fields) < 3 {
				continue
			}
			if us, err := strconv.ParseFloat(fields[2], 64); err == nil {
				lat = append(lat, us/1000)
			}
		}
		err = s.Err()
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return lat, nil
}

// percentile is the q-quantile (0 < q ≤ 1) of values by the nearest-rank
// method; 0 for no values. It sorts values.
func percentile(values []float64, q float64) float64 {
	if len(values) == 0 {
		return 0
	}
	slices.Sort(values)
	i := int(math.Ceil(q*float64(len(values)))) - 1
	return values[min(max(i, 0), len(values)-1)]
}

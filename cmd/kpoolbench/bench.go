package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// bench is one run: its settings, what it started and what it measured.
type bench struct {
	cfg      config
	out      string // the results: report, TSV, wrk outputs, profiles, server logs
	work     string // temporary: the kpool binary, the SQLite database, the Lua scripts
	bin      string
	postLua  string
	putLua   string
	adminURL string
	kpoolDB  string // database names, "" when not created
	benchDB  string
	servers  []*server
	cleanups []func() // undone on exit, last first (none with -keep)

	results  []result
	ceilings []ceiling
	facts    []string // set-up figures for the report: preload rates, load times
	warnings []string
	memStart map[string]memory
	memEnd   map[string]memory
	profiles []string

	fleet     []*fleetRun // the fleet mode's runs
	fleetNote string      // why runs the flags asked for were not run
}

// run is the whole benchmark: each mode -mode names. Whatever it started it
// stops, and the databases it made it drops, on every way out (unless
// -keep).
func run(ctx context.Context, cfg config) error {
	b := &bench{cfg: cfg, memStart: map[string]memory{}, memEnd: map[string]memory{}}
	defer b.cleanUp()
	if cfg.keep {
		defer b.printKeep()
	}
	if cfg.modes["load"] {
		if err := checkTools(ctx, !cfg.skip["pgbench"]); err != nil {
			return err
		}
	}
	if err := b.makeDirs(); err != nil {
		return err
	}
	if b.bin = cfg.kpool; b.bin == "" {
		progress("building kpool")
		var err error
		if b.bin, err = buildKpool(ctx, b.work); err != nil {
			return err
		}
	}
	if cfg.modes["load"] {
		if err := b.runLoad(ctx); err != nil {
			return err
		}
	}
	if cfg.modes["fleet"] {
		if err := b.runFleet(ctx); err != nil {
			return err
		}
	}
	return b.report(ctx)
}

// runLoad is the load mode: servers, objects, ceilings, workloads.
func (b *bench) runLoad(ctx context.Context) error {
	if err := b.createDatabases(ctx); err != nil {
		return err
	}
	if err := b.startServers(ctx); err != nil {
		return err
	}
	for _, s := range b.servers {
		if err := b.setUp(ctx, s); err != nil {
			return fmt.Errorf("setting up %s: %w", s.store, err)
		}
	}
	if !b.cfg.skip["pgbench"] {
		if err := b.measureCeilings(ctx); err != nil {
			return err
		}
	}
	if err := b.runWorkloads(ctx); err != nil {
		return err
	}
	for _, s := range b.servers {
		b.memEnd[s.store], _ = readMemory(s.pid())
	}
	return nil
}

// setUp creates the objects the workloads need on s: clusters through the
// API, the preloads, the 1M-pool cluster and the deep cursors.
func (b *bench) setUp(ctx context.Context, s *server) error {
	cfg := b.cfg
	c := newClient(s.url, 2*cfg.workers)
	defer c.http.CloseIdleConnections()
	get, err := c.createCluster(ctx, "get")
	if err != nil {
		return err
	}
	if s.getPool, err = c.createPool(ctx, get, "workers"); err != nil {
		return err
	}
	if !cfg.skip["create"] {
		for _, n := range cfg.conns {
			if s.fresh[n], err = c.createCluster(ctx, fmt.Sprintf("fresh%d", n)); err != nil {
				return err
			}
		}
	}
	if !cfg.skip["create-big"] {
		if s.big, err = b.preloaded(ctx, c, s, "big", cfg.big); err != nil {
			return err
		}
	}
	if cfg.list > 0 && !(cfg.skip["list-first"] && cfg.skip["list-offset"] && cfg.skip["list-keyset"]) {
		if s.list, err = b.preloaded(ctx, c, s, "list", cfg.list); err != nil {
			return err
		}
		if pos := cfg.listPos(); pos > 0 && !cfg.skip["list-keyset"] {
			start := time.Now()
			if s.listDeep, err = c.followNext(ctx, s.list, pos/pageSize); err != nil {
				return err
			}
			progress("%s: followed next %d times to position %d in %.1fs", s.store, pos/pageSize, pos, time.Since(start).Seconds())
			if err := b.checkCursor(ctx, c, s.list, s.listDeep, pos); err != nil {
				return err
			}
		}
	}
	if s.store == "postgres" && cfg.million > 0 && !(cfg.skip["1m-first"] && cfg.skip["1m-keyset-near"] && cfg.skip["1m-keyset-far"] && cfg.skip["1m-offset"]) {
		return b.loadMillion(ctx, c, s)
	}
	return nil
}

// preloaded creates cluster name and n pools in it through the API, and
// notes the rate.
func (b *bench) preloaded(ctx context.Context, c *client, s *server, name string, n int) (string, error) {
	id, err := c.createCluster(ctx, name)
	if err != nil || n == 0 {
		return id, err
	}
	progress("%s: preloading %d pools into cluster %s with %d workers", s.store, n, name, b.cfg.workers)
	rate, err := preload(ctx, c, id, name, n, b.cfg.workers)
	if err != nil {
		return "", err
	}
	b.facts = append(b.facts, fmt.Sprintf("preload of cluster %s on %s through the API: %d pools at **%.0f pools/s** (%d workers)", name, s.store, n, rate, b.cfg.workers))
	progress("%s: preloaded %d pools into %s at %.0f pools/s", s.store, n, name, rate)
	return id, nil
}

// loadMillion makes the cluster of workload e: one pool through the API,
// cloned -million-1 times in SQL (clonePools), then reads the cursors of
// its deep positions from the database and checks them against kpool's.
func (b *bench) loadMillion(ctx context.Context, c *client, s *server) error {
	n := b.cfg.million
	var err error
	if s.million, err = c.createCluster(ctx, "million"); err != nil {
		return err
	}
	width := max(7, len(fmt.Sprint(n)))
	template, err := c.createPool(ctx, s.million, fmt.Sprintf("m-%0*d", width, 1))
	if err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, databaseURL(b.adminURL, b.kpoolDB))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	progress("postgres: bulk-loading %d pools into cluster million by SQL", n)
	start := time.Now()
	stmt, err := clonePools(ctx, conn, template, n)
	if err != nil {
		return err
	}
	took := time.Since(start)
	record := fmt.Sprintf("-- Run once per batch: $1 = the template pool (%s), $2..$3 = the batch's numbers\n-- (2..%d in steps of %d), $4 (if present) = 'nodepool.created'.\n%s;\n", template, n, cloneBatch, stmt)
	if err := os.WriteFile(filepath.Join(b.out, "bulk-load.sql"), []byte(record), 0o644); err != nil {
		return err
	}
	b.facts = append(b.facts, fmt.Sprintf("SQL bulk load of cluster million on postgres: %d pools in %.1fs (clones of one API-made pool in batches of %d, VACUUM ANALYZE included; the statement is in bulk-load.sql)", n, took.Seconds(), cloneBatch))
	progress("postgres: bulk load took %.1fs", took.Seconds())

	if total, err := c.poolCount(ctx, s.million); err != nil {
		return err
	} else if total != n {
		b.warn(fmt.Sprintf("cluster million lists a total of %d pools, not %d: the bulk load went behind something kpool keeps", total, n))
	}
	near, far := b.cfg.millionPos()
	for i, pos := range []int{near, far} {
		if pos == 0 {
			continue
		}
		if s.millionCur[i], err = cursorAt(ctx, conn, s.million, pos); err != nil {
			return err
		}
		if err := b.checkCursor(ctx, c, s.million, s.millionCur[i], pos); err != nil {
			return err
		}
	}
	if n > pageSize {
		mine, err := cursorAt(ctx, conn, s.million, pageSize)
		if err != nil {
			return err
		}
		var first page
		if err := c.do(ctx, "GET", listPath(s.million, pageSize, "", 0), nil, &first); err != nil {
			return err
		}
		if mine != first.Next {
			b.warn(fmt.Sprintf("the cursor made from the database for position %d (%s) is not the first page's next (%s): the 1M keyset pages may not start where their labels say", pageSize, mine, first.Next))
		} else {
			b.facts = append(b.facts, fmt.Sprintf("the keyset cursors of cluster million come from the database and kpool.EncodeCursor; the one for position %d equals the first page's next", pageSize))
		}
	}
	return nil
}

// listPos is the position the deep pages of cluster list start after:
// ≈9,000 of 10,000, or 90% of a smaller -list.
func (c config) listPos() int { return deepPosition(c.list, 9000, 0.9, pageSize) }

// millionPos are the positions the keyset pages of cluster million start
// after: ≈9,000 and ≈990,000 of 1,000,000, or 0.9% and 99% of a smaller
// -million.
func (c config) millionPos() (near, far int) {
	return deepPosition(c.million, 9000, 0.009, 1), deepPosition(c.million, 990000, 0.99, 1)
}

// checkCursor warns if the page after cursor does not start where the page
// at offset pos does, which would make a keyset row's label wrong.
func (b *bench) checkCursor(ctx context.Context, c *client, cluster, cursor string, pos int) error {
	ok, err := c.keysetMatchesOffset(ctx, cluster, cursor, pos)
	if err == nil && !ok {
		b.warn(fmt.Sprintf("the keyset page after position %d of cluster %s does not start with the pool at offset %d", pos, cluster, pos))
	}
	return err
}

// deepPosition is the list position a deep page starts after: fixed, or
// frac of n when n is too small for that, rounded down to a multiple of
// step (a page size when the position is reached by following pages), and
// at least step. 0 when n has no room for a page after step.
func deepPosition(n, fixed int, frac float64, step int) int {
	if n <= step {
		return 0
	}
	p := min(fixed, int(frac*float64(n)))
	p -= p % step
	return max(p, step)
}

// measureCeilings runs pgbench's INSERT and SELECT at each -conns value in
// the pgbench database.
func (b *bench) measureCeilings(ctx context.Context) error {
	dir := filepath.Join(b.out, "pgbench")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	dbURL := databaseURL(b.adminURL, b.benchDB)
	if err := preparePgbench(ctx, dbURL, dir); err != nil {
		return err
	}
	for _, statement := range []string{"insert", "select"} {
		for _, n := range b.cfg.conns {
			idle, err := b.waitIdle(ctx)
			if err != nil {
				return err
			}
			d := b.cfg.duration
			if b.cfg.quick {
				d = time.Second
			}
			c, err := runPgbench(ctx, dbURL, dir, statement, n, d)
			if err != nil {
				return err
			}
			c.idle = idle
			b.ceilings = append(b.ceilings, c)
			progress("pgbench %s c%d: %.0f tps, avg %.2f ms, p99 %.2f ms (idle before %.0f%%)", statement, n, c.tps, c.avgMs, c.p99Ms, idle)
		}
	}
	return nil
}

func (b *bench) warn(msg string) {
	progress("WARNING: %s", msg)
	b.warnings = append(b.warnings, msg)
}

// printKeep says, with -keep, what was left running and how to remove it.
func (b *bench) printKeep() {
	var w strings.Builder
	fmt.Fprintln(&w, "\n-keep: left running and in place:")
	var pids []string
	for _, s := range b.servers {
		fmt.Fprintf(&w, "  kpool serve (%s): %s  pprof %s  pid %d  log %s\n", s.store, s.url, s.pprof, s.pid(), s.logPath)
		fmt.Fprintf(&w, "    curl -H 'X-User-Email: %s' %s/api/v1/clusters\n", user, s.url)
		pids = append(pids, fmt.Sprint(s.pid()))
	}
	for _, db := range []string{b.kpoolDB, b.benchDB} {
		if db != "" {
			fmt.Fprintf(&w, "  database %s\n", databaseURL(b.adminURL, db))
		}
	}
	fmt.Fprintf(&w, "  work directory %s\n", b.work)
	fmt.Fprintln(&w, "to remove them:")
	if len(pids) > 0 {
		fmt.Fprintf(&w, "  kill %s\n", strings.Join(pids, " "))
	}
	for _, db := range []string{b.kpoolDB, b.benchDB} {
		if db != "" {
			fmt.Fprintf(&w, "  psql '%s' -c 'DROP DATABASE %s WITH (FORCE)'\n", b.adminURL, db)
		}
	}
	fmt.Fprintf(&w, "  rm -r %s\n", b.work)
	fmt.Fprint(os.Stderr, w.String())
}

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kpool/kpool"
)

// defaultAdminURLs are tried in order when -pg is not given: trust auth as
// postgres, or as root where that is the role (as .ci/run does), over TCP on
// 127.0.0.1 and then over the Unix socket (inside `unshare -n`, where the
// namespace's loopback has no PostgreSQL, only the socket reaches it).
var defaultAdminURLs = []string{
	"postgres://postgres@127.0.0.1:5432/test?sslmode=disable",
	"postgres://root@127.0.0.1:5432/test?sslmode=disable",
	"postgres://postgres@/test?host=/var/run/postgresql&port=5432&sslmode=disable",
	"postgres://root@/test?host=/var/run/postgresql&port=5432&sslmode=disable",
}

// findAdmin returns the first admin database URL that accepts a
// connection. When none does, it starts the machine's PostgreSQL if
// pg_isready says it is down, and tries again.
func findAdmin(ctx context.Context, override string) (string, error) {
	urls := defaultAdminURLs
	if override != "" {
		urls = []string{override}
	}
	for _, u := range urls {
		if err := checkLoopback(u); err != nil {
			return "", err
		}
	}
	u, err := firstAnswering(ctx, urls)
	if err == nil {
		return u, nil
	}
	if err := ensurePostgres(ctx, urls[0]); err != nil {
		return "", err
	}
	return firstAnswering(ctx, urls)
}

// firstAnswering is the first of urls PostgreSQL accepts a connection on.
func firstAnswering(ctx context.Context, urls []string) (string, error) {
	var errs []error
	for _, u := range urls {
		conn, err := pgx.Connect(ctx, u)
		if err == nil {
			conn.Close(ctx)
			return u, nil
		}
		errs = append(errs, err)
	}
	return "", fmt.Errorf("cannot connect to PostgreSQL (use -pg to name the admin database): %w", errors.Join(errs...))
}

// checkLoopback refuses a database URL whose host is not this machine's
// loopback or a Unix socket (host=/path): the benchmark never sends traffic
// anywhere else.
func checkLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("-pg %q: %w", raw, err)
	}
	host := pgHost(u)
	if ip := net.ParseIP(host); host == "localhost" || strings.HasPrefix(host, "/") || (ip != nil && ip.IsLoopback()) {
		return nil
	}
	return fmt.Errorf("-pg %q: the host must be 127.0.0.1, ::1, localhost or a Unix socket's directory", u.Redacted())
}

// pgHost is where a PostgreSQL URL connects: its host, or its host
// parameter (a Unix socket's directory) when it has none.
func pgHost(u *url.URL) string {
	if h := u.Hostname(); h != "" {
		return h
	}
	return u.Query().Get("host")
}

// ensurePostgres starts the local cluster with pg_ctlcluster, as .ci/run
// does, when pg_isready reports the server at adminURL down. Without
// pg_isready it leaves the connection attempt to tell.
func ensurePostgres(ctx context.Context, adminURL string) error {
	if _, err := exec.LookPath("pg_isready"); err != nil {
		return nil
	}
	u, _ := url.Parse(adminURL)
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	host := pgHost(u)
	ready := func() bool {
		return exec.CommandContext(ctx, "pg_isready", "-q", "-h", host, "-p", port).Run() == nil
	}
	if ready() {
		return nil
	}
	versions, err := os.ReadDir("/etc/postgresql")
	if err != nil || len(versions) == 0 {
		return fmt.Errorf("PostgreSQL at %s:%s is down and there is no cluster in /etc/postgresql to start", host, port)
	}
	for _, v := range versions {
		progress("PostgreSQL is down; starting cluster %s/main", v.Name())
		out, err := exec.CommandContext(ctx, "pg_ctlcluster", "--skip-systemctl-redirect", v.Name(), "main", "start").CombinedOutput()
		if err != nil {
			progress("pg_ctlcluster %s main start: %v: %s", v.Name(), err, strings.TrimSpace(string(out)))
		}
	}
	for range 60 {
		if ready() {
			return nil
		}
		if err := sleep(ctx, 500*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("PostgreSQL at %s:%s did not come up within 30s", host, port)
}

// databaseURL is the admin URL with its database replaced by name.
func databaseURL(adminURL, name string) string {
	u, _ := url.Parse(adminURL)
	u.Path = "/" + name
	return u.String()
}

// createDatabase creates database name, connecting to the admin database.
func createDatabase(ctx context.Context, adminURL, name string) error {
	return execAdmin(ctx, adminURL, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
}

// dropDatabase drops database name, closing its sessions (PostgreSQL 13 or
// later). It connects afresh, so that it works after a cancelled query.
func dropDatabase(ctx context.Context, adminURL, name string) error {
	return execAdmin(ctx, adminURL, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
}

func execAdmin(ctx context.Context, adminURL, sql string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

// column is a column of a table, from information_schema.
type column struct {
	name     string
	dataType string
	optional bool // nullable, defaulted, generated or an identity: an INSERT may leave it out
	computed bool // generated always or an identity: an INSERT must leave it out
}

// tableColumns lists table's columns in the current schema in their order;
// none if the table does not exist.
func tableColumns(ctx context.Context, conn *pgx.Conn, table string) ([]column, error) {
	rows, err := conn.Query(ctx, `
		SELECT column_name::text, data_type::text,
		       is_nullable = 'YES' OR column_default IS NOT NULL OR is_generated = 'ALWAYS' OR is_identity = 'YES',
		       is_generated = 'ALWAYS' OR is_identity = 'YES'
		FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1
		ORDER BY ordinal_position`, table)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (column, error) {
		var c column
		err := r.Scan(&c.name, &c.dataType, &c.optional, &c.computed)
		return c, err
	})
}

// cloneBatch is the number of pools one INSERT of clonePools writes.
const cloneBatch = 100000

// clonePools makes pools 2..n of the template pool's cluster by copying the
// template row (a pool the API created, so spec, status and owner are what
// kpool writes) in SQL, cloneBatch rows per statement:
//
//	INSERT INTO nodepools (…) SELECT … FROM nodepools t, generate_series(lo, hi) g WHERE t.id = $template
//
// The column list is read from information_schema at run time, so columns
// added by later migrations are copied too. The clones differ from the
// template in id (gen_random_uuid()), name and provider_name ("m-" and g,
// zero-padded), created_at and updated_at (the template's + g ms, so they
// list in g's order) and resource_version (random). If the events outbox
// exists and its columns are the known ones, each clone gets its
// nodepool.created event in the same statement, as the API would write it.
// The pools go in behind kpool's back: its caches, if any, do not see them.
// It returns the statement it ran, for the record.
func clonePools(ctx context.Context, conn *pgx.Conn, templateID string, n int) (string, error) {
	cols, err := tableColumns(ctx, conn, "nodepools")
	if err != nil {
		return "", err
	}
	if len(cols) == 0 {
		return "", fmt.Errorf("no table nodepools in the current schema")
	}
	width := max(7, len(strconv.Itoa(n)))
	name := fmt.Sprintf("'m-' || lpad(g::text, %d, '0')", width)
	stamp := "t.created_at + g * interval '1 millisecond'"
	var names, values []string
	for _, c := range cols {
		if c.computed {
			continue
		}
		v := "t." + pgx.Identifier{c.name}.Sanitize()
		switch c.name {
		case "id":
			v = "gen_random_uuid()"
			if c.dataType != "uuid" {
				v = "gen_random_uuid()::text"
			}
		case "name", "provider_name":
			v = name
		case "created_at", "updated_at":
			v = stamp
		case "resource_version":
			v = "substr(md5(random()::text), 1, 16)"
		}
		names = append(names, pgx.Identifier{c.name}.Sanitize())
		values = append(values, v)
	}
	insert := "INSERT INTO nodepools (" + strings.Join(names, ", ") + ") SELECT " + strings.Join(values, ", ") +
		" FROM nodepools t, generate_series($2::bigint, $3::bigint) g WHERE t.id = $1"
	events, why, err := eventsInsert(ctx, conn, cols)
	if err != nil {
		return "", err
	}
	stmt := insert
	if events != "" {
		stmt = "WITH ins AS (" + insert + " RETURNING id, cluster_id, created_by, created_at) " + events
	} else {
		progress("bulk load: no outbox events for the clones (%s)", why)
	}
	for lo := 2; lo <= n; lo += cloneBatch {
		hi := min(n, lo+cloneBatch-1)
		args := []any{templateID, lo, hi}
		if events != "" {
			args = append(args, kpool.EventNodePoolCreated)
		}
		start := time.Now()
		if _, err := conn.Exec(ctx, stmt, args...); err != nil {
			return stmt, fmt.Errorf("bulk load of pools %d..%d: %w", lo, hi, err)
		}
		progress("bulk load: pools %d..%d of %d in %.1fs", lo, hi, n, time.Since(start).Seconds())
	}
	for _, table := range []string{"nodepools", "events"} {
		if table == "events" && events == "" {
			continue
		}
		start := time.Now()
		if _, err := conn.Exec(ctx, "VACUUM ANALYZE "+table); err != nil {
			return stmt, err
		}
		progress("bulk load: VACUUM ANALYZE %s in %.1fs", table, time.Since(start).Seconds())
	}
	return stmt, nil
}

// eventsInsert is the INSERT of one nodepool.created event per row of the
// CTE ins (and $4 the event type), or "" and why not: no events table, or a
// required column it does not know how to fill.
func eventsInsert(ctx context.Context, conn *pgx.Conn, pools []column) (string, string, error) {
	cols, err := tableColumns(ctx, conn, "events")
	if err != nil || len(cols) == 0 {
		return "", "no events table", err
	}
	for _, need := range []string{"id", "cluster_id", "created_by", "created_at"} {
		if !hasColumn(pools, need) {
			return "", "nodepools has no column " + need, nil
		}
	}
	fill := map[string]string{
		"type":       "$4::text",
		"object_id":  "ins.id",
		"cluster_id": "ins.cluster_id",
		"generation": "1",
		"actor":      "ins.created_by",
		"created_at": "ins.created_at",
	}
	var names, values []string
	for _, c := range cols {
		v, ok := fill[c.name]
		switch {
		case c.computed:
			continue
		case !ok && c.optional:
			continue
		case !ok:
			return "", "events has a required column " + c.name + " this tool does not know", nil
		}
		names = append(names, pgx.Identifier{c.name}.Sanitize())
		values = append(values, v)
	}
	return "INSERT INTO events (" + strings.Join(names, ", ") + ") SELECT " + strings.Join(values, ", ") + " FROM ins", "", nil
}

func hasColumn(cols []column, name string) bool {
	for _, c := range cols {
		if c.name == name {
			return true
		}
	}
	return false
}

// cursorAt is the keyset cursor of the pool at position pos (1-based) of the
// cluster's list order (created_at, id), encoded with kpool's own encoder:
// a list with after=cursorAt(pos) starts at position pos+1.
func cursorAt(ctx context.Context, conn *pgx.Conn, clusterID string, pos int) (string, error) {
	var c kpool.Cursor
	err := conn.QueryRow(ctx, `SELECT created_at, id::text FROM nodepools WHERE cluster_id = $1
		ORDER BY created_at, id OFFSET $2 LIMIT 1`, clusterID, pos-1).Scan(&c.CreatedAt, &c.ID)
	if err != nil {
		return "", fmt.Errorf("position %d of cluster %s: %w", pos, clusterID, err)
	}
	return kpool.EncodeCursor(c), nil
}

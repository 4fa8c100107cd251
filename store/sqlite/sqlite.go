// Package sqlite opens kpool's store in an SQLite file (pure Go, no cgo):
// the default for a single kpool process.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/pressly/goose/v3"
	sqlite3 "modernc.org/sqlite"
	sqlite3lib "modernc.org/sqlite/lib"

	"github.com/kpool/kpool/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// timeLayout is fixed-width UTC, so that text order is time order.
const timeLayout = "2006-01-02T15:04:05.000000Z"

// Dialect is SQLite's: ? placeholders, whole-database write locks, text times.
var Dialect = store.Dialect{
	Time:      func(t time.Time) any { return t.UTC().Format(timeLayout) },
	Violation: violation,
	// One writer, and a commit's sync is most of a small write: concurrent
	// writes share transactions.
	GroupCommit: true,
	Retryable: func(err error) bool {
		var e *sqlite3.Error
		return errors.As(err, &e) && e.Code()&0xff == sqlite3lib.SQLITE_BUSY
	},
	Unavailable: unavailable,
	LabelValue:  store.SQLiteLabelValue,
}

// unavailable reports whether err means the database cannot be used for now:
// still locked once busy_timeout (and the store's retries) ran out, or its
// handles closed (the process is shutting down). kpool then answers 503.
func unavailable(err error) bool {
	var e *sqlite3.Error
	if errors.As(err, &e) {
		c := e.Code() & 0xff
		return c == sqlite3lib.SQLITE_BUSY || c == sqlite3lib.SQLITE_LOCKED
	}
	// database/sql's "sql: database is closed" is not exported.
	return errors.Is(err, sql.ErrConnDone) || strings.Contains(err.Error(), "sql: database is closed")
}

// indexes names the unique indexes by the columns SQLite's error lists.
var indexes = map[string]string{
	"clusters.id":                                   "clusters_pkey",
	"clusters.created_by, clusters.name":            "clusters_owner_name",
	"clusters.cloud_id":                             "clusters_cloud_id",
	"nodepools.id":                                  "nodepools_pkey",
	"nodepools.cluster_id, nodepools.name":          "nodepools_cluster_name",
	"nodepools.cluster_id, nodepools.provider_name": "nodepools_cluster_provider_name",
	"logical_pools.id":                              "logical_pools_pkey",
	"logical_pools.cluster_id, logical_pools.name":  "logical_pools_cluster_name",
}

// violation names the constraint an SQLite error reports: a unique index by
// its columns, a foreign key (SQLite does not say which), or the message of
// one of the schema's RAISE(ABORT, 'kpool_…') triggers.
func violation(err error) (string, bool) {
	var e *sqlite3.Error
	if !errors.As(err, &e) || e.Code()&0xff != sqlite3lib.SQLITE_CONSTRAINT {
		return "", false
	}
	msg := e.Error()
	switch {
	case strings.Contains(msg, "UNIQUE constraint failed: "):
		cols := msg[strings.Index(msg, "UNIQUE constraint failed: ")+len("UNIQUE constraint failed: "):]
		if i := strings.Index(cols, " ("); i >= 0 {
			cols = cols[:i]
		}
		if name, ok := indexes[cols]; ok {
			return name, true
		}
		return cols, true
	case strings.Contains(msg, "FOREIGN KEY constraint failed"):
		return store.ViolationForeignKey, true
	case strings.Contains(msg, "kpool_"):
		name := msg[strings.Index(msg, "kpool_"):]
		if i := strings.IndexAny(name, " :("); i >= 0 {
			name = name[:i]
		}
		return name, true
	}
	return "", false
}

// Open opens (creating if needed) the SQLite database at path, migrates its
// schema and returns the store.
func Open(ctx context.Context, path string) (*store.DB, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
	}
	// Writes wait for each other for up to 10s rather than failing, commit
	// with a full sync (an acknowledged write survives a crash), and take
	// the write lock when they begin, so read-modify-write cannot interleave.
	params := url.Values{}
	for _, p := range []string{"busy_timeout(10000)", "journal_mode(WAL)", "foreign_keys(1)", "synchronous(FULL)"} {
		params.Add("_pragma", p)
	}
	params.Set("_txlock", "immediate")
	dsn := "file:" + path + "?" + params.Encode()
	write, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	write.SetMaxOpenConns(1)
	if err := store.Migrate(ctx, write, goose.DialectSQLite3, sub(migrations), nil); err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlite %s: %w", path, err)
	}
	params.Add("_pragma", "query_only(1)")
	read, err := sql.Open("sqlite", "file:"+path+"?"+params.Encode())
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	read.SetMaxOpenConns(max(4, runtime.GOMAXPROCS(0)))
	return store.New(&store.SQLDatabase{ReadPool: read, WritePool: write}, Dialect), nil
}

func sub(f embed.FS) fs.FS {
	s, err := fs.Sub(f, "migrations")
	if err != nil {
		panic(err)
	}
	return s
}

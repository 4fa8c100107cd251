// Package store implements kpool.Store on SQL. The SQL is shared; store/sqlite
// and store/postgres supply the Database (connections and transactions), the
// schema migrations and a Dialect for what differs (placeholders, row locks,
// time encoding, constraint errors).
//
// Costs do not grow with the data: a pool is read by its key, a create checks
// names through unique indexes rather than by reading the cluster's pools, a
// list page is an index range (keyset) and its total a sum over per-cluster
// counters that triggers keep (see the migrations).
package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kpool/kpool"
)

// Dialect is what differs between the SQL databases kpool runs on.
type Dialect struct {
	// Numbered placeholders ($1, $2…) instead of ?.
	Numbered bool
	// LockSuffix locks the rows a SELECT returns (" FOR UPDATE"), or "" where
	// the whole database is locked by a write transaction (SQLite).
	LockSuffix string
	// Time encodes a time for a query parameter.
	Time func(time.Time) any
	// Violation names the constraint err broke, as the migrations name it
	// (an index such as "nodepools_cluster_name", "foreign key", or a
	// trigger's "kpool_cluster_deleting"), or reports false.
	Violation func(err error) (string, bool)
	// Retryable reports whether a transaction failed only because it ran
	// against another (deadlock, serialization); Write then runs it again.
	Retryable func(error) bool
	// ExpectGeneration, when set, is the statement that hands a pool
	// insert's trigger the generation its cluster must be at (as a text
	// argument); otherwise the store reads the cluster in the transaction
	// before the insert.
	ExpectGeneration string
	// GroupCommit runs concurrent writes in one transaction, each in a
	// savepoint (see group): for a database with a single writer.
	GroupCommit bool
	// GroupInserts, when above 0, runs concurrent Inserts in shared
	// transactions, this many at once (see group).
	GroupInserts int
	// OneRow, when set, wraps an UPDATE so that the database itself fails
	// the transaction (constraint "kpool_stale") unless exactly one row
	// changed: needed where writes are pipelined with the commit, as the
	// store sees a row count only after the commit has been sent.
	OneRow func(update string) string
	// Unavailable reports whether err means the database cannot be reached
	// or used for now (refused, dropped, shut down, closed, busy beyond its
	// timeout): the store then returns a kpool UNAVAILABLE error, which the
	// API answers 503 with Retry-After rather than 500.
	Unavailable func(error) bool
	// NowPlus, when set, is the SQL of the database's own time plus a
	// number of seconds given as a query parameter (?): leases then
	// compare times of one clock, however far apart the clocks of the
	// hosts sharing the database are. Where every process shares one host
	// (SQLite), leases are timed on its clock, time.Now.
	NowPlus string
	// LabelValue is the SQL of the value of the label whose key is the
	// next query parameter in the labels object at path of the JSON column
	// doc, NULL when there is no such label (SQLiteLabelValue,
	// PostgresLabelValue): label selectors on lists.
	LabelValue func(doc string, path ...string) string
}

// Constraint names the store maps to kpool errors.
const (
	violationClusterID       = "clusters_pkey"
	violationClusterName     = "clusters_owner_name"
	violationCloudID         = "clusters_cloud_id"
	violationPoolID          = "nodepools_pkey"
	violationPoolName        = "nodepools_cluster_name"
	violationProviderName    = "nodepools_cluster_provider_name"
	violationClusterDeleting = "kpool_cluster_deleting"
	violationClusterChanged  = "kpool_cluster_changed"
	violationStale           = "kpool_stale"
	// ViolationForeignKey is what a dialect that cannot tell which foreign
	// key was broken names it.
	ViolationForeignKey = "foreign key"
)

// DB is a kpool.Store on a SQL database.
type DB struct {
	db Database
	d  Dialect

	mu   sync.Mutex
	subs map[chan struct{}]bool
	// Listen, when set, delivers other processes' commits: it calls wake
	// for each until ctx ends (PostgreSQL LISTEN). It is started with the
	// first subscriber.
	Listen func(ctx context.Context, wake func())
	// Notify, when set, tells other processes that events committed. It is
	// called after the commit and must not block: a notification is only a
	// wake-up (readers also poll), so it is sent outside the transaction,
	// where it costs no commit its throughput.
	Notify    func()
	listening bool
	stop      context.CancelFunc

	rebound sync.Map // query -> query with $n placeholders

	writes  group // every write, with Dialect.GroupCommit
	inserts group // Inserts, with Dialect.GroupInserts
}

// New returns a Store on db with dialect d. The schema must already be
// migrated.
func New(db Database, d Dialect) *DB {
	return &DB{db: db, d: d, subs: map[chan struct{}]bool{},
		writes:  group{max: 1, savepoints: true},
		inserts: group{max: d.GroupInserts}}
}

// Close closes the database.
func (db *DB) Close() error {
	db.mu.Lock()
	if db.stop != nil {
		db.stop()
	}
	db.mu.Unlock()
	return db.db.Close()
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.db.Ping(ctx); err != nil {
		return db.fail(ctx, fmt.Errorf("database unreachable: %w", err))
	}
	return nil
}

// fail turns a database error that means "unreachable for now" into a kpool
// UNAVAILABLE error (which keeps err as its cause). kpool errors, and any
// error once ctx has ended (the caller left), are returned as they are.
func (db *DB) fail(ctx context.Context, err error) error {
	if err == nil || db.d.Unavailable == nil || ctx.Err() != nil {
		return err
	}
	var ke *kpool.Error
	if errors.As(err, &ke) || !db.d.Unavailable(err) {
		return err
	}
	return kpool.Unavailable("Database unavailable", err)
}

// q rewrites ? placeholders for the dialect. The store's queries are a small
// fixed set, so each is rewritten once.
func (db *DB) q(query string) string {
	if !db.d.Numbered {
		return query
	}
	if q, ok := db.rebound.Load(query); ok {
		return q.(string)
	}
	q := rebind(query, true)
	db.rebound.Store(query, q)
	return q
}

func rebind(query string, numbered bool) string {
	if !numbered {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// read is one query for Database.Read or Conn.Read, rebound for the dialect.
func (db *DB) read(query string, args []any, row func(Scanner) error) Read {
	return Read{SQL: db.q(query), Args: args, Row: row}
}

// readOnce is read for a query whose text varies with the request (a label
// selector's terms): rebound without being kept, so that requests cannot
// grow the cache of rebound queries without bound.
func (db *DB) readOnce(query string, args []any, row func(Scanner) error) Read {
	return Read{SQL: rebind(query, db.d.Numbered), Args: args, Row: row, Once: true}
}

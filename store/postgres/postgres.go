// Package postgres opens kpool's store in PostgreSQL (pgx): for production
// and for several kpool processes sharing one database.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/kpool/kpool/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Dialect is PostgreSQL's: $n placeholders and row locks.
var Dialect = store.Dialect{
	Numbered:   true,
	LockSuffix: " FOR UPDATE",
	Time:       func(t time.Time) any { return t.UTC() },
	Violation: func(err error) (string, bool) {
		var e *pgconn.PgError
		if !errors.As(err, &e) || e.ConstraintName == "" {
			return "", false
		}
		return e.ConstraintName, true
	},
	Retryable: func(err error) bool {
		var e *pgconn.PgError
		return errors.As(err, &e) && (e.Code == "40001" || e.Code == "40P01")
	},
	Unavailable: unavailable,
	LabelValue:  store.PostgresLabelValue,
	NowPlus:     "(now() + make_interval(secs => ?::float8))",
	// Creates share transactions, a few at once (see store's group): a
	// transaction's fixed cost is most of a create's. Fewer at once make
	// bigger groups; on 2 cores, 2 did best (16 clients: 1, 2, 4 groups
	// 3.7-4.5k, 3.5-4.3k, 2.7-3.3k creates/s; ungrouped 2.5k).
	GroupInserts: max(2, runtime.GOMAXPROCS(0)/2),
	// The pool insert's trigger compares the cluster's generation with this
	// transaction's setting (kpool_nodepool_cluster_live).
	ExpectGeneration: `SELECT set_config('kpool.cluster_generation', $1, true)`,
	// Writes are pipelined with the commit, so a stale UPDATE must fail in
	// the database (kpool_one_row, in the migrations) to stop the commit.
	OneRow: func(update string) string {
		return `WITH w AS (` + update + ` RETURNING 1) SELECT kpool_one_row(count(*)) FROM w`
	},
}

// unavailable reports whether err means PostgreSQL cannot be reached or used
// for now: a connection refused or dropped, the server shutting down or
// starting, out of connections, or the pool closed. kpool then answers 503.
func unavailable(err error) bool {
	var ce *pgconn.ConnectError
	var ne net.Error
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe):
		// Class 08 is "connection exception"; 57P01-03 are admin and crash
		// shutdown and "cannot connect now"; 53300 is too many connections.
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" || pe.Code == "53300"
	case errors.As(err, &ce), errors.As(err, &ne),
		errors.Is(err, pgconn.ErrConnClosed), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return true
	}
	// pgxpool's "closed pool" (puddle.ErrClosedPool) is not exported by pgx.
	return strings.Contains(err.Error(), "closed pool")
}

// channel is the LISTEN/NOTIFY channel of committed events.
const channel = "kpool_events"

// MaxConns is the connection pool's size unless the URL sets pool_max_conns:
// four per core of this process. More connections than the database can
// run at once only queue inside it; measured on 2 cores, 8 connections
// answered GETs at 64 clients with a p99 of 9-12 ms where 20 took 15-16 ms,
// at the same rate, and creates (which share transactions) no slower.
func MaxConns() int32 { return int32(max(8, 4*runtime.GOMAXPROCS(0))) }

// Open connects to the database at url (postgres://…), migrates its schema
// under an advisory lock and returns the store.
func Open(ctx context.Context, url string) (*store.DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if !strings.Contains(url, "pool_max_conns=") {
		cfg.MaxConns = MaxConns()
	}
	cfg.MaxConnIdleTime = 5 * time.Minute
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if err := p.Ping(ctx); err != nil {
		p.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if err := migrate(ctx, p); err != nil {
		p.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	db := newPool(p)
	st := store.New(db, Dialect)
	st.Notify = db.notify
	st.Listen = listen(cfg.ConnConfig, func(err error) { slog.Warn("postgres: listening for changes", "err", err) })
	return st, nil
}

// migrate brings the schema up to date. The lock is per schema, so that kpool
// deployments in different schemas of one database do not wait for each other.
func migrate(ctx context.Context, p *pgxpool.Pool) error {
	db := stdlib.OpenDBFromPool(p)
	defer db.Close()
	var schema string
	if err := db.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return err
	}
	h := fnv.New64a()
	h.Write([]byte("kpool migrations " + schema))
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(int64(h.Sum64()>>1)), lock.WithLockTimeout(1, 300))
	if err != nil {
		return err
	}
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	return store.Migrate(ctx, db, goose.DialectPostgres, sub, locker)
}

// listen delivers NOTIFYs from other processes until ctx ends, reconnecting
// with backoff when the connection drops. Readers also poll, so a
// notification lost while reconnecting delays work but loses none.
func listen(cfg *pgx.ConnConfig, log func(error)) func(ctx context.Context, wake func()) {
	return func(ctx context.Context, wake func()) {
		backoff := 100 * time.Millisecond
		for ctx.Err() == nil {
			err := listenOnce(ctx, cfg, wake)
			if ctx.Err() != nil {
				return
			}
			log(err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
		}
	}
}

func listenOnce(ctx context.Context, cfg *pgx.ConnConfig, wake func()) error {
	conn, err := pgx.ConnectConfig(ctx, cfg.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
		return err
	}
	wake() // anything committed while not listening
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		wake()
	}
}

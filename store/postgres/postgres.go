// Package postgres opens kpool's store in PostgreSQL (pgx): for production
// and for several kpool processes sharing one database.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Dialect is PostgreSQL's: $n placeholders and row locks.
var Dialect = store.Dialect{
	Numbered:   true,
	LockSuffix: " FOR UPDATE",
	Time:       func(t time.Time) any { return t.UTC() },
	UniqueViolation: func(err error) bool {
		var e *pgconn.PgError
		return errors.As(err, &e) && e.Code == "23505"
	},
	Retryable: func(err error) bool {
		var e *pgconn.PgError
		return errors.As(err, &e) && (e.Code == "40001" || e.Code == "40P01")
	},
	// Other kpool processes on the database learn of the commit.
	AfterEvent: func(ctx context.Context, tx *sql.Tx, _ *kpool.Event) error {
		_, err := tx.ExecContext(ctx, `SELECT pg_notify('`+channel+`', '')`)
		return err
	},
}

// channel is the LISTEN/NOTIFY channel of committed events.
const channel = "kpool_events"

// listen delivers NOTIFYs from other processes until ctx ends, reconnecting
// with backoff when the connection drops. Readers also poll, so a
// notification lost while reconnecting delays work but loses none.
func listen(url string, log func(error)) func(ctx context.Context, wake func()) {
	return func(ctx context.Context, wake func()) {
		backoff := 100 * time.Millisecond
		for ctx.Err() == nil {
			err := listenOnce(ctx, url, wake)
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

func listenOnce(ctx context.Context, url string, wake func()) error {
	conn, err := pgx.Connect(ctx, url)
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

// Open connects to the database at url (postgres://…), migrates its schema
// under an advisory lock and returns the store.
func Open(ctx context.Context, url string) (*store.DB, error) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(20)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	// The migration lock is per schema, so that kpool deployments in
	// different schemas of one database do not wait for each other.
	var schema string
	if err := db.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	h := fnv.New64a()
	h.Write([]byte("kpool migrations " + schema))
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(int64(h.Sum64()>>1)), lock.WithLockTimeout(1, 300))
	if err != nil {
		db.Close()
		return nil, err
	}
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		db.Close()
		return nil, err
	}
	if err := store.Migrate(ctx, db, goose.DialectPostgres, sub, locker); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	st := store.New(db, db, Dialect)
	st.Listen = listen(url, func(err error) { slog.Warn("postgres: listening for changes", "err", err) })
	return st, nil
}

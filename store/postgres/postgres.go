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
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
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
	UniqueViolation: func(err error) bool {
		var e *pgconn.PgError
		return errors.As(err, &e) && e.Code == "23505"
	},
	Retryable: func(err error) bool {
		var e *pgconn.PgError
		return errors.As(err, &e) && (e.Code == "40001" || e.Code == "40P01")
	},
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
	return store.New(db, db, Dialect), nil
}

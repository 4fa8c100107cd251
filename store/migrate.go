package store

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// Migrate brings the schema in db up to the newest migration in fsys. Each
// migration runs in its own transaction; with a session locker, concurrent
// kpool processes starting on one database migrate once.
func Migrate(ctx context.Context, db *sql.DB, dialect goose.Dialect, fsys fs.FS, locker lock.SessionLocker) error {
	opts := []goose.ProviderOption{goose.WithDisableGlobalRegistry(true)}
	if locker != nil {
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(dialect, db, fsys, opts...)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate schema: %w", err)
	}
	return nil
}

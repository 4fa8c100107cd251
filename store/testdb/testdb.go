// Package testdb opens the stores tests run on: SQLite in a temporary file,
// PostgreSQL in a schema of its own in the database KPOOL_TEST_POSTGRES names.
package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/store/postgres"
	"github.com/kpool/kpool/store/sqlite"
)

// Opener opens an empty store for a test (storetest.Opener's shape).
type Opener = func(testing.TB) kpool.Store

// SQLite opens an empty store in a file in the test's temporary directory.
func SQLite(t testing.TB) kpool.Store {
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "kpool.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// PostgresURL is the environment variable naming the test database.
const PostgresURL = "KPOOL_TEST_POSTGRES"

// Postgres opens an empty store in a schema of its own in the database
// KPOOL_TEST_POSTGRES names, dropped when the test ends, so that tests run in
// parallel without seeing each other's rows. Without the variable the test is
// skipped (CI sets it: see .ci/run).
func Postgres(t testing.TB) kpool.Store {
	s, err := postgres.Open(context.Background(), PostgresSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// PostgresSchema makes an empty schema of its own for the test in the
// database KPOOL_TEST_POSTGRES names, dropped when the test ends, and
// returns a URL that works in it. Without the variable the test is skipped.
func PostgresSchema(t testing.TB) string {
	base := os.Getenv(PostgresURL)
	if base == "" {
		t.Skip(PostgresURL + " is not set; the PostgreSQL suite runs in CI (.ci/run)")
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "kpool_test_" + hex.EncodeToString(b[:])
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("%s: %v", PostgresURL, err)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	t.Cleanup(func() {
		_, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	})
	return u.String()
}

// Stores lists the stores to run a test against: SQLite always, PostgreSQL
// when KPOOL_TEST_POSTGRES is set.
func Stores() map[string]Opener {
	m := map[string]Opener{"sqlite": SQLite}
	if os.Getenv(PostgresURL) != "" {
		m["postgres"] = Postgres
	}
	return m
}

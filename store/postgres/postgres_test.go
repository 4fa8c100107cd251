package postgres_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/store/postgres"
	"github.com/kpool/kpool/store/storetest"
)

// open gives each test its own schema in the database KPOOL_TEST_POSTGRES
// names, so tests run in parallel without seeing each other's rows.
func open(t testing.TB) kpool.Store {
	base := os.Getenv("KPOOL_TEST_POSTGRES")
	if base == "" {
		t.Skip("KPOOL_TEST_POSTGRES is not set; the PostgreSQL suite runs in CI (.ci/run)")
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "kpool_test_" + hex.EncodeToString(b[:])
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	s, err := postgres.Open(context.Background(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	})
	return s
}

func TestConformance(t *testing.T) { storetest.Run(t, open) }

func BenchmarkStore(b *testing.B) { storetest.Bench(b, open) }

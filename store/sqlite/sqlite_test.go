package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool/store/sqlite"
	"github.com/kpool/kpool/store/storetest"
	"github.com/kpool/kpool/store/testdb"
)

func TestConformance(t *testing.T) { storetest.Run(t, testdb.SQLite) }

func BenchmarkStore(b *testing.B) { storetest.Bench(b, testdb.SQLite) }

func TestReopenKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kpool.db")
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	c := storetest.NewCluster(t, service.New(s, storetest.Platforms), storetest.Alice, "prod")
	s.Close()
	s, err = sqlite.Open(context.Background(), path) // migrations are already applied
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Cluster(context.Background(), c.ID); err != nil {
		t.Fatalf("after reopen: %v", err)
	}
}

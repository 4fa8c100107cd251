package sqlite_test

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

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

// BenchmarkGet reads one pool through the service, as a GET does, and
// reports the process's CPU time per read (user and system, from
// getrusage), which a busy machine disturbs less than the wall time.
func BenchmarkGet(b *testing.B) {
	s := service.New(testdb.SQLite(b), storetest.Platforms)
	c := storetest.NewCluster(b, s, storetest.Alice, "prod")
	p := storetest.NewPool(b, s, c, "workers")
	ctx := storetest.Ctx(storetest.Alice)
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	for b.Loop() {
		if _, err := s.RawNodePool(ctx, p.ID); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpu()-start)/float64(b.N), "cpu-ns/op")
}

package postgres_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/store/postgres"
	"github.com/kpool/kpool/store/storetest"
	"github.com/kpool/kpool/store/testdb"
)

func TestConformance(t *testing.T) { storetest.Run(t, testdb.Postgres) }

func BenchmarkStore(b *testing.B) { storetest.Bench(b, testdb.Postgres) }

// TestNotifyAcrossProcesses checks that a write through one connection pool
// wakes a subscriber on another, as two kpool processes on one database.
func TestNotifyAcrossProcesses(t *testing.T) {
	url := testdb.PostgresSchema(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	wake := b.Subscribe(ctx)
	<-wake // the listener is connected (it wakes once on connecting)
	svc := kpool.NewService(a, storetest.Platforms)
	if _, err := svc.CreateCluster(storetest.Ctx(storetest.Alice), kpool.ClusterCreate{Name: "prod", Spec: json.RawMessage(storetest.GCPCluster)}); err != nil {
		t.Fatal(err)
	}
	<-wake
	if id, err := b.LastEventID(ctx); err != nil || id == 0 {
		t.Fatalf("the other process sees event %d (%v)", id, err)
	}
}

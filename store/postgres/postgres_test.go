package postgres_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/kpool/kpool/service"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/audit"
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
	svc := service.New(a, storetest.Platforms)
	if _, err := svc.CreateCluster(storetest.Ctx(storetest.Alice), service.ClusterCreate{Name: "prod", Spec: json.RawMessage(storetest.GCPCluster)}); err != nil {
		t.Fatal(err)
	}
	<-wake
	if id, err := b.LastEventID(ctx); err != nil || id == 0 {
		t.Fatalf("the other process sees event %d (%v)", id, err)
	}
}

// TestFeedOutOfOrderCommits is D16 made to happen: on PostgreSQL a
// transaction that took an event id first may commit after one that took a
// later id. A reader that only asks for ids after the last it saw skips the
// late event for good; audit.Feed returns it once it commits.
func TestFeedOutOfOrderCommits(t *testing.T) {
	ctx := context.Background()
	st := testdb.Postgres(t)
	svc := service.New(st, storetest.Platforms)
	c := storetest.NewCluster(t, svc, storetest.Alice, "prod")
	feed := &audit.Feed{Store: st}
	if err := feed.Start(ctx); err != nil {
		t.Fatal(err)
	}
	cursor, err := st.LastEventID(ctx) // the naive reader's
	if err != nil {
		t.Fatal(err)
	}
	event := func(typ string) *kpool.Event {
		return &kpool.Event{Type: typ, ObjectID: c.ID, ClusterID: c.ID, Actor: "test", CreatedAt: time.Now().UTC()}
	}
	held, release, slow := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		slow <- st.Write(ctx, func(tx kpool.Tx) error {
			if err := tx.AddEvent(event("test.slow")); err != nil {
				return err
			}
			if err := tx.Flush(); err != nil { // inserted: its id is taken
				return err
			}
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	if err := st.Write(ctx, func(tx kpool.Tx) error { return tx.AddEvent(event("test.fast")) }); err != nil {
		t.Fatal(err)
	}
	types := func(evs []kpool.Event) []string {
		var out []string
		for _, e := range evs {
			out = append(out, e.Type)
		}
		return out
	}
	naive := func() []kpool.Event {
		evs, err := st.Events(ctx, cursor, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) > 0 {
			cursor = evs[len(evs)-1].ID
		}
		return evs
	}
	if got, want := types(naive()), []string{"test.fast"}; !slices.Equal(got, want) {
		t.Fatalf("naive reader: %v, want %v", got, want)
	}
	if evs, err := feed.Next(ctx); err != nil || !slices.Equal(types(evs), []string{"test.fast"}) {
		t.Fatalf("feed before the slow commit: %v, %v", types(evs), err)
	}
	close(release)
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
	if got := naive(); len(got) != 0 {
		t.Fatalf("the naive reader saw %v: the ids did not commit out of order", types(got))
	}
	if evs, err := feed.Next(ctx); err != nil || !slices.Equal(types(evs), []string{"test.slow"}) {
		t.Fatalf("feed after the slow commit: %v, %v; want [test.slow]", types(evs), err)
	}
}

// TestLeaseOnDatabaseClock: a lease runs out on the database's clock, not
// on the clock of the process that took it, so hosts whose clocks
// disagree never both lead. The lease a process takes for an hour is
// written as the database's now plus an hour; moved an hour and a minute
// back (as by a host whose clock runs that far ahead), it has run out for
// every process.
func TestLeaseOnDatabaseClock(t *testing.T) {
	url := testdb.PostgresSchema(t)
	ctx := context.Background()
	st, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if held, err := st.AcquireLease(ctx, "l", "a", time.Hour); err != nil || !held {
		t.Fatal(held, err)
	}
	var left time.Duration
	if err := pool.QueryRow(ctx, `SELECT extract(epoch FROM expires_at - now()) * 1e9 FROM leases WHERE name = 'l'`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left < 59*time.Minute || left > time.Hour {
		t.Fatalf("the lease runs out %v after the database's now, want an hour", left)
	}
	if held, _ := st.AcquireLease(ctx, "l", "b", time.Hour); held {
		t.Fatal("another holder took a live lease")
	}
	if _, err := pool.Exec(ctx, `UPDATE leases SET expires_at = now() - interval '1 minute' WHERE name = 'l'`); err != nil {
		t.Fatal(err)
	}
	if held, err := st.AcquireLease(ctx, "l", "b", time.Hour); err != nil || !held {
		t.Fatalf("a lease expired on the database's clock was not taken: %v %v", held, err)
	}
}

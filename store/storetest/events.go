package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/audit"
	"github.com/kpool/kpool/service"
)

func testEvents(t *testing.T, s *service.Service) {
	ctx := Ctx(Alice)
	c := NewCluster(t, s, Alice, "prod")
	p := NewPool(t, s, c, "workers")
	ok(s.UpdateNodePool(ctx, p.ID, service.Update{Spec: count(4)}))(t)
	if _, _, err := s.DeleteNodePool(ctx, p.ID, service.Delete{}); err != nil {
		t.Fatal(err)
	}
	evs := ok(s.Store.Events(context.Background(), 0, 100))(t)
	var got []string
	for _, e := range evs {
		got = append(got, fmt.Sprintf("%s/%d/%s", e.Type, e.Generation, e.Actor))
		if e.CreatedAt.IsZero() || e.ClusterID != c.ID {
			t.Errorf("event %+v lacks time or cluster", e)
		}
	}
	want := []string{"cluster.created/1/" + Alice, "nodepool.created/1/" + Alice, "nodepool.updated/2/" + Alice, "nodepool.deleted/2/" + Alice}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	for i := 1; i < len(evs); i++ {
		if evs[i].ID <= evs[i-1].ID {
			t.Fatalf("event ids not increasing: %v", evs)
		}
	}
	tail := ok(s.Store.Events(context.Background(), evs[1].ID, 1))(t)
	if len(tail) != 1 || tail[0].ID != evs[2].ID {
		t.Fatalf("Events(after, 1) = %v", tail)
	}
}

// testAuditTrail: every field of an event round-trips, each filter
// selects what it says, newest first; updates of one pool written in one
// batch keep each its own request id and generations.
func testAuditTrail(t *testing.T, s *service.Service) {
	bg := context.Background()
	in := func(owner, req string) context.Context { return audit.WithRequestID(Ctx(owner), req) }
	// The cluster is created in a traced request: its event keeps the
	// request's traceparent.
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	traced := trace.ContextWithSpanContext(in(Alice, "r-cluster"), trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
	c := ok(s.CreateCluster(traced, service.ClusterCreate{Name: "prod", Spec: json.RawMessage(GCPCluster)}))(t)
	p := ok(s.CreateNodePool(in(Alice, "r-pool"), service.NodePoolCreate{Name: "web", ClusterID: c.ID, Spec: json.RawMessage(GCPPool)}))(t)
	theirs := NewCluster(t, s, Bob, "theirs")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok(s.UpdateNodePool(in(Alice, fmt.Sprintf("r-scale-%d", i)), p.ID, service.Update{Spec: count(i + 4), Patch: true}))(t) // never 3, the count it has: each is a change
		}()
	}
	wg.Wait()

	all := ok(s.Store.AuditEvents(bg, kpool.EventFilter{ClusterID: c.ID, Limit: 100}))(t)
	if len(all) != 10 {
		t.Fatalf("%d events of the cluster, want 10: %+v", len(all), all)
	}
	first := all[len(all)-1]
	if first.Type != kpool.EventClusterCreated || first.RequestID != "r-cluster" || first.Owner != Alice || first.Actor != Alice ||
		first.GenerationBefore != 0 || first.Generation != 1 || first.ObjectID != c.ID || first.CreatedAt.IsZero() ||
		first.TraceParent != "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" || all[0].TraceParent != "" {
		t.Errorf("cluster create recorded as %+v", first)
	}
	// Eight updates: generations 1→2 … 8→9, in id order, each with its
	// own request id once.
	reqs := map[string]bool{}
	gen := int64(1)
	for i := len(all) - 3; i >= 0; i-- {
		e := all[i]
		if e.Type != kpool.EventNodePoolUpdated || e.GenerationBefore != gen || e.Generation != gen+1 || e.Detail != "spec.nodeCount" {
			t.Errorf("update %d recorded as %+v, want generation %d→%d", len(all)-3-i, e, gen, gen+1)
		}
		gen++
		if reqs[e.RequestID] || !strings.HasPrefix(e.RequestID, "r-scale-") {
			t.Errorf("request id %q repeated or not the update's own", e.RequestID)
		}
		reqs[e.RequestID] = true
	}
	for i := 1; i < len(all); i++ {
		if all[i].ID >= all[i-1].ID {
			t.Fatalf("not newest first: %d after %d", all[i].ID, all[i-1].ID)
		}
	}

	for _, tc := range []struct {
		name string
		f    kpool.EventFilter
		want int
	}{
		{"owner", kpool.EventFilter{Owner: strings.ToUpper(Bob)}, 1},
		{"object", kpool.EventFilter{ObjectID: p.ID}, 9},
		{"kind", kpool.EventFilter{ClusterID: c.ID, Type: "cluster."}, 1},
		{"type", kpool.EventFilter{Type: kpool.EventNodePoolCreated, ClusterID: c.ID}, 1},
		{"actor", kpool.EventFilter{Actor: Bob}, 1},
		{"other owner's cluster", kpool.EventFilter{Owner: Alice, ClusterID: theirs.ID}, 0},
		{"limit", kpool.EventFilter{ClusterID: c.ID, Limit: 3}, 3},
		{"before", kpool.EventFilter{ClusterID: c.ID, Before: all[1].ID}, 8},
	} {
		if tc.f.Limit == 0 {
			tc.f.Limit = 100
		}
		got := ok(s.Store.AuditEvents(bg, tc.f))(t)
		if len(got) != tc.want {
			t.Errorf("%s: %d events, want %d", tc.name, len(got), tc.want)
		}
	}
}

// testEventRetention checks the outbox's pruning: events older than the
// retention go, oldest first, in batches, always as a run from the bottom
// (an event whose clock says young stops it) and never the newest; a feed
// that fell behind the pruning is told so, one that kept up is not.
func testEventRetention(t *testing.T, s *service.Service) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) { s.Now = func() time.Time { return t0.Add(d) } }
	behind, current := &audit.Feed{Store: s.Store}, &audit.Feed{Store: s.Store}
	for _, f := range []*audit.Feed{behind, current} {
		if err := f.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	at(0)
	c := NewCluster(t, s, Alice, "prod") // 1 event
	for i := range 4 {                   // 4 more
		NewPool(t, s, c, fmt.Sprintf("old-%d", i))
	}
	at(90 * time.Minute)
	NewPool(t, s, c, "young")
	at(30 * time.Minute) // a process whose clock is behind
	NewPool(t, s, c, "skewed")
	at(0)
	NewPool(t, s, c, "old-after-skew")
	at(2 * time.Hour)
	NewPool(t, s, c, "newest")
	all := ok(s.Store.Events(ctx, 0, 100))(t)
	if len(all) != 9 {
		t.Fatalf("%d events, want 9", len(all))
	}
	if evs, err := current.Next(ctx); err != nil || len(evs) != 9 {
		t.Fatalf("current feed: %d events, %v", len(evs), err)
	}

	// Older than an hour at 2h: the first five (not "skewed", which says
	// 30m, and not what follows it, though "old-after-skew" is old).
	r := &audit.Retention{Store: s.Store, Retention: time.Hour, Batch: 2, Now: func() time.Time { return t0.Add(2 * time.Hour) }}
	if n := ok(r.Prune(ctx))(t); n != 5 {
		t.Fatalf("pruned %d, want 5", n)
	}
	kept := ok(s.Store.Events(ctx, 0, 100))(t)
	if len(kept) != 4 || kept[0].ID != all[5].ID {
		t.Fatalf("kept %v; want the last 4 of %v", kept, all)
	}
	if n := ok(r.Prune(ctx))(t); n != 0 {
		t.Fatalf("pruning again deleted %d", n)
	}
	evs, err := behind.Next(ctx)
	if !errors.Is(err, audit.ErrPruned) || len(evs) != 4 || evs[0].ID != kept[0].ID {
		t.Fatalf("feed behind the pruning: %d events, %v; want the 4 kept and ErrEventsPruned", len(evs), err)
	}

	// Much later everything is old: all go but the newest, concurrently
	// pruned by two processes.
	late := func() time.Time { return t0.Add(10 * time.Hour) }
	counts := make([]int, 2)
	errs := parallel(2, func(i int) error {
		var err error
		counts[i], err = (&audit.Retention{Store: s.Store, Retention: time.Hour, Batch: 1, Now: late}).Prune(ctx)
		return err
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if counts[0]+counts[1] != 3 {
		t.Fatalf("two pruners deleted %v, want 3 in all", counts)
	}
	kept = ok(s.Store.Events(ctx, 0, 100))(t)
	if len(kept) != 1 || kept[0].ID != all[8].ID || ok(s.Store.LastEventID(ctx))(t) != all[8].ID {
		t.Fatalf("kept %v; want the newest, %d", kept, all[8].ID)
	}
	// Feeds that kept up are not told to resync, and see what comes next.
	at(10 * time.Hour)
	NewPool(t, s, c, "next")
	for name, f := range map[string]*audit.Feed{"behind": behind, "current": current} {
		if evs, err := f.Next(ctx); err != nil || len(evs) != 1 {
			t.Fatalf("%s feed after pruning: %d events, %v", name, len(evs), err)
		}
	}
}

func testSubscribe(t *testing.T, s *service.Service) {
	ctx, cancel := context.WithCancel(context.Background())
	wake := s.Store.Subscribe(ctx)
	before := ok(s.Store.LastEventID(ctx))(t)
	c := NewCluster(t, s, Alice, "prod")
	<-wake // the create committed with its event
	after := ok(s.Store.LastEventID(ctx))(t)
	evs := ok(s.Store.Events(ctx, before, 10))(t)
	if after <= before || len(evs) != 1 || evs[0].ObjectID != c.ID {
		t.Fatalf("events after %d: %v (last %d)", before, evs, after)
	}
	cancel()
	for range wake { // closed once ctx ends
	}
}

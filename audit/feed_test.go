package audit

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/kpool/kpool"
)

// outbox is a Store whose events become visible in the order a test commits
// them; only the feed's two methods are implemented.
type outbox struct {
	kpool.Store
	visible map[int64]kpool.Event
}

func (o *outbox) commit(ids ...int64) {
	for _, id := range ids {
		o.visible[id] = kpool.Event{ID: id, Type: kpool.EventNodePoolCreated}
	}
}

func (o *outbox) Events(_ context.Context, after int64, limit int) ([]kpool.Event, error) {
	var out []kpool.Event
	for id, e := range o.visible {
		if id > after {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out[:min(len(out), limit)], nil
}

func (o *outbox) LastEventID(context.Context) (int64, error) {
	var last int64
	for id := range o.visible {
		last = max(last, id)
	}
	return last, nil
}

func ids(evs []kpool.Event) string {
	var s []int64
	for _, e := range evs {
		s = append(s, e.ID)
	}
	return fmt.Sprint(s)
}

func TestEventFeed(t *testing.T) {
	ctx := context.Background()
	clock := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	o := &outbox{visible: map[int64]kpool.Event{}}
	o.commit(1, 2)
	f := &Feed{Store: o, GapWait: 10 * time.Second, Now: func() time.Time { return clock }}
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		commit  []int64
		advance time.Duration
		want    string
	}{
		{commit: nil, want: "[]"},                   // started after 2
		{commit: []int64{3, 4}, want: "[3 4]"},      // in order
		{commit: []int64{5, 7, 8}, want: "[5 7 8]"}, // 6 is still in flight
		{commit: []int64{6}, want: "[6]"},           // and arrives late, once
		{commit: []int64{10}, want: "[10]"},         // 9 rolled back
		{advance: 5 * time.Second, want: "[]"},      // still waited for
		{advance: 6 * time.Second, want: "[]"},      // given up
		{commit: []int64{9, 11}, want: "[11]"},      // too late: given up on
		{commit: []int64{12, 13, 14}, want: "[12 13 14]"},
	}
	for i, s := range steps {
		clock = clock.Add(s.advance)
		o.commit(s.commit...)
		got, err := f.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ids(got) != s.want && !(s.want == "[]" && len(got) == 0) {
			t.Fatalf("step %d: got %s, want %s", i, ids(got), s.want)
		}
	}
}

func TestEventFeedPages(t *testing.T) {
	ctx := context.Background()
	o := &outbox{visible: map[int64]kpool.Event{}}
	f := &Feed{Store: o}
	for id := int64(1); id <= 2*feedPage+7; id++ {
		if id != 600 {
			o.commit(id)
		}
	}
	got, err := f.Next(ctx)
	if err != nil || len(got) != 2*feedPage+6 {
		t.Fatalf("first read: %d events (%v), want %d", len(got), err, 2*feedPage+6)
	}
	o.commit(600)
	got, _ = f.Next(ctx)
	if ids(got) != "[600]" {
		t.Fatalf("late event: got %s", ids(got))
	}
}

// TestEventFeedPruned checks that a feed whose cursor is below the oldest
// event kept says so (ErrPruned) with the events it read, and that a
// rolled-back id right after the cursor is not taken for a pruned one.
func TestEventFeedPruned(t *testing.T) {
	ctx := context.Background()
	o := &outbox{visible: map[int64]kpool.Event{}}
	o.commit(1, 2, 3)
	behind, current := &Feed{Store: o}, &Feed{Store: o}
	for _, f := range []*Feed{behind, current} {
		if err := f.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	o.commit(4, 5, 6, 7, 8, 9, 10)
	if got, err := current.Next(ctx); err != nil || ids(got) != "[4 5 6 7 8 9 10]" {
		t.Fatalf("current feed: %s, %v", ids(got), err)
	}
	for id := int64(1); id <= 8; id++ { // pruned from the bottom; 9 and 10 kept
		delete(o.visible, id)
	}
	got, err := behind.Next(ctx)
	if !errors.Is(err, ErrPruned) || ids(got) != "[9 10]" {
		t.Fatalf("feed behind the pruning: %s, %v; want [9 10] and ErrPruned", ids(got), err)
	}
	if len(behind.gaps) != 0 {
		t.Fatalf("the feed waits for pruned ids: %v", behind.gaps)
	}
	// Both go on: 11 rolled back and 12 committed is a gap, not pruning.
	o.commit(12)
	for name, f := range map[string]*Feed{"behind": behind, "current": current} {
		if got, err := f.Next(ctx); err != nil || ids(got) != "[12]" {
			t.Errorf("%s feed after a rollback: %s, %v", name, ids(got), err)
		}
	}
}

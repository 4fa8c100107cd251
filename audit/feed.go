package audit

import (
	"context"
	"errors"
	"time"

	"github.com/kpool/kpool"
)

// ErrPruned is what Feed.Next returns (with the events it read)
// when events after the feed's cursor were pruned from the outbox before it
// read them: it fell behind by more than the retention (see Retention).
// What they said is lost, so the reader must treat everything as changed
// (the controllers queue every cluster). The feed goes on from the oldest
// event kept.
var ErrPruned = errors.New("events after the feed's cursor were pruned from the outbox before it read them: resync everything")

// Feed reads the events outbox in order without missing an event.
//
// An event's id is taken when its transaction inserts it and becomes visible
// when that transaction commits, and concurrent transactions need not commit
// in id order: when event 11 is visible, event 10 may still be on its way. A
// reader that only asked for ids after the last it saw would skip it for
// good. The feed remembers such gaps and looks for them again until they
// fill or are older than GapWait (a transaction that rolled back leaves a
// gap that never fills).
//
// Old events are pruned (Store.PruneEvents), always from the bottom of the
// outbox and never the newest. When a read finds ids missing right after
// the cursor, the feed asks for the oldest event kept: if it is above them,
// they were pruned (or never committed), and Next says so with
// ErrPruned.
type Feed struct {
	Store kpool.Store
	// GapWait is how long a missing id is waited for (default 30s).
	GapWait time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time

	high int64               // the highest id read
	gaps map[int64]time.Time // ids below high not read yet, and since when
}

// feedPage is how many events a read asks for; maxGaps bounds the ids a
// feed waits for (a jump of more is not transactions in flight).
const (
	feedPage = 500
	maxGaps  = 10000
)

// Start places the feed after the newest event: Next returns what commits
// from now on.
func (f *Feed) Start(ctx context.Context) error {
	id, err := f.Store.LastEventID(ctx)
	f.high = id
	return err
}

// Next returns the events that committed since the last call, each once:
// new ones in id order, then any that filled a gap.
func (f *Feed) Next(ctx context.Context) ([]kpool.Event, error) {
	now := time.Now
	if f.Now != nil {
		now = f.Now
	}
	wait := f.GapWait
	if wait == 0 {
		wait = 30 * time.Second
	}
	if f.gaps == nil {
		f.gaps = map[int64]time.Time{}
	}
	var out []kpool.Event
	var pruned error
	var floor int64 // with pruned: the oldest event kept; no gap is below it
	for {
		evs, err := f.Store.Events(ctx, f.high, feedPage)
		if err != nil {
			return out, err
		}
		if len(evs) > 0 && evs[0].ID > f.high+1 && pruned == nil {
			oldest, err := f.Store.Events(ctx, 0, 1)
			if err != nil {
				return out, err
			}
			if len(oldest) > 0 && oldest[0].ID > f.high+1 {
				pruned, floor = ErrPruned, oldest[0].ID
			}
		}
		for _, e := range evs {
			for id := max(f.high+1, floor, e.ID-maxGaps); id < e.ID && len(f.gaps) < maxGaps; id++ {
				f.gaps[id] = now()
			}
			f.high = e.ID
			out = append(out, e)
		}
		if len(evs) < feedPage {
			break
		}
	}
	if len(f.gaps) == 0 {
		return out, pruned
	}
	low := f.high
	for id := range f.gaps {
		low = min(low, id)
	}
	late, err := f.Store.Events(ctx, low-1, int(min(f.high-low+1, 2*feedPage)))
	if err != nil {
		return out, errors.Join(pruned, err)
	}
	for _, e := range late {
		if _, missing := f.gaps[e.ID]; missing {
			delete(f.gaps, e.ID)
			out = append(out, e)
		}
	}
	for id, since := range f.gaps {
		if now().Sub(since) > wait {
			delete(f.gaps, id) // rolled back, or its transaction is stuck
		}
	}
	return out, pruned
}

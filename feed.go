package kpool

import (
	"context"
	"time"
)

// EventFeed reads the events outbox in order without missing an event.
//
// An event's id is taken when its transaction inserts it and becomes visible
// when that transaction commits, and concurrent transactions need not commit
// in id order: when event 11 is visible, event 10 may still be on its way. A
// reader that only asked for ids after the last it saw would skip it for
// good. The feed remembers such gaps and looks for them again until they
// fill or are older than GapWait (a transaction that rolled back leaves a
// gap that never fills).
type EventFeed struct {
	Store Store
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
func (f *EventFeed) Start(ctx context.Context) error {
	id, err := f.Store.LastEventID(ctx)
	f.high = id
	return err
}

// Next returns the events that committed since the last call, each once:
// new ones in id order, then any that filled a gap.
func (f *EventFeed) Next(ctx context.Context) ([]Event, error) {
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
	var out []Event
	for {
		evs, err := f.Store.Events(ctx, f.high, feedPage)
		if err != nil {
			return out, err
		}
		for _, e := range evs {
			for id := max(f.high+1, e.ID-maxGaps); id < e.ID && len(f.gaps) < maxGaps; id++ {
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
		return out, nil
	}
	low := f.high
	for id := range f.gaps {
		low = min(low, id)
	}
	late, err := f.Store.Events(ctx, low-1, int(min(f.high-low+1, 2*feedPage)))
	if err != nil {
		return out, err
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
	return out, nil
}

package dashboard

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/audit"
)

// change is what a browser is told of a write: which object, in which
// cluster; the page fetches what it shows again.
type change struct {
	Type      string `json:"type"`
	ObjectID  string `json:"object_id"`
	ClusterID string `json:"cluster_id"`
	owner     string
	team      string
}

// broadcaster fans the store's change feed out to the browsers watching.
type broadcaster struct {
	mu   sync.Mutex
	subs map[chan []change]bool
}

func newBroadcaster() *broadcaster { return &broadcaster{subs: map[chan []change]bool{}} }

func (b *broadcaster) subscribe() chan []change {
	ch := make(chan []change, 16)
	b.mu.Lock()
	b.subs[ch] = true
	b.mu.Unlock()
	return ch
}

func (b *broadcaster) unsubscribe(ch chan []change) {
	b.mu.Lock()
	delete(b.subs, ch)
	b.mu.Unlock()
}

// publish sends to every watcher; one too slow to take it misses it, and
// is told to reload everything instead.
func (b *broadcaster) publish(cs []change) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs {
		select {
		case ch <- cs:
		default:
			// Full: drop its oldest batch for a resync, which says it
			// all (the page fetches what it shows again).
			select {
			case <-ch:
			default:
			}
			select {
			case ch <- []change{{Type: "resync"}}:
			default:
			}
		}
	}
}

// Run reads the store's change feed (the events outbox the controllers
// follow too) until ctx ends, and passes what changed to the browsers.
func (h *Handler) Run(ctx context.Context) error {
	feed := &audit.Feed{Store: h.o.Service.Store}
	if err := feed.Start(ctx); err != nil {
		return err
	}
	t := time.NewTicker(h.o.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		evs, err := feed.Next(ctx)
		if errors.Is(err, audit.ErrPruned) {
			h.live.publish([]change{{Type: "resync"}})
			err = nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			h.o.Log.Warn("dashboard: reading the change feed", "err", err)
			continue
		}
		if len(evs) == 0 {
			continue
		}
		cs := make([]change, len(evs))
		for i, e := range evs {
			cs[i] = change{Type: e.Type, ObjectID: e.ObjectID, ClusterID: e.ClusterID, owner: strings.ToLower(e.Owner), team: e.Team}
		}
		h.live.publish(cs)
	}
}

// seen are the changes of cs that id may read: those of clusters it sees
// (its own, its teams', or all for admins and controllers), and resyncs.
func seen(id *kpool.Identity, cs []change) []change {
	var mine []change
	for _, c := range cs {
		if c.Type == "resync" || id.Sees(c.owner, c.team) {
			mine = append(mine, c)
		}
	}
	return mine
}

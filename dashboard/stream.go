package dashboard

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// slots counts the live streams each identity holds, up to a maximum.
type slots struct {
	mu   sync.Mutex
	max  int
	held map[string]int
}

func newSlots(max int) *slots { return &slots{max: max, held: map[string]int{}} }

// take reserves a stream for key and reports false when key holds max.
func (s *slots) take(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[key] >= s.max {
		return false
	}
	s.held[key]++
	return true
}

// give returns a stream of key's.
func (s *slots) give(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[key]--; s.held[key] <= 0 {
		delete(s.held, key)
	}
}

// streamRetryAfter is the Retry-After (seconds) of a stream refused for
// the cap: another tab's stream may end by then.
const streamRetryAfter = 10

// stream is the server-sent events a page listens to: the changes to what
// the caller may read (their clusters' objects; everything for an admin).
// It is bounded (see StreamLimits): a few per identity, each for a
// lifetime, each write within a deadline, and only while the credential
// it opened with still signs in.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request) {
	id := identity(r)
	if !h.streams.take(id.Email) {
		w.Header().Set("Retry-After", strconv.Itoa(streamRetryAfter))
		http.Error(w, fmt.Sprintf("too many live streams: at most %d per identity", h.o.Stream.PerIdentity), http.StatusTooManyRequests)
		return
	}
	defer h.streams.give(id.Email)
	lim := h.o.Stream
	rc := http.NewResponseController(w)
	send := func(s string) bool {
		// The server's write timeout does not fit a stream; each write
		// gets its own deadline instead.
		_ = rc.SetWriteDeadline(time.Now().Add(lim.WriteTimeout))
		if _, err := io.WriteString(w, s); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	ch := h.live.subscribe()
	defer h.live.unsubscribe(ch)
	if !send("retry: 2000\n: kpool live\n\n") {
		return
	}
	cred, recheck := r.Context().Value(credKey{}).(credential)
	end := time.NewTimer(lim.Lifetime)
	defer end.Stop()
	keep := time.NewTicker(lim.KeepAlive)
	defer keep.Stop()
	var again <-chan time.Time // nil: a stream without a credential (tests) is not checked
	if recheck {
		t := time.NewTicker(lim.Recheck)
		defer t.Stop()
		again = t.C
	}
	for {
		var msg string
		select {
		case <-r.Context().Done():
			return
		case <-end.C:
			return // the browser connects again
		case <-again:
			if _, err := h.authenticate(r.Context(), cred); err != nil {
				return // revoked, expired, or signed out
			}
			continue
		case <-keep.C:
			msg = ": keep-alive\n\n"
		case cs := <-ch:
			mine := seen(id, cs)
			if len(mine) == 0 {
				continue
			}
			b, _ := json.Marshal(mine)
			msg = "data: " + string(b) + "\n\n"
		}
		if !send(msg) {
			return
		}
	}
}

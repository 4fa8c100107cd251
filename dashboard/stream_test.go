package dashboard

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"
)

// openStream opens /live with the session cookie and returns the answer
// once its first line (or an error) has arrived.
func (s *site) openStream(t *testing.T, secret string) (*http.Response, *bufio.Reader) {
	t.Helper()
	resp := s.do(t, http.MethodGet, "/live", nil, "cookie", secret)
	t.Cleanup(func() { resp.Body.Close() })
	br := bufio.NewReader(resp.Body)
	if resp.StatusCode == http.StatusOK {
		if line, err := br.ReadString('\n'); err != nil || line != "retry: 2000\n" {
			t.Fatalf("the stream begins %q, %v", line, err)
		}
	}
	return resp, br
}

// drain reads a stream to its end and reports whether it ended.
func drain(br *bufio.Reader) bool {
	for {
		if _, err := br.ReadString('\n'); err != nil {
			return errors.Is(err, io.EOF)
		}
	}
}

// TestStreamCap: an identity holds at most PerIdentity streams; the next
// is 429 with Retry-After, while others still get theirs, and a stream
// that ends gives its place back.
func TestStreamCap(t *testing.T) {
	s := newSite(t, Options{Stream: StreamLimits{PerIdentity: 2}}, nil)
	_, alice := s.token(t, owner)
	_, bob := s.token(t, "bob@example.com")
	for range 2 {
		if resp, _ := s.openStream(t, alice); resp.StatusCode != http.StatusOK {
			t.Fatalf("a stream within the cap: %d", resp.StatusCode)
		}
	}
	resp, _ := s.openStream(t, alice)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a stream past the cap: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if resp, _ := s.openStream(t, bob); resp.StatusCode != http.StatusOK {
		t.Fatalf("another identity's stream: %d", resp.StatusCode)
	}
	slots := newSlots(1)
	if !slots.take("a") || slots.take("a") || !slots.take("b") {
		t.Fatal("slots: one each")
	}
	slots.give("a")
	if !slots.take("a") || len(slots.held) != 2 {
		t.Fatalf("slots: a stream's end gives its place back: %v", slots.held)
	}
}

// TestStreamEnds: a stream ends after its lifetime (the browser connects
// again), and when its token is revoked, within a recheck.
func TestStreamEnds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limits StreamLimits
		revoke bool
	}{
		{"lifetime", StreamLimits{Lifetime: 20 * time.Millisecond}, false},
		{"revoked token", StreamLimits{Recheck: 5 * time.Millisecond}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, Options{Stream: tc.limits}, nil)
			id, secret := s.token(t, owner)
			resp, br := s.openStream(t, secret)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("stream: %d", resp.StatusCode)
			}
			if tc.revoke {
				if err := s.tokens.RevokeToken(t.Context(), id, time.Now()); err != nil {
					t.Fatal(err)
				}
			}
			if !drain(br) {
				t.Fatal("the stream did not end")
			}
			if again, _ := s.openStream(t, secret); tc.revoke && again.StatusCode != http.StatusUnauthorized {
				t.Errorf("a revoked token's new stream: %d", again.StatusCode)
			}
		})
	}
}

// stalled is a connection whose reader stopped reading: a write blocks
// until its deadline passes, as on a full socket buffer.
type stalled struct {
	header    http.Header
	mu        sync.Mutex
	deadlines []time.Time
}

func (s *stalled) Header() http.Header { return s.header }
func (s *stalled) WriteHeader(int)     {}
func (s *stalled) Flush()              {}

func (s *stalled) SetWriteDeadline(t time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deadlines = append(s.deadlines, t)
	return nil
}

func (s *stalled) Write([]byte) (int, error) {
	s.mu.Lock()
	d := s.deadlines[len(s.deadlines)-1]
	s.mu.Unlock()
	if d.IsZero() {
		select {} // no deadline: held for ever
	}
	<-time.After(time.Until(d))
	return 0, os.ErrDeadlineExceeded
}

// TestStreamWriteDeadline: a reader that stalls loses its stream within
// the write timeout instead of holding it (and its slot).
func TestStreamWriteDeadline(t *testing.T) {
	h, ctx := fleetOf(t, 0, 0)
	h.o.Stream.WriteTimeout = 10 * time.Millisecond
	w := &stalled{header: http.Header{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.stream(w, httptest.NewRequest(http.MethodGet, "/live", nil).WithContext(ctx))
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("a stalled reader holds its stream")
	}
	if len(h.streams.held) != 0 {
		t.Errorf("the stream's slot is still held: %v", h.streams.held)
	}
}

package api

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/store/testdb"
)

// clock is a settable time for the limiter.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestLimiter(t *testing.T) {
	c := &clock{t: time.Unix(1_000_000, 0)}
	l := NewLimiter(2, 3) // 2/s, burst 3
	l.now = c.now
	steps := []struct {
		advance time.Duration
		key     string
		ok      bool
		wait    time.Duration
	}{
		{0, "a", true, 0},
		{0, "a", true, 0},
		{0, "a", true, 0},
		{0, "a", false, 500 * time.Millisecond}, // burst spent; a token every 0.5s
		{0, "b", true, 0},                       // another caller has its own bucket
		{250 * time.Millisecond, "a", false, 250 * time.Millisecond},
		{250 * time.Millisecond, "a", true, 0},
		{0, "a", false, 500 * time.Millisecond},
		{time.Hour, "a", true, 0}, // refilled to the burst, not beyond
		{0, "a", true, 0},
		{0, "a", true, 0},
		{0, "a", false, 500 * time.Millisecond},
	}
	for i, s := range steps {
		c.t = c.t.Add(s.advance)
		ok, wait := l.Allow(s.key)
		if ok != s.ok || wait != s.wait {
			t.Fatalf("step %d (%s): Allow = %v, %v; want %v, %v", i, s.key, ok, wait, s.ok, s.wait)
		}
	}
	if NewLimiter(0, 100) != nil || NewLimiter(50, 0) != nil {
		t.Error("a rate or burst of 0 should turn the limit off (nil)")
	}
}

// TestLimiterBounded checks that the buckets of many callers stay bounded:
// idle (full) ones go first, then arbitrary ones.
func TestLimiterBounded(t *testing.T) {
	c := &clock{t: time.Unix(1_000_000, 0)}
	l := NewLimiter(1, 2)
	l.now = c.now
	l.max = 100
	for i := range 1000 {
		l.Allow(fmt.Sprint("caller-", i))
		if n := l.Len(); n > l.max {
			t.Fatalf("after %d callers: %d buckets, over the bound %d", i+1, n, l.max)
		}
	}
	// A busy caller keeps its (empty) bucket across an eviction of idle ones.
	l.Allow("busy")
	l.Allow("busy")
	c.t = c.t.Add(time.Minute) // every other bucket fills up again
	l.Allow("busy")            // refilled: two tokens, one taken
	l.Allow("busy")
	for i := range l.max / 2 {
		l.Allow(fmt.Sprint("new-", i))
	}
	if n := l.Len(); n > l.max/2+1 {
		t.Fatalf("%d buckets: the idle callers' full buckets were not evicted", n)
	}
	if ok, _ := l.Allow("busy"); ok {
		t.Error("the busy caller's empty bucket was evicted (or refilled) along with the idle ones")
	}
}

// TestRateLimitAPI checks the API's 429: per identity, anonymous callers by
// address, and Retry-After.
func TestRateLimitAPI(t *testing.T) {
	access, err := auth.NewAccess([]string{admin}, []string{controller})
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Unix(1_000_000, 0)}
	l := NewLimiter(0.5, 2) // a token every 2 s
	l.now = c.now
	h := NewServer(service.New(testdb.SQLite(t), catalog.Registry()), access, slog.New(slog.NewTextHandler(io.Discard, nil))).Limit(l)
	srv := httptest.NewServer(checkOpenAPI(t, h))
	t.Cleanup(srv.Close)
	a := &testAPI{t: t, srv: srv}

	for i := range 2 {
		if r := a.as(user, "GET", "/api/v1/clusters", ""); r.status != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, r.status, r.body)
		}
	}
	r := a.as(user, "GET", "/api/v1/clusters", "")
	wantError(t, r, http.StatusTooManyRequests, kpool.CodeRateLimited, "per identity")
	if got := r.header.Get("Retry-After"); got != "2" {
		t.Errorf("Retry-After %q, want 2", got)
	}
	// Another identity is not held back by the first.
	if r := a.as(other, "GET", "/api/v1/clusters", ""); r.status != http.StatusOK {
		t.Errorf("other user: %d %s", r.status, r.body)
	}
	// Callers without an identity share their address's bucket: 401 twice,
	// then 429.
	for i := range 2 {
		if r := a.do("GET", "/api/v1/clusters", ""); r.status != http.StatusUnauthorized {
			t.Fatalf("anonymous %d: %d %s", i, r.status, r.body)
		}
	}
	wantError(t, a.do("GET", "/api/v1/clusters", ""), http.StatusTooManyRequests, kpool.CodeRateLimited, "")
	// Time refills the bucket.
	c.t = c.t.Add(2 * time.Second)
	if r := a.as(user, "GET", "/api/v1/clusters", ""); r.status != http.StatusOK {
		t.Errorf("after 2s: %d %s", r.status, r.body)
	}
	// Unlimited routes: health and the document.
	for range 5 {
		if r := a.do("GET", "/healthz", ""); r.status != http.StatusOK {
			t.Fatalf("/healthz: %d", r.status)
		}
	}
}

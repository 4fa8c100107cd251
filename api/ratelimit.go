package api

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/kpool/kpool"
)

// Default request rate per identity: generous for people, scripts and
// controllers alike, a brake on a runaway loop or a flood.
const (
	DefaultRate  = 50.0
	DefaultBurst = 100
)

// MaxBuckets bounds the limiter's memory: past it, buckets that have filled
// up again (idle callers) go, and if that is not enough, arbitrary ones do
// (they start again with a full burst).
const MaxBuckets = 1 << 16

// Limiter is a token bucket per key (an identity, or the address of a caller
// that has none): rate tokens a second up to burst, one per request. Each
// bucket is a golang.org/x/time/rate limiter; Limiter adds the keys and the
// bound on how many it holds.
type Limiter struct {
	rate  rate.Limit
	burst int
	// now is the clock; tests set it.
	now func() time.Time

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
	max     int
}

// NewLimiter returns a limiter of rate requests a second with bursts of
// burst, or nil (no limit) when rate or burst is 0 or less.
func NewLimiter(r float64, burst int) *Limiter {
	if r <= 0 || burst <= 0 {
		return nil
	}
	return &Limiter{rate: rate.Limit(r), burst: burst, now: time.Now, buckets: map[string]*rate.Limiter{}, max: MaxBuckets}
}

// Allow takes a token from key's bucket; when there is none it reports false
// and how long until there is one.
func (l *Limiter) Allow(key string) (bool, time.Duration) { return l.AllowN(key, 1) }

// AllowN takes n tokens from key's bucket (a request that costs as much as
// n, at most a burst), or none and reports how long until there are n. A
// request that costs nothing (n ≤ 0) is let through.
func (l *Limiter) AllowN(key string, n int) (bool, time.Duration) {
	if n <= 0 {
		return true, 0
	}
	now := l.now()
	n = min(n, l.burst)
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= l.max {
			l.evict(now)
		}
		b = rate.NewLimiter(l.rate, l.burst)
		l.buckets[key] = b
	}
	if b.AllowN(now, n) {
		return true, 0
	}
	short := float64(n) - b.TokensAt(now)
	return false, time.Duration(short / float64(l.rate) * float64(time.Second))
}

// evict drops full buckets (a full bucket is the same as none); if that
// frees less than a quarter of the room, it drops arbitrary ones too.
func (l *Limiter) evict(now time.Time) {
	for k, b := range l.buckets {
		if b.TokensAt(now) >= float64(l.burst) {
			delete(l.buckets, k)
		}
	}
	for k := range l.buckets {
		if len(l.buckets) <= l.max*3/4 {
			break
		}
		delete(l.buckets, k)
	}
}

// Len is the number of buckets held.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// Limit makes s answer 429 RATE_LIMITED to a caller past l's rate (nil: no
// limit). It returns s.
func (s *Server) Limit(l *Limiter) *Server {
	s.limiter = l
	return s
}

// Admit charges a request served beside the API (the dashboard's pages,
// its sign-in and its live stream) to its caller exactly as the API charges
// its own: to id's e-mail, or to the remote address when id is nil (a
// caller not signed in, a failed sign-in). When id is set, the request's
// access-log line (see Logged) names it. Past the rate it answers 429
// RATE_LIMITED with Retry-After, in the API's shape, and reports false.
func (s *Server) Admit(w http.ResponseWriter, r *http.Request, id *kpool.Identity) bool {
	if rw, ok := w.(*recorder); ok && id != nil {
		rw.user = id.Email
	}
	return s.allow(w, r, callerKey(id))
}

// callerKey is the e-mail of id, or "" for a caller without an identity.
func callerKey(id *kpool.Identity) string {
	if id == nil {
		return ""
	}
	return id.Email
}

// allow charges the request to its caller: the identity's e-mail, or the
// remote address when there is none. Past the rate it answers 429 with
// Retry-After and reports false.
func (s *Server) allow(w http.ResponseWriter, r *http.Request, email string) bool {
	return s.allowN(w, r, email, 1)
}

// allowN is allow for a request that costs as much as n.
func (s *Server) allowN(w http.ResponseWriter, r *http.Request, email string, n int) bool {
	if s.limiter == nil {
		return true
	}
	key := "user " + email
	if email == "" {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		key = "addr " + host
	}
	ok, wait := s.limiter.AllowN(key, n)
	if ok {
		return true
	}
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(wait.Seconds())))))
	s.writeError(w, r, &kpool.Error{Code: kpool.CodeRateLimited, Message: "Too many requests",
		Details: fmt.Sprintf("at most %g requests per second (burst %d) per identity", float64(s.limiter.rate), s.limiter.burst)})
	return false
}

package sim

import (
	"math"
	"time"

	"golang.org/x/time/rate"
)

// limiter is the engine's rate limit: a token bucket (x/time/rate) driven
// by the engine's clock, never by the wall clock, so that a test on a
// ManualClock sees the same answers on every run.
type limiter struct {
	perSecond float64
	burst     int
	bucket    *rate.Limiter // nil: unlimited
}

// set changes the rate (0 or less: unlimited) and burst (0 or less:
// max(1, rate)), and fills the bucket.
func (l *limiter) set(perSecond float64, burst int) {
	if perSecond < 0 || math.IsNaN(perSecond) {
		perSecond = 0
	}
	if burst <= 0 {
		burst = max(1, int(math.Ceil(perSecond)))
	}
	l.perSecond, l.burst, l.bucket = perSecond, burst, nil
	if perSecond > 0 {
		l.bucket = rate.NewLimiter(rate.Limit(perSecond), burst)
	}
}

// take takes a token at now; when there is none it takes nothing and
// returns how long until there is one.
func (l *limiter) take(now time.Time) (bool, time.Duration) {
	if l.bucket == nil || l.bucket.AllowN(now, 1) {
		return true, 0
	}
	missing := 1 - l.bucket.TokensAt(now)
	return false, time.Duration(missing / l.perSecond * float64(time.Second))
}

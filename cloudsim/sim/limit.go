package sim

import (
	"math"
	"time"
)

// bucket is a token bucket on the engine's clock: rate tokens a second,
// at most burst of them.
type bucket struct {
	rate     float64
	burst    int
	tokens   float64
	lastFill time.Time
	filled   bool
}

// set changes the rate (0 or less: unlimited) and burst (0 or less:
// max(1, rate)), and fills the bucket.
func (b *bucket) set(rate float64, burst int) {
	if rate < 0 || math.IsNaN(rate) {
		rate = 0
	}
	if burst <= 0 {
		burst = max(1, int(math.Ceil(rate)))
	}
	b.rate, b.burst = rate, burst
	b.tokens, b.filled = float64(burst), false
}

// take takes a token at now; when there is none it returns how long
// until there is.
func (b *bucket) take(now time.Time) (bool, time.Duration) {
	if b.rate <= 0 {
		return true, 0
	}
	if b.filled && now.After(b.lastFill) {
		b.tokens = math.Min(float64(b.burst), b.tokens+now.Sub(b.lastFill).Seconds()*b.rate)
	}
	if !b.filled || now.After(b.lastFill) {
		b.lastFill, b.filled = now, true
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / b.rate * float64(time.Second))
}

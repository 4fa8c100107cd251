package reconcile

import (
	"math/rand/v2"
	"sync"
	"time"
)

// backoff is the work queue's per-item rate limiter: exponential from base
// to max with "equal jitter" (half the delay fixed, half random), so that
// clusters failing together do not retry together.
type backoff struct {
	base, max time.Duration
	mu        sync.Mutex
	failures  map[string]int
}

func newBackoff(base, max time.Duration) *backoff {
	return &backoff{base: base, max: max, failures: map[string]int{}}
}

// When returns the delay before the item's next attempt.
func (b *backoff) When(item string) time.Duration {
	b.mu.Lock()
	n := b.failures[item]
	b.failures[item] = n + 1
	b.mu.Unlock()
	d := b.base
	for i := 0; i < n && d < b.max; i++ {
		d *= 2
	}
	d = min(d, b.max)
	return d/2 + rand.N(d/2+1)
}

// Forget resets the item after a success.
func (b *backoff) Forget(item string) {
	b.mu.Lock()
	delete(b.failures, item)
	b.mu.Unlock()
}

// NumRequeues returns how many times the item failed in a row.
func (b *backoff) NumRequeues(item string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.failures[item]
}

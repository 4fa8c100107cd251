package ratelimit

import (
	"context"
	"errors"
	"math"
	"sort"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/kpool/kpool/provider"
)

// Bucket is a token bucket whose waiters are served by class, lowest
// first, and in order of arrival within a class: a write (class 0) waiting
// goes ahead of reads waiting, a read for a person's change (1) ahead of a
// drift pass's (2). It waits on a clock the caller gives (a fake one in
// tests). Safe for concurrent use.
type Bucket struct {
	clock clock.Clock

	mu     sync.Mutex
	rate   float64 // tokens a second; +Inf: no limit
	burst  float64
	tokens float64
	at     time.Time // when tokens was last brought up to date
	queue  []*waiter // by class, then arrival
	seq    uint64
}

type waiter struct {
	class int
	seq   uint64
	wake  chan struct{} // the waiter has become the head of the queue
}

// errNoBurst is a configuration error, not throttling: retrying cannot help.
var errNoBurst = errors.New("ratelimit: a burst of 0 allows no call")

// NewBucket returns a full bucket of burst tokens refilled at r a second
// (r <= 0 or +Inf: no limit), timed on clk (nil: the wall clock).
func NewBucket(r float64, burst int, clk clock.Clock) *Bucket {
	if clk == nil {
		clk = clock.RealClock{}
	}
	if r <= 0 {
		r = math.Inf(1)
	}
	return &Bucket{clock: clk, rate: r, burst: float64(burst), tokens: float64(burst), at: clk.Now()}
}

// Class is the class a request waits in: writes first, then reads by
// priority.
func Class(a provider.Access, p provider.Priority) int {
	if a == provider.Write {
		return 0
	}
	return 1 + int(p)
}

// Limit is the rate the bucket refills at now.
func (b *Bucket) Limit() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.rate
}

// Take waits for a token in class, on the clock; it reports whether it
// had to wait. A context that ends first takes nothing and returns its
// error.
func (b *Bucket) Take(ctx context.Context, class int) (waited bool, err error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	b.mu.Lock()
	if math.IsInf(b.rate, 1) {
		b.mu.Unlock()
		return false, nil
	}
	if b.burst < 1 {
		b.mu.Unlock()
		return false, errNoBurst
	}
	b.refill(b.clock.Now())
	if len(b.queue) == 0 && b.tokens >= 1 {
		b.tokens--
		b.mu.Unlock()
		return false, nil
	}
	w := &waiter{class: class, seq: b.seq, wake: make(chan struct{}, 1)}
	b.seq++
	b.queue = append(b.queue, w)
	sort.SliceStable(b.queue, func(i, j int) bool { return b.queue[i].class < b.queue[j].class })
	return true, b.wait(ctx, w)
}

// wait waits, b.mu held on entry, until w is the head of the queue and a
// token is there for it.
func (b *Bucket) wait(ctx context.Context, w *waiter) error {
	for {
		now := b.clock.Now()
		b.refill(now)
		head := b.queue[0] == w
		if head && b.tokens >= 1 {
			b.tokens--
			b.remove(w)
			b.mu.Unlock()
			return nil
		}
		var timer clock.Timer
		var fire <-chan time.Time
		if head {
			need := time.Duration((1 - b.tokens) / b.rate * float64(time.Second))
			timer = b.clock.NewTimer(max(need, time.Nanosecond))
			fire = timer.C()
		}
		b.mu.Unlock()
		select {
		case <-w.wake:
		case <-fire:
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			b.mu.Lock()
			b.remove(w)
			b.mu.Unlock()
			return ctx.Err()
		}
		if timer != nil {
			timer.Stop()
		}
		b.mu.Lock()
	}
}

// remove takes w off the queue and wakes the new head, which may now
// take a token or time its own wait.
func (b *Bucket) remove(w *waiter) {
	for i, x := range b.queue {
		if x == w {
			b.queue = append(b.queue[:i], b.queue[i+1:]...)
			break
		}
	}
	if len(b.queue) > 0 {
		select {
		case b.queue[0].wake <- struct{}{}:
		default:
		}
	}
}

// refill brings the tokens up to now.
func (b *Bucket) refill(now time.Time) {
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(b.burst, b.tokens+d.Seconds()*b.rate)
	}
	b.at = now
}

// set changes the rate and burst from now on, waking the head of the
// queue so that it times its wait anew.
func (b *Bucket) set(now time.Time, r float64, burst int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now)
	b.rate, b.burst = r, float64(burst)
	b.tokens = min(b.tokens, b.burst)
	if len(b.queue) > 0 {
		select {
		case b.queue[0].wake <- struct{}{}:
		default:
		}
	}
}

package ratelimit

import (
	"context"
	"math"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/kpool/kpool/provider"
)

// adaptive is a bucket whose rate follows the provider's answers (the
// package doc says how): halved on a Throttled answer, every call held
// until its Retry-After, then raised again second by second.
type adaptive struct {
	b     *Bucket
	clock clock.Clock

	mu        sync.Mutex
	max       float64   // the configured rate (Budgets.Share changes it)
	burst     int       // the configured burst
	notBefore time.Time // no call before: the provider's last Retry-After
	changed   time.Time // when the rate last changed
	ceiling   float64   // the rate when the provider last throttled
	throttled time.Time // when it did
}

func newAdaptive(r float64, burst int, clk clock.Clock) adaptive {
	b := NewBucket(r, burst, clk)
	return adaptive{b: b, clock: b.clock, max: b.Limit(), burst: burst}
}

// wait waits out the provider's last Retry-After, then takes a token of
// class; it reports whether it had to wait.
func (a *adaptive) wait(ctx context.Context, class int) error {
	_, err := a.take(ctx, class)
	return err
}

func (a *adaptive) take(ctx context.Context, class int) (bool, error) {
	held, err := a.hold(ctx)
	if err != nil {
		return held, err
	}
	waited, err := a.b.Take(ctx, class)
	return waited || held, err
}

// hold waits out the provider's last Retry-After; it reports whether
// there was one to wait out.
func (a *adaptive) hold(ctx context.Context) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	a.mu.Lock()
	hold := a.notBefore.Sub(a.clock.Now())
	a.mu.Unlock()
	if hold <= 0 {
		return false, nil
	}
	t := a.clock.NewTimer(hold)
	defer t.Stop()
	select {
	case <-t.C():
		return true, nil
	case <-ctx.Done():
		return true, ctx.Err()
	}
}

// done adapts the rate to a call's answer.
func (a *adaptive) done(err error) {
	now := a.clock.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if math.IsInf(a.max, 1) {
		return
	}
	cur := a.b.Limit()
	switch {
	case provider.IsThrottled(err) && now.Before(a.notBefore):
		// A call sent before the hold began: the same congestion, not
		// a new one to halve the rate for again.
	case provider.IsThrottled(err):
		a.ceiling, a.throttled = cur, now
		a.set(now, max(cur/2, a.max/8))
		if after, ok := provider.RetryAfter(err); ok && now.Add(after).After(a.notBefore) {
			a.notBefore = now.Add(after)
		}
		a.changed = now
	case err == nil && cur < a.max && now.Sub(a.changed) >= time.Second:
		// Back quickly to just under the rate that was throttled, then
		// probe above it slowly; once throttling is ten seconds past, back
		// quickly to the configured rate.
		a.changed = now
		recent := now.Sub(a.throttled) < 10*time.Second
		switch below := a.ceiling * 0.9; {
		case recent && cur < below:
			a.set(now, min(below, cur*1.25))
		case recent:
			a.set(now, min(a.max, cur+a.max/100))
		default:
			a.set(now, min(a.max, cur*1.25))
		}
	}
}

// scale changes the configured rate and burst: a bucket at its configured
// rate moves to the new one, one slowed by throttling stays below it.
func (a *adaptive) scale(r float64, burst int) {
	now := a.clock.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	cur := a.b.Limit()
	full := cur >= a.max
	a.max, a.burst = r, burst
	a.ceiling = min(a.ceiling, r)
	if full {
		cur = r
	}
	a.set(now, min(cur, r))
}

// set sets the rate, and a burst of a tenth of a second's calls at it (the
// configured burst once the rate is the configured one).
func (a *adaptive) set(now time.Time, r float64) {
	b := a.burst
	if r < a.max {
		b = max(1, min(a.burst, int(r/10)))
	}
	a.b.set(now, r, b)
}

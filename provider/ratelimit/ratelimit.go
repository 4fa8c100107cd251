// Package ratelimit is a driver decorator that holds the calls to a
// provider to a request rate: each call waits for a token of a token
// bucket first, on a clock the caller gives (a fake one in tests). It
// adapts to the provider: a Throttled answer halves the rate (down to an
// eighth of the configured one) and holds every call until the answer's
// Retry-After has passed, as ARM asks of its clients; each second with
// calls answered and none throttled then raises the rate by a quarter up
// to nine tenths of the rate that was throttled, and by a hundredth of the
// configured rate past it, so that it settles just under what the provider
// allows; ten seconds after the last throttling, by a quarter a second up
// to the configured rate. The driver's optional interfaces stay reachable
// through provider.As.
package ratelimit

import (
	"context"
	"errors"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/utils/clock"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// Decorate returns d with every call waiting for a token of l, timed on
// clk (nil: the wall clock). l's limit and burst are the most it allows.
func Decorate(d provider.Driver, l *rate.Limiter, clk clock.Clock) provider.Driver {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &driver{Driver: d, limiter: l, clock: clk, max: l.Limit(), burst: l.Burst()}
}

type driver struct {
	provider.Driver
	limiter *rate.Limiter
	clock   clock.Clock
	max     rate.Limit // the configured rate
	burst   int        // the configured burst

	mu        sync.Mutex
	notBefore time.Time  // no call before: the provider's last Retry-After
	changed   time.Time  // when the rate last changed
	ceiling   rate.Limit // the rate when the provider last throttled
	throttled time.Time  // when it did
}

// Unwrap returns the decorated driver.
func (d *driver) Unwrap() provider.Driver { return d.Driver }

// Limit returns the rate the driver allows now.
func (d *driver) Limit() rate.Limit { return d.limiter.Limit() }

// wait waits out the provider's last Retry-After, then takes a token,
// waiting on the clock until there is one; a context that ends first
// gives the token back and returns its error.
func (d *driver) wait(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.mu.Lock()
	hold := d.notBefore.Sub(d.clock.Now())
	d.mu.Unlock()
	if hold > 0 {
		if err := d.sleep(ctx, hold); err != nil {
			return err
		}
	}
	now := d.clock.Now()
	r := d.limiter.ReserveN(now, 1)
	if !r.OK() {
		// A configuration error, not throttling: retrying cannot help.
		return errors.New("ratelimit: a burst of 0 allows no call")
	}
	delay := r.DelayFrom(now)
	if delay <= 0 {
		return nil
	}
	if err := d.sleep(ctx, delay); err != nil {
		r.CancelAt(d.clock.Now())
		return err
	}
	return nil
}

func (d *driver) sleep(ctx context.Context, dur time.Duration) error {
	t := d.clock.NewTimer(dur)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// done adapts the rate to a call's answer.
func (d *driver) done(err error) {
	if d.max == rate.Inf {
		return
	}
	now := d.clock.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	cur := d.limiter.Limit()
	switch {
	case provider.IsThrottled(err) && now.Before(d.notBefore):
		// A call sent before the hold began: the same congestion, not
		// a new one to halve the rate for again.
	case provider.IsThrottled(err):
		d.ceiling, d.throttled = cur, now
		d.set(now, max(cur/2, d.max/8))
		if after, ok := provider.RetryAfter(err); ok && now.Add(after).After(d.notBefore) {
			d.notBefore = now.Add(after)
		}
		d.changed = now
	case err == nil && cur < d.max && now.Sub(d.changed) >= time.Second:
		// Back quickly to just under the rate that was throttled, then
		// probe above it slowly; once throttling is ten seconds past, back
		// quickly to the configured rate.
		d.changed = now
		recent := now.Sub(d.throttled) < 10*time.Second
		switch below := d.ceiling * 0.9; {
		case recent && cur < below:
			d.set(now, min(below, cur*1.25))
		case recent:
			d.set(now, min(d.max, cur+d.max/100))
		default:
			d.set(now, min(d.max, cur*1.25))
		}
	}
}

// set sets the rate, and a burst of a tenth of a second's calls at it (the
// configured burst once the rate is the configured one).
func (d *driver) set(now time.Time, r rate.Limit) {
	d.limiter.SetLimitAt(now, r)
	b := d.burst
	if r < d.max {
		b = max(1, min(d.burst, int(r/10)))
	}
	d.limiter.SetBurstAt(now, b)
}

func (d *driver) NodePoolList(ctx context.Context, c *kpool.Cluster) ([]provider.Pool, error) {
	if err := d.wait(ctx); err != nil {
		return nil, err
	}
	out, err := d.Driver.NodePoolList(ctx, c)
	d.done(err)
	return out, err
}

func (d *driver) NodePoolCreate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	if err := d.wait(ctx); err != nil {
		return nil, err
	}
	out, err := d.Driver.NodePoolCreate(ctx, c, s)
	d.done(err)
	return out, err
}

func (d *driver) NodePoolUpdate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	if err := d.wait(ctx); err != nil {
		return nil, err
	}
	out, err := d.Driver.NodePoolUpdate(ctx, c, s)
	d.done(err)
	return out, err
}

func (d *driver) NodePoolDelete(ctx context.Context, c *kpool.Cluster, providerName string) error {
	if err := d.wait(ctx); err != nil {
		return err
	}
	err := d.Driver.NodePoolDelete(ctx, c, providerName)
	d.done(err)
	return err
}

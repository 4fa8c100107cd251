// Package ratelimit is a driver decorator that holds the calls to a
// provider to a request rate: each call waits for a token of a token
// bucket first, on a clock the caller gives (a fake one in tests). The
// driver's optional interfaces stay reachable through provider.As.
package ratelimit

import (
	"context"
	"errors"

	"golang.org/x/time/rate"
	"k8s.io/utils/clock"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// Decorate returns d with every call waiting for a token of l, timed on
// clk (nil: the wall clock).
func Decorate(d provider.Driver, l *rate.Limiter, clk clock.Clock) provider.Driver {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &driver{Driver: d, limiter: l, clock: clk}
}

type driver struct {
	provider.Driver
	limiter *rate.Limiter
	clock   clock.Clock
}

// Unwrap returns the decorated driver.
func (d *driver) Unwrap() provider.Driver { return d.Driver }

// wait takes a token, waiting on the clock until there is one; a context
// that ends first gives the token back and returns its error.
func (d *driver) wait(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
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
	t := d.clock.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		r.CancelAt(d.clock.Now())
		return ctx.Err()
	}
}

func (d *driver) NodePoolList(ctx context.Context, c *kpool.Cluster) ([]provider.Pool, error) {
	if err := d.wait(ctx); err != nil {
		return nil, err
	}
	return d.Driver.NodePoolList(ctx, c)
}

func (d *driver) NodePoolCreate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	if err := d.wait(ctx); err != nil {
		return nil, err
	}
	return d.Driver.NodePoolCreate(ctx, c, s)
}

func (d *driver) NodePoolUpdate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	if err := d.wait(ctx); err != nil {
		return nil, err
	}
	return d.Driver.NodePoolUpdate(ctx, c, s)
}

func (d *driver) NodePoolDelete(ctx context.Context, c *kpool.Cluster, providerName string) error {
	if err := d.wait(ctx); err != nil {
		return err
	}
	return d.Driver.NodePoolDelete(ctx, c, providerName)
}

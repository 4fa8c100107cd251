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
//
// Budgets are the same buckets per cloud account, charged at the wire,
// which adapt the same way to the Throttled answers of the calls charged
// to them (budget.go).
package ratelimit

import (
	"context"
	"sync/atomic"

	"golang.org/x/time/rate"
	"k8s.io/utils/clock"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// Decorate returns d with every call waiting for a token of a bucket of l's
// limit and burst, timed on clk (nil: the wall clock), the most it allows;
// and each HTTP request the call sends past its first (provider.Charge at
// the wire) waiting for one more: a driver that sends three requests for
// one list takes three tokens. Writes waiting go ahead of reads, reads for
// a change ahead of a drift pass's (provider.PriorityOf).
func Decorate(d provider.Driver, l *rate.Limiter, clk clock.Clock) provider.Driver {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &driver{Driver: d, adaptive: newAdaptive(float64(l.Limit()), l.Burst(), clk)}
}

type driver struct {
	provider.Driver
	adaptive
}

// Unwrap returns the decorated driver.
func (d *driver) Unwrap() provider.Driver { return d.Driver }

// Limit returns the rate the driver allows now.
func (d *driver) Limit() rate.Limit { return rate.Limit(d.b.Limit()) }

// call waits for the call's first token, then returns ctx whose further
// requests each wait for one more.
func (d *driver) call(ctx context.Context, a provider.Access) (context.Context, error) {
	err := provider.Gates(ctx, func(g provider.Gate) error {
		if b, ok := g.(*Budget); ok {
			return b.awaitHold(ctx, a) // the account's throttling holds its calls
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := d.wait(ctx, Class(a, provider.PriorityOf(ctx))); err != nil {
		return nil, err
	}
	return provider.WithGate(ctx, &prepaid{b: d.b}), nil
}

// done adapts the rate to a call's answer: the account's budget adapts
// when the call was charged to one (the cloud throttles per account: one
// account's throttling says nothing of another's), the provider's rate
// otherwise.
func (d *driver) done(ctx context.Context, a provider.Access, err error) {
	if provider.Charged(ctx) {
		provider.Answered(ctx, a, err)
		return
	}
	d.adaptive.done(err)
}

// prepaid is the provider's bucket as a call's gate: its first request
// was paid for when the call began; each further one takes a token.
type prepaid struct {
	b    *Bucket
	used atomic.Bool
}

func (p *prepaid) Take(ctx context.Context, a provider.Access, pr provider.Priority) error {
	if !p.used.Swap(true) {
		return nil
	}
	_, err := p.b.Take(ctx, Class(a, pr))
	return err
}

func (p *prepaid) Answered(provider.Access, error) {}

func (d *driver) NodePoolList(ctx context.Context, c *kpool.Cluster) ([]provider.Pool, error) {
	cctx, err := d.call(ctx, provider.Read)
	if err != nil {
		return nil, err
	}
	out, err := d.Driver.NodePoolList(cctx, c)
	d.done(ctx, provider.Read, err)
	return out, err
}

func (d *driver) NodePoolCreate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	cctx, err := d.call(ctx, provider.Write)
	if err != nil {
		return nil, err
	}
	out, err := d.Driver.NodePoolCreate(cctx, c, s)
	d.done(ctx, provider.Write, err)
	return out, err
}

func (d *driver) NodePoolUpdate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	cctx, err := d.call(ctx, provider.Write)
	if err != nil {
		return nil, err
	}
	out, err := d.Driver.NodePoolUpdate(cctx, c, s)
	d.done(ctx, provider.Write, err)
	return out, err
}

func (d *driver) NodePoolDelete(ctx context.Context, c *kpool.Cluster, providerName string) error {
	cctx, err := d.call(ctx, provider.Write)
	if err != nil {
		return err
	}
	err = d.Driver.NodePoolDelete(cctx, c, providerName)
	d.done(ctx, provider.Write, err)
	return err
}

// Package deadline is a driver decorator that gives every call to a
// provider a deadline on a clock the caller gives (a fake one in tests): a
// call the provider has not answered by then is cancelled and fails as a
// transient error wrapping provider.ErrTimeout. Without it, an endpoint
// that accepts connections and never answers holds a controller for ever.
package deadline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// Decorate returns d with every call cut off after timeout on clk (nil:
// the wall clock).
func Decorate(d provider.Driver, timeout time.Duration, clk clock.Clock) provider.Driver {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &driver{Driver: d, timeout: timeout, clock: clk}
}

type driver struct {
	provider.Driver
	timeout time.Duration
	clock   clock.Clock
}

// Unwrap returns the decorated driver.
func (d *driver) Unwrap() provider.Driver { return d.Driver }

// errCut is the cause of a context the deadline ended.
var errCut = errors.New("deadline")

// start returns a context that ends when ctx does or the deadline passes,
// and the function that releases it and turns the call's error into a
// timeout when the deadline, not the caller, ended the call. The deadline
// stands still while a request of the call waits for its budget
// (provider.Holder).
func (d *driver) start(ctx context.Context, p kpool.PlatformType) (context.Context, func(error) error) {
	ctx, cancel := context.WithCancelCause(ctx)
	c := &call{clock: d.clock, timer: d.clock.NewTimer(d.timeout), deadline: d.clock.Now().Add(d.timeout)}
	done := make(chan struct{})
	go func() {
		select {
		case <-c.timer.C():
			cancel(errCut)
		case <-done:
		}
	}()
	return provider.WithHolder(ctx, c), func(err error) error {
		close(done)
		c.timer.Stop()
		cut := errors.Is(context.Cause(ctx), errCut)
		cancel(nil)
		if err != nil && cut {
			return &provider.Error{Kind: provider.KindTransient, Provider: p,
				Reason: fmt.Sprintf("no answer within %v", d.timeout), Err: provider.ErrTimeout}
		}
		return err
	}
}

// call is one call's deadline, held while its requests wait for a budget.
type call struct {
	clock    clock.Clock
	timer    clock.Timer
	mu       sync.Mutex
	deadline time.Time     // while running
	left     time.Duration // while held
	holds    int
}

// Hold stops the deadline's clock until the last hold is resumed.
func (c *call) Hold() func() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.holds == 0 && c.timer.Stop() {
		c.left = c.deadline.Sub(c.clock.Now())
	} else if c.holds == 0 {
		c.left = -1 // run out already
	}
	c.holds++
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.holds--; c.holds == 0 && c.left >= 0 {
				c.deadline = c.clock.Now().Add(c.left)
				c.timer.Reset(c.left)
			}
		})
	}
}

func (d *driver) NodePoolList(ctx context.Context, c *kpool.Cluster) ([]provider.Pool, error) {
	ctx, end := d.start(ctx, c.Spec.Platform.Type)
	out, err := d.Driver.NodePoolList(ctx, c)
	return out, end(err)
}

func (d *driver) NodePoolCreate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	ctx, end := d.start(ctx, c.Spec.Platform.Type)
	out, err := d.Driver.NodePoolCreate(ctx, c, s)
	return out, end(err)
}

func (d *driver) NodePoolUpdate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	ctx, end := d.start(ctx, c.Spec.Platform.Type)
	out, err := d.Driver.NodePoolUpdate(ctx, c, s)
	return out, end(err)
}

func (d *driver) NodePoolDelete(ctx context.Context, c *kpool.Cluster, providerName string) error {
	ctx, end := d.start(ctx, c.Spec.Platform.Type)
	return end(d.Driver.NodePoolDelete(ctx, c, providerName))
}

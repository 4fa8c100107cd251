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
// timeout when the deadline, not the caller, ended the call.
func (d *driver) start(ctx context.Context, p kpool.PlatformType) (context.Context, func(error) error) {
	ctx, cancel := context.WithCancelCause(ctx)
	t := d.clock.NewTimer(d.timeout)
	done := make(chan struct{})
	go func() {
		select {
		case <-t.C():
			cancel(errCut)
		case <-done:
		}
	}()
	return ctx, func(err error) error {
		close(done)
		t.Stop()
		cut := errors.Is(context.Cause(ctx), errCut)
		cancel(nil)
		if err != nil && cut {
			return &provider.Error{Kind: provider.KindTransient, Provider: p,
				Reason: fmt.Sprintf("no answer within %v", d.timeout), Err: provider.ErrTimeout}
		}
		return err
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

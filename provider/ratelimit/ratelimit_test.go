package ratelimit_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/time/rate"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/provider/ratelimit"
)

var cluster = &kpool.Cluster{ID: "c1"}

// diskTyper is an optional interface a driver may offer beyond Driver.
type diskTyper interface{ DiskType(string) string }

// diskTyped is a driver with an optional interface.
type diskTyped struct{ *fake.Driver }

func (diskTyped) DiskType(string) string { return "Managed" }

// list starts a list in the background; the channel gets its error.
func list(ctx context.Context, d provider.Driver) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := d.NodePoolList(ctx, cluster)
		done <- err
	}()
	return done
}

// returned reports whether a call has returned, once everything in the
// bubble that can run has run.
func returned(done <-chan error) (error, bool) {
	synctest.Wait()
	select {
	case err := <-done:
		return err, true
	default:
		return nil, false
	}
}

// TestWaitsOnTheClock: calls within the burst go at once; the next waits
// until the clock has moved far enough for a token, and never reaches the
// driver before.
func TestWaitsOnTheClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := clocktesting.NewFakeClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
		f := fake.New(fake.Options{Clock: clock})
		d := ratelimit.Decorate(f, rate.NewLimiter(0.5, 2), clock)
		for i := range 2 {
			if err, ok := returned(list(context.Background(), d)); !ok || err != nil {
				t.Fatalf("call %d within the burst: returned %v, %v", i, ok, err)
			}
		}
		done := list(context.Background(), d)
		for _, step := range []time.Duration{0, time.Second} {
			clock.Step(step)
			if _, ok := returned(done); ok || len(f.Calls()) != 2 {
				t.Fatalf("after %v the third call went through (%d calls)", step, len(f.Calls()))
			}
		}
		clock.Step(time.Second)
		if err, ok := returned(done); !ok || err != nil || len(f.Calls()) != 3 {
			t.Fatalf("after 2s: returned %v, %v; %d calls", ok, err, len(f.Calls()))
		}
	})
}

// TestCanceledWaitGivesBack: a call whose context ends while it waits
// returns the context's error and gives its token back.
func TestCanceledWaitGivesBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := clocktesting.NewFakeClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
		f := fake.New(fake.Options{Clock: clock})
		d := ratelimit.Decorate(f, rate.NewLimiter(1, 1), clock)
		if err, ok := returned(list(context.Background(), d)); !ok || err != nil {
			t.Fatalf("first call: %v, %v", ok, err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := list(ctx, d)
		if _, ok := returned(done); ok {
			t.Fatal("the second call did not wait")
		}
		cancel()
		if err, ok := returned(done); !ok || !errors.Is(err, context.Canceled) {
			t.Fatalf("canceled wait: %v, %v", ok, err)
		}
		// One token a second: had the canceled call kept its token, the
		// next would wait another second.
		clock.Step(time.Second)
		if err, ok := returned(list(context.Background(), d)); !ok || err != nil {
			t.Fatalf("after the canceled wait: returned %v, %v", ok, err)
		}
		if n := len(f.Calls()); n != 2 {
			t.Fatalf("%d calls reached the driver, want 2", n)
		}
	})
}

func TestNoBurstIsAnError(t *testing.T) {
	f := fake.New(fake.Options{})
	d := ratelimit.Decorate(f, rate.NewLimiter(1, 0), nil)
	_, err := d.NodePoolList(context.Background(), cluster)
	var pe *provider.Error
	if err == nil || errors.As(err, &pe) || len(f.Calls()) != 0 {
		t.Fatalf("burst 0: %v (%d calls); want a configuration error, not a provider's, and no call", err, len(f.Calls()))
	}
}

func TestOptionalInterfacesReachable(t *testing.T) {
	d := ratelimit.Decorate(diskTyped{fake.New(fake.Options{})}, rate.NewLimiter(rate.Inf, 1), nil)
	if dt, ok := provider.As[diskTyper](d); !ok || dt.DiskType("") != "Managed" {
		t.Fatal("DiskTyper not reachable through the decorator")
	}
}

// TestAdaptsToThrottling: a Throttled answer halves the rate and holds
// every call until its Retry-After has passed; a second of calls answered
// then raises the rate by a quarter, up to nine tenths of the rate that was
// throttled, and by a hundredth of the configured one past it; ten seconds
// after the throttling, by a quarter again up to the configured rate.
func TestAdaptsToThrottling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := clocktesting.NewFakeClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
		f := fake.New(fake.Options{Clock: clock})
		d := ratelimit.Decorate(f, rate.NewLimiter(100, 10), clock)
		limit := func() rate.Limit { return d.(interface{ Limit() rate.Limit }).Limit() }
		f.FailNext(fake.List, 1, &provider.Error{Kind: provider.KindThrottled, Provider: f.Capabilities().Provider, Reason: "slow down", RetryAfter: 3 * time.Second})
		if err, ok := returned(list(context.Background(), d)); !ok || !provider.IsThrottled(err) {
			t.Fatalf("first call: %v, %v; want throttled", err, ok)
		}
		if got := limit(); got != 50 {
			t.Fatalf("rate %v after a throttled answer, want 50", got)
		}
		done := list(context.Background(), d)
		clock.Step(2 * time.Second)
		if _, ok := returned(done); ok {
			t.Fatal("a call went before the provider's Retry-After had passed")
		}
		clock.Step(time.Second)
		if err, ok := returned(done); !ok || err != nil {
			t.Fatalf("after the Retry-After: %v, %v", err, ok)
		}
		want := []rate.Limit{62.5, 78.125, 90, 91, 92}
		for i, w := range want {
			if err, ok := returned(list(context.Background(), d)); !ok || err != nil {
				t.Fatal(err, ok)
			}
			// More calls within the same second change nothing.
			if err, ok := returned(list(context.Background(), d)); !ok || err != nil {
				t.Fatal(err, ok)
			}
			if got := limit(); got != w {
				t.Fatalf("second %d: rate %v, want %v", i, got, w)
			}
			clock.Step(time.Second)
		}
		// Ten seconds after the throttling: back by a quarter a second.
		for range 5 {
			if err, ok := returned(list(context.Background(), d)); !ok || err != nil {
				t.Fatal(err, ok)
			}
			clock.Step(time.Second)
		}
		if got := limit(); got != 100 {
			t.Fatalf("rate %v 13 seconds after the throttling, want the configured 100", got)
		}
	})
}

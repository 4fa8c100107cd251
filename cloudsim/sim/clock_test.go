package sim_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/kpool/kpool/cloudsim/sim"
)

func TestManualClock(t *testing.T) {
	c := sim.NewManualClock(start)
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); c.Advance(time.Second); _ = c.Now() }()
	}
	wg.Wait()
	if got := c.Now(); !got.Equal(start.Add(10 * time.Second)) {
		t.Fatalf("now %v", got)
	}
	var _ sim.Clock = sim.RealClock{}
	var _ sim.Clock = c
}

// Sleepers wake when the clock reaches their time, by Advance or Set, and
// leave when their context ends; WaitSleepers sees them come.
func TestManualClockSleep(t *testing.T) {
	c := sim.NewManualClock(start)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Sleep(ctx, 0); err != nil {
		t.Fatalf("a sleep of 0: %v", err)
	}
	woke := make(chan time.Duration, 3)
	for _, d := range []time.Duration{time.Second, 2 * time.Second, time.Hour} {
		go func() {
			if c.Sleep(ctx, d) == nil {
				woke <- d
			}
		}()
	}
	if err := c.WaitSleepers(ctx, 3); err != nil {
		t.Fatal(err)
	}
	c.Advance(999 * time.Millisecond)
	select {
	case d := <-woke:
		t.Fatalf("the %s sleeper woke early", d)
	default:
	}
	c.Advance(time.Millisecond)
	if d := <-woke; d != time.Second {
		t.Fatalf("woke %s first", d)
	}
	c.Set(start.Add(2 * time.Second))
	if d := <-woke; d != 2*time.Second {
		t.Fatalf("woke %s second", d)
	}
	// The hour sleeper leaves when its context ends.
	sctx, scancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Sleep(sctx, time.Minute) }()
	if err := c.WaitSleepers(ctx, 2); err != nil {
		t.Fatal(err)
	}
	scancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled sleep: %v", err)
	}
	c.Advance(time.Hour)
	if d := <-woke; d != time.Hour {
		t.Fatalf("woke %s last", d)
	}
	// WaitSleepers gives up with its context.
	wctx, wcancel := context.WithCancel(ctx)
	wcancel()
	if err := c.WaitSleepers(wctx, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitSleepers with nobody asleep: %v", err)
	}
}

func TestRealClockSleep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := (sim.RealClock{}).Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled sleep: %v", err)
	}
	if err := (sim.RealClock{}).Sleep(context.Background(), time.Nanosecond); err != nil {
		t.Fatal(err)
	}
}

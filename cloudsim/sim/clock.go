package sim

import (
	"context"
	"sync"
	"time"
)

// Clock is an emulator's time. The engine computes every state change
// from Now when a request arrives, and waits out latency with Sleep, so a
// test that drives a ManualClock never sleeps itself.
type Clock interface {
	Now() time.Time
	// Sleep returns once d has passed on the clock, or with ctx's error
	// when ctx ends first.
	Sleep(ctx context.Context, d time.Duration) error
}

// RealClock is the wall clock, the engine's default.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// Sleep waits d of wall time, or until ctx ends.
func (RealClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ManualClock is a clock that moves only when told to (Advance, Set).
// Sleepers wake when it reaches their deadline; WaitSleepers lets a test
// know that a request is waiting on it. It is safe for concurrent use.
type ManualClock struct {
	mu       sync.Mutex
	now      time.Time
	sleepers map[*sleeper]bool
	changed  chan struct{} // closed and replaced when sleepers come or go
}

type sleeper struct {
	until time.Time
	wake  chan struct{}
}

// NewManualClock returns a ManualClock reading start.
func NewManualClock(start time.Time) *ManualClock { return &ManualClock{now: start} }

// Now returns the clock's time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d (a negative d moves it back),
// wakes the sleepers whose time has come, and returns the new time.
func (c *ManualClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.wake()
	return c.now
}

// Set moves the clock to t and wakes the sleepers whose time has come.
func (c *ManualClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
	c.wake()
}

// Sleep returns once the clock has been moved d past its time now, or
// when ctx ends. A d of zero or less returns at once.
func (c *ManualClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	c.mu.Lock()
	c.init()
	s := &sleeper{until: c.now.Add(d), wake: make(chan struct{})}
	c.sleepers[s] = true
	c.notify()
	c.mu.Unlock()
	select {
	case <-s.wake:
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		if c.sleepers[s] {
			delete(c.sleepers, s)
			c.notify()
		}
		c.mu.Unlock()
		return ctx.Err()
	}
}

// WaitSleepers returns once at least n goroutines sleep on the clock, or
// with ctx's error when ctx ends first.
func (c *ManualClock) WaitSleepers(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		c.init()
		have, changed := len(c.sleepers), c.changed
		c.mu.Unlock()
		if have >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// wake releases the sleepers whose deadline has passed; c.mu is held.
func (c *ManualClock) wake() {
	woke := false
	for s := range c.sleepers {
		if !c.now.Before(s.until) {
			delete(c.sleepers, s)
			close(s.wake)
			woke = true
		}
	}
	if woke {
		c.notify()
	}
}

// notify tells WaitSleepers that the sleepers changed; c.mu is held.
func (c *ManualClock) notify() {
	c.init()
	close(c.changed)
	c.changed = make(chan struct{})
}

// init makes a zero ManualClock usable; c.mu is held.
func (c *ManualClock) init() {
	if c.sleepers == nil {
		c.sleepers, c.changed = map[*sleeper]bool{}, make(chan struct{})
	}
}

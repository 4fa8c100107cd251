// Package clock holds the emulators' notion of time. Package cloudsim
// re-exports it; it lives apart so that the emulator packages, which
// package cloudsim starts, can use it without an import cycle.
package clock

import (
	"sync"
	"time"
)

// Clock tells an emulator what time it is. Every state change an emulator
// makes is computed from Now when a request arrives, so a test that drives
// a Manual clock never needs to sleep.
type Clock interface {
	Now() time.Time
}

// Real is the wall clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// Manual is a clock that moves only when told to. It is safe for
// concurrent use.
type Manual struct {
	mu  sync.Mutex
	now time.Time
}

// NewManual returns a Manual clock reading start.
func NewManual(start time.Time) *Manual { return &Manual{now: start} }

// Now returns the clock's time.
func (c *Manual) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d (a negative d moves it back) and
// returns the new time.
func (c *Manual) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// Set moves the clock to t.
func (c *Manual) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

package main

import (
	"context"
	"time"
)

// clock is where the client commands take the time from: Now, against
// which tables show ages, and Tick, which blocks between two polls of
// --wait. The root command hands its clock to every client command, so a
// test runs its commands on a clock of its own (a poll it steps, an
// emulator's time it moves) without changing what any other test runs on.
// The zero clock is the wall clock, polling every pollInterval.
type clock struct {
	now  func() time.Time
	tick func(ctx context.Context) error
}

// Now is the time now.
func (c clock) Now() time.Time {
	if c.now == nil {
		return time.Now()
	}
	return c.now()
}

// Tick blocks until --wait's next poll, or until ctx ends.
func (c clock) Tick(ctx context.Context) error {
	if c.tick == nil {
		return pollTick(ctx)
	}
	return c.tick(ctx)
}

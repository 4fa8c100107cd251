package main

import (
	"context"
	"log/slog"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// settle gives back what the start alone used, once the server is ready.
// Package initialisation, the migrations and the first reads leave most of
// a fresh heap unreachable, which an idle server would otherwise keep, as
// the collector waits for the heap to double before it runs. And they touch
// pages of kpool's executable all over it (hundreds of package inits, each
// in its own part of the text, types and function tables), which would stay
// resident though most are never touched again: releaseExecutable lets the
// kernel take them back, and those still in use return on their next touch.
// Then, until ctx ends, the heap a burst of work left is given back once
// the process is quiet again (giveBackWhenQuiet).
func settle(ctx context.Context, log *slog.Logger) {
	debug.FreeOSMemory()
	released, err := releaseExecutable()
	if err != nil {
		log.Warn("start-up pages of the executable kept", "err", err)
	} else if released > 0 {
		log.Info("start-up memory released", "executable_bytes", released)
	}
	go giveBackWhenQuiet(ctx, quietPeriod, quietMinimum)
}

const (
	// quietPeriod is how often giveBackWhenQuiet looks at the heap.
	quietPeriod = 30 * time.Second
	// quietMinimum is the least surplus worth a collection to give back.
	quietMinimum = 4 << 20
)

// giveBackWhenQuiet collects and returns the heap's surplus to the system
// when the process was quiet in the last period (see quiet). Under load the collector's
// headroom (GOGC=400: up to five times the live heap) is kept, as the
// process allocates far more than it in a period; after a burst, an idle
// server goes back to its idle size instead of keeping the burst's heap,
// which no collection would shrink while it allocates little.
func giveBackWhenQuiet(ctx context.Context, every time.Duration, least uint64) {
	t := time.NewTicker(every)
	defer t.Stop()
	last, _ := heapSurplus()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		allocs, surplus := heapSurplus()
		if quiet(allocs-last, surplus, least) {
			debug.FreeOSMemory()
			allocs, _ = heapSurplus()
		}
		last = allocs
	}
}

// quiet tells whether a process that allocated allocated bytes in the last
// period is quiet enough to give back its heap's surplus: the surplus (the
// heap's objects and free pages beyond what the last collection found
// live) is at least least, and more than the process allocated.
func quiet(allocated, surplus, least uint64) bool { return surplus >= least && allocated < surplus }

// heapSurplus reads the bytes allocated since the process started, and
// the heap's memory beyond the live bytes of the last collection: garbage
// not yet collected and free pages not yet returned.
func heapSurplus() (allocs, surplus uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"}, {Name: "/memory/classes/heap/free:bytes"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	held := s[1].Value.Uint64() + s[2].Value.Uint64() + s[3].Value.Uint64()
	if live := s[4].Value.Uint64(); held > live {
		surplus = held - live
	}
	return s[0].Value.Uint64(), surplus
}

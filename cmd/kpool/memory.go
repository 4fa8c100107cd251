package main

import (
	"log/slog"
	"runtime/debug"
)

// settle gives back what the start alone used, once the server is ready.
// Package initialisation, the migrations and the first reads leave most of
// a fresh heap unreachable, which an idle server would otherwise keep, as
// the collector waits for the heap to double before it runs. And they touch
// pages of kpool's executable all over it (hundreds of package inits, each
// in its own part of the text, types and function tables), which would stay
// resident though most are never touched again: releaseExecutable lets the
// kernel take them back, and those still in use return on their next touch.
func settle(log *slog.Logger) {
	debug.FreeOSMemory()
	released, err := releaseExecutable()
	if err != nil {
		log.Warn("start-up pages of the executable kept", "err", err)
		return
	}
	if released > 0 {
		log.Info("start-up memory released", "executable_bytes", released)
	}
}

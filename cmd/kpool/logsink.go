package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// logSink buffers log lines and writes them out within logFlushDelay, so
// that a busy server makes one write for many access-log lines instead of a
// system call per request, each under the logger's lock. Warnings and errors
// are written at once (flushHandler), and Close writes the rest.
type logSink struct {
	mu      sync.Mutex
	w       *bufio.Writer
	pending bool // a flush is scheduled
}

// logFlushDelay bounds how long an info line waits in the buffer.
const logFlushDelay = 50 * time.Millisecond

func newLogSink(w io.Writer) *logSink {
	return &logSink{w: bufio.NewWriterSize(w, 64<<10)}
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.w.Write(p)
	if !s.pending && s.w.Buffered() > 0 {
		s.pending = true
		time.AfterFunc(logFlushDelay, func() { _ = s.Flush() })
	}
	return n, err
}

// Flush writes out what is buffered.
func (s *logSink) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = false
	return s.w.Flush()
}

// flushHandler flushes the sink after every record at or above warn.
type flushHandler struct {
	slog.Handler
	sink *logSink
	warn slog.Level
}

func (h flushHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= h.warn {
		if ferr := h.sink.Flush(); err == nil {
			err = ferr
		}
	}
	return err
}

func (h flushHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return flushHandler{h.Handler.WithAttrs(attrs), h.sink, h.warn}
}

func (h flushHandler) WithGroup(name string) slog.Handler {
	return flushHandler{h.Handler.WithGroup(name), h.sink, h.warn}
}

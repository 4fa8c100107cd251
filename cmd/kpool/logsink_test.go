package main

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// lockedBuffer is a bytes.Buffer the sink's timer may write to while the test
// reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestLogSink checks that warnings and errors reach the output when logged,
// and that info lines, which may wait in the buffer, are all there after a
// flush, in order.
func TestLogSink(t *testing.T) {
	var out lockedBuffer
	sink := newLogSink(&out)
	log := slog.New(flushHandler{slog.NewTextHandler(sink, nil), sink, slog.LevelWarn}).With("component", "test")
	log.Info("first")
	log.Error("boom", "err", "x")
	if s := out.String(); !strings.Contains(s, "msg=first") || !strings.Contains(s, "msg=boom") {
		t.Fatalf("after an error, the output lacks it or the line before it:\n%s", s)
	}
	log.Info("second")
	log.WithGroup("g").Info("third", "k", "v")
	if err := sink.Flush(); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if strings.Count(s, "component=test") != 4 || !strings.Contains(s, "g.k=v") ||
		strings.Index(s, "msg=second") > strings.Index(s, "msg=third") {
		t.Fatalf("after a flush, want four lines in order:\n%s", s)
	}
}

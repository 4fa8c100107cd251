package main

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/kpool/kpool/auth"
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

// TestLoggerScrubs: the process's logger, in both formats, hides a token
// whatever carries it, and exitCode's message does too.
func TestLoggerScrubs(t *testing.T) {
	secret, _ := auth.NewTokenSecret()
	for _, format := range []string{"text", "json"} {
		var out lockedBuffer
		log, sink, err := newLogger(format, &out)
		if err != nil {
			t.Fatal(err)
		}
		log.Info("request", "path", "/api/v1/clusters/"+secret, "err", errors.New("Bearer "+secret))
		if err := sink.Flush(); err != nil {
			t.Fatal(err)
		}
		if s := out.String(); strings.Contains(s, secret[6:18]) || !strings.Contains(s, "kpool_xxxxx") {
			t.Fatalf("%s: %s", format, s)
		}
	}
	var stderr strings.Builder
	if exitCode(errors.New("calling postgres://u:"+secret+"@db/x"), &stderr) != 1 || strings.Contains(stderr.String(), secret[6:18]) {
		t.Fatalf("exitCode printed %q", stderr.String())
	}
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kpool/kpool/audit"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/cloudsim"
	"github.com/kpool/kpool/cloudsim/sim"
)

// What the kpool dev tests (dev_test.go) share: running kpool dev, its
// emulators' clock, and writers that say when a line has come.

// watched is a writer that signals when what was written contains want.
type watched struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	once sync.Once
	seen chan struct{}
}

func (w *watched) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return n, err
}

func (w *watched) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// startDev runs kpool dev, its emulators on clock, until the test ends, and
// returns what it printed up to its last suggested command. tweak, if
// any, changes its flags first.
func startDev(t *testing.T, clock *sim.ManualClock, tweak ...func(*serveFlags)) string {
	t.Helper()
	printed, _ := runDev(t, clock, tweak...)
	return printed
}

// runDev is startDev that also returns stop, which ends kpool dev (and
// fails the test if it ended with an error); the test's end calls it when
// the test has not.
func runDev(t *testing.T, clock *sim.ManualClock, tweak ...func(*serveFlags)) (printed string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	emu := cloudsim.Defaults()
	emu.Clock = clock
	f := serveFlags{listen: "127.0.0.1:0", database: "sqlite:" + filepath.Join(t.TempDir(), "dev.db"), logFormat: "text",
		reconcile: true, resyncFast: 20 * time.Millisecond, resyncSlow: 5 * time.Minute, eventRetention: audit.DefaultRetention,
		driftInterval: time.Minute, callTimeout: 30 * time.Second, auth: auth.AuthHeader}
	for _, fn := range tweak {
		fn(&f)
	}
	pr, pw := io.Pipe()
	exited := make(chan error, 1)
	go func() {
		err := dev(ctx, &f, devUser, emu, pw)
		pw.CloseWithError(io.EOF)
		exited <- err
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-exited; err != nil {
				t.Errorf("kpool dev: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	var b strings.Builder
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := sc.Text()
		b.WriteString(line + "\n")
		if strings.Contains(line, "go run ./cmd/kpool events") {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	return b.String(), stop
}

// clockWaits is a clock whose --wait polls move the emulators' clock a
// minute each time, 5ms apart, so that operations end as fast as a test
// polls.
func clockWaits(emulators *sim.ManualClock) clock {
	every := pollEvery(5 * time.Millisecond)
	return clock{tick: func(ctx context.Context) error {
		emulators.Advance(time.Minute)
		return every.Tick(ctx)
	}}
}

// pollEvery is the wall clock with --wait polling every d, rather than
// every second.
func pollEvery(d time.Duration) clock {
	return clock{tick: func(ctx context.Context) error {
		tm := time.NewTimer(d)
		defer tm.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tm.C:
			return nil
		}
	}}
}

// runClock moves the emulators' clock 10 s every 20 ms until the test
// ends: for tests that watch rather than --wait.
func runClock(t *testing.T, clock *sim.ManualClock) {
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		tk := time.NewTicker(20 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				clock.Advance(10 * time.Second)
			}
		}
	}()
}

// logLines is a JSON log (--log-format json) that tests wait on: each line
// a record, and a signal on every write.
type logLines struct {
	mu      sync.Mutex
	partial []byte
	lines   []map[string]any
	wrote   chan struct{} // closed and replaced at each write
}

func newLogLines() *logLines { return &logLines{wrote: make(chan struct{})} }

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		var rec map[string]any
		if err := json.Unmarshal(l.partial[:i], &rec); err != nil {
			rec = map[string]any{"msg": "NOT JSON: " + string(l.partial[:i])}
		}
		l.lines = append(l.lines, rec)
		l.partial = l.partial[i+1:]
	}
	close(l.wrote)
	l.wrote = make(chan struct{})
	return len(p), nil
}

// matching returns the records for which match holds, and a channel
// closed at the next write.
func (l *logLines) matching(match func(map[string]any) bool) ([]map[string]any, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, r := range l.lines {
		if match(r) {
			out = append(out, r)
		}
	}
	return out, l.wrote
}

// waitFor returns once n records match, failing the test if they have
// not within a minute.
func (l *logLines) waitFor(t *testing.T, what string, n int, match func(map[string]any) bool) []map[string]any {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		got, wrote := l.matching(match)
		if len(got) >= n {
			return got
		}
		select {
		case <-wrote:
		case <-timeout:
			t.Fatalf("no %d log lines %s within a minute; the log:\n%s", n, what, l)
		}
	}
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, r := range l.lines {
		j, _ := json.Marshal(r)
		b.Write(append(j, '\n'))
	}
	return b.String()
}

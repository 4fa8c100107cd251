package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/service"
)

// Exit codes of the client commands.
const (
	exitFailed  = 1 // an error, or the pool failed while --wait watched it
	exitTimeout = 2 // --wait gave up: --timeout passed or it was interrupted
)

// exitError carries a process exit code other than 1 with its error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// pollInterval is how often --wait reads the pool's status.
const pollInterval = time.Second

// pollTick blocks for pollInterval, until --wait's next poll on the wall
// clock (see clock).
func pollTick(ctx context.Context) error {
	t := time.NewTimer(pollInterval)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// waitFlags are --wait and --timeout.
type waitFlags struct {
	wait    bool
	timeout time.Duration
}

func (w *waitFlags) register(fs *pflag.FlagSet, until string) {
	fs.BoolVar(&w.wait, "wait", false, "wait until the pool "+until+", showing its progress on stderr; exit 1 if it fails, 2 if --timeout passes first")
	fs.DurationVar(&w.timeout, "timeout", 10*time.Minute, "how long --wait waits")
}

// check refuses flags that make no sense with or without --wait.
func (w *waitFlags) check(fs *pflag.FlagSet, dryRun bool) error {
	if !w.wait {
		if fs.Changed("timeout") {
			return errors.New("--timeout is how long --wait waits: give --wait too")
		}
		return nil
	}
	if dryRun {
		return errors.New("--wait and --dry-run: a dry run changes nothing, so there is nothing to wait for")
	}
	if w.timeout <= 0 {
		return fmt.Errorf("--timeout %s: give a positive duration such as 10m", w.timeout)
	}
	return nil
}

// waiter watches one pool after a write until it is Ready at the written
// generation (or gone, after a delete), drawing a progress line on stderr.
type waiter struct {
	c        *api.Client
	pool     *kpool.NodePool // as the write returned it
	gen      int64           // the generation the write made
	deleting bool
	rollback bool // waiting for a rollback of the replacement of gen
	// rollingBack: the replacement was seen RollingBack.
	rollingBack bool
	out         io.Writer // the progress line goes here
	tty         bool      // redraw one line with \r, rather than a line per change
	start       time.Time
	last        string // the last progress shown, without the elapsed time
	width       int    // the width of the line on a tty, to blank what is left
	cols        int    // the terminal's width: the line is cut to fit it
	colour      bool   // the phase in colour: a terminal, and no NO_COLOR
	// controllers are the names of the controllers that report on the
	// pool, which the line on a terminal leaves out of the message.
	controllers []string

	// tick blocks until the next poll (the command's clock's Tick).
	tick func(context.Context) error
}

func newWaiter(cmd *cobra.Command, c *api.Client, tick func(context.Context) error, p *kpool.NodePool, deleting bool) *waiter {
	out := cmd.ErrOrStderr()
	w := &waiter{c: c, tick: tick, pool: p, gen: p.Generation, deleting: deleting, out: out, tty: isTerminal(out), start: time.Now()}
	if w.tty {
		w.cols = columns(out)
		w.colour = os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
	}
	return w
}

// columns is the width of the terminal w writes to: its size, $COLUMNS, or
// 80.
func columns(w io.Writer) int {
	if f, ok := w.(*os.File); ok {
		if n := termWidth(f); n > 0 {
			return n
		}
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 80
}

// fit cuts a line to n runes, ending it with … when cut.
func fit(s string, n int) string {
	r := []rune(s)
	if n <= 1 || len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// paint colours the phase words of a line (green Ready, red Failed and
// Degraded, yellow the rest) with ANSI codes.
func paint(s string) string {
	for word, code := range map[string]string{": Ready": "32", ": Failed": "31", ": Degraded": "31", ": Provisioning": "33",
		": Updating": "33", ": Pending": "33", ": Deleting": "33", ": Done": "32", ": Stopped": "31", ": RolledBack": "31"} {
		if i := strings.Index(s, word); i >= 0 {
			return s[:i+2] + "\x1b[" + code + "m" + word[2:] + "\x1b[0m" + s[i+len(word):]
		}
	}
	return s
}

// isTerminal reports whether v (a command's stdin or stdout) is a
// terminal, or says it is one (a test's).
func isTerminal(v any) bool {
	if t, ok := v.(interface{ IsTerminal() bool }); ok {
		return t.IsTerminal()
	}
	f, ok := v.(*os.File)
	return ok && isTTY(f)
}

// run polls until the pool is done. It returns the pool as it last read it
// (nil once deleted), or an exitError saying why it stopped early.
func (w *waiter) run(ctx context.Context, timeout time.Duration) (*kpool.NodePool, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var lastErr error
	for {
		doc, err := w.c.NodePoolStatus(ctx, w.pool.ID)
		switch {
		case err == nil:
			lastErr = nil
			done, ferr := w.judge(doc)
			if ferr != nil {
				w.finish()
				return nil, &exitError{code: exitFailed, err: ferr}
			}
			if done {
				w.finish()
				p, err := w.c.NodePool(ctx, w.pool.ID)
				if w.deleting && errCodeOf(err) == kpool.CodeNotFound {
					return nil, nil // deleted between the two reads
				}
				return p, err
			}
		case errCodeOf(err) == kpool.CodeNotFound:
			w.finish()
			if w.deleting {
				return nil, nil
			}
			return nil, &exitError{code: exitFailed, err: fmt.Errorf("nodepool %s was deleted while waiting for it", w.pool.ID)}
		case ctx.Err() != nil:
			// The deadline or an interrupt cut the poll short: the loop's
			// check below says which.
		case transient(err):
			lastErr = err
			head, _ := splitLine(w.last)
			w.show(fmt.Sprintf("%s  (cannot read its status: %v)", head, err))
		default:
			w.finish()
			return nil, err
		}
		if err := w.tick(ctx); err != nil {
			w.finish()
			return nil, &exitError{code: exitTimeout, err: w.stopped(errors.Is(err, context.DeadlineExceeded), timeout, lastErr)}
		}
	}
}

// judge shows the pool's progress and says whether the wait is over; an
// error means the pool failed.
func (w *waiter) judge(doc *service.StatusDocument) (bool, error) {
	st := doc.Status
	if rp := st.Replacement; rp != nil && rp.Generation == w.gen && !w.deleting {
		return w.judgeReplacement(rp)
	}
	meta := nodeCounts(doc.ControllerStatus)
	w.controllers = w.controllers[:0]
	for _, cs := range doc.ControllerStatus {
		w.controllers = append(w.controllers, cs.ControllerName)
	}
	line := fmt.Sprintf("nodepool %s: %s", w.pool.Name, st.Phase)
	if !w.deleting {
		desired := w.pool.Spec.Count()
		if meta.desired != nil {
			desired = *meta.desired
		}
		ready := "?"
		if meta.active != nil {
			ready = fmt.Sprint(*meta.active)
		}
		line += fmt.Sprintf("  %s/%d nodes ready", ready, desired)
	}
	if meta.lastError != "" {
		line += "  (last error: " + oneLine(meta.lastError) + ")"
	} else if st.Phase != kpool.PhaseReady && st.Message != "" {
		line += "  (" + oneLine(st.Message) + ")"
	}
	w.show(line)
	for _, cs := range doc.ControllerStatus {
		if msg, ok := cs.ClusterUnreachable(); ok {
			// Nothing moves the pool until someone makes its cluster
			// reachable: a credential, an endpoint, the cluster itself.
			return false, fmt.Errorf("nodepool %s (%s) waits for its cluster: %s; not waiting for it (kpool cluster get %s says when kpool reaches it again)",
				w.pool.Name, w.pool.ID, msg, w.pool.ClusterID)
		}
	}

	switch {
	case w.deleting:
		return false, nil // done when the record is gone
	case st.Phase == kpool.PhaseFailed:
		return false, w.failure(doc, meta)
	case st.Phase == kpool.PhaseReady && st.ObservedGeneration >= w.gen:
		return true, nil
	case st.Phase == kpool.PhaseDeleting:
		return false, fmt.Errorf("nodepool %s (%s) is being deleted: it will not become Ready", w.pool.Name, w.pool.ID)
	case st.NoController():
		// Nothing in this kpool will move the pool: waiting would be for
		// ever unless an external controller reports.
		return false, fmt.Errorf("nodepool %s (%s) stays Pending: %s; not waiting for it (kpool nodepool status %s shows when a controller reports)",
			w.pool.Name, w.pool.ID, st.Message, w.pool.ID)
	}
	return false, nil
}

// failure is the error of a pool that failed: the status message and each
// controller's last error.
func (w *waiter) failure(doc *service.StatusDocument, meta counts) error {
	var b strings.Builder
	fmt.Fprintf(&b, "nodepool %s (%s) failed at generation %d: %s", w.pool.Name, w.pool.ID, doc.Generation, doc.Status.Message)
	for _, cs := range doc.ControllerStatus {
		if e := cs.Meta().LastError; e != "" {
			fmt.Fprintf(&b, "\n  %s: %s", cs.ControllerName, e)
		}
	}
	return errors.New(b.String())
}

// counts are the node counts and last error the controllers report.
type counts struct {
	active, desired *int
	lastError       string
}

// nodeCounts reads active_nodes, desired_nodes and last_error from the first
// controller (by name) that reports them: several controllers on one pool
// see the same nodes, so their counts are not added up.
func nodeCounts(reports []kpool.ControllerStatus) counts {
	sorted := append([]kpool.ControllerStatus(nil), reports...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ControllerName < sorted[j].ControllerName })
	var c counts
	for _, r := range sorted {
		m := r.Meta()
		if c.active == nil && m.ActiveNodes != nil {
			c.active = m.ActiveNodes
		}
		if c.desired == nil && m.DesiredNodes != nil {
			c.desired = m.DesiredNodes
		}
		if c.lastError == "" && m.LastError != "" {
			c.lastError = r.ControllerName + ": " + m.LastError
		}
	}
	return c
}

// show draws the progress line with the time elapsed: redrawn in place on a
// terminal, and otherwise written as a new line when it changes.
func (w *waiter) show(line string) {
	if w.tty {
		// One line, redrawn in place: cut to the terminal's width (less
		// one, so it never wraps), the rest of the last one blanked. The
		// elapsed time comes before the message, so that it always shows.
		s := fit(w.ttyLine(line), w.cols-1)
		n := len([]rune(s))
		pad := ""
		if w.width > n {
			pad = strings.Repeat(" ", w.width-n)
		}
		if w.colour {
			s = paint(s)
		}
		fmt.Fprintf(w.out, "\r%s%s", s, pad)
		w.width = n
	} else if line != w.last {
		fmt.Fprintf(w.out, "%s  %s\n", line, round(time.Since(w.start)))
	}
	w.last = line
}

// finish ends the redrawn line on a terminal.
func (w *waiter) finish() {
	if w.tty && w.width > 0 {
		fmt.Fprintln(w.out)
		w.width = 0
	}
}

func round(d time.Duration) time.Duration { return d.Round(time.Second) }

// transient reports whether a failed read of the status is worth repeating:
// the server could not be reached or was briefly unable to answer.
func transient(err error) bool {
	var e *kpool.Error
	if !errors.As(err, &e) {
		return true // a network error
	}
	return e.Code == kpool.CodeUnavailable || e.Code == kpool.CodeInternal
}

func errCodeOf(err error) string {
	var e *kpool.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// waitAndPrint waits for pool p after a write, when --wait was given, and
// prints it as it is at the end (or as the write returned it without --wait).
func (f *clientFlags) waitAndPrint(cmd *cobra.Command, c *api.Client, w waitFlags, p *kpool.NodePool) error {
	if w.wait {
		final, err := newWaiter(cmd, c, f.clock.Tick, p, false).run(cmd.Context(), w.timeout)
		if err != nil {
			return err
		}
		p = final
	}
	return f.print(cmd, p, f.pools(cmd, p))
}

package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// --wait's line on a terminal: the phase, the counts, the time elapsed and
// the start of the message, in that order, so that what changes shows at
// 80 columns; and what it says when it stops before the pool is done.

// splitLine splits a progress line into its head (the pool, phase and
// counts) and its message (what the head's "  (…)" holds, if anything).
func splitLine(line string) (head, msg string) {
	head, msg, ok := strings.Cut(line, "  (")
	if !ok {
		return line, ""
	}
	return head, strings.TrimSuffix(msg, ")")
}

// ttyLine is line as a terminal shows it: head, elapsed time, then the
// message without its boilerplate (see brief). The caller cuts it to fit.
func (w *waiter) ttyLine(line string) string {
	head, msg := splitLine(line)
	s := fmt.Sprintf("%s  %s", head, round(time.Since(w.start)))
	if m := w.brief(msg); m != "" {
		s += "  " + m
	}
	return s
}

var (
	waitingFor = regexp.MustCompile(`^waiting for generation \d+: `)
	deletedBy  = "waiting for the pool to be deleted by "
	lastError  = "last error: "
)

// brief is a status message without what a person does not need at a
// glance: "waiting for generation N: ", and the names of the controllers
// ("aks-nodepool-controller (at generation 1: Creating at azure)" is
// "Creating at azure").
func (w *waiter) brief(msg string) string {
	prefix := ""
	if rest, ok := strings.CutPrefix(msg, lastError); ok {
		prefix, msg = "error: ", rest
	}
	msg = waitingFor.ReplaceAllString(msg, "")
	msg = strings.TrimPrefix(msg, deletedBy)
	for _, c := range w.controllers {
		if c == "" {
			continue
		}
		q := regexp.QuoteMeta(c)
		msg = regexp.MustCompile(q+` \(at generation \d+: (.*?)\)(; |$)`).ReplaceAllString(msg, "$1$2")
		msg = regexp.MustCompile(q+` \(at generation (\d+)\)`).ReplaceAllString(msg, "at generation $1")
		msg = regexp.MustCompile(`(^|; )`+q+`(: |;|$)`).ReplaceAllString(msg, "$1")
	}
	msg = strings.Trim(strings.TrimSpace(msg), ";")
	if msg == "" {
		return ""
	}
	return prefix + strings.TrimSpace(msg)
}

// stopped is the error of a wait that ended before the pool was done:
// --timeout passed (deadline) or it was interrupted. The change goes on at
// the server; it says how to follow it, and what was last seen.
func (w *waiter) stopped(deadline bool, timeout time.Duration, lastErr error) error {
	why := fmt.Sprintf("Stopped waiting after %s", round(time.Since(w.start)))
	if deadline {
		why = fmt.Sprintf("Not done within --timeout %s", timeout)
	}
	msg := fmt.Sprintf("%s; the change goes on at the server. Follow it with: %s", why, w.followCommand())
	if w.last != "" {
		msg += "\n  last seen: " + strings.TrimPrefix(w.last, "nodepool "+w.pool.Name+": ")
	}
	if lastErr != nil {
		msg += fmt.Sprintf("\n  last error reading it: %v", lastErr)
	}
	return errors.New(msg)
}

// followCommand is the command that follows the pool after a wait stopped:
// kpool nodepool get NAME --cluster CLUSTER -w, by names when they can be
// read (the pool's ID otherwise).
func (w *waiter) followCommand() string {
	if w.pool.Name == "" || w.pool.ClusterID == "" {
		return "kpool nodepool get " + w.pool.ID + " -w"
	}
	cluster := w.pool.ClusterID
	if w.c != nil {
		// The command's context is done by now (an interrupt): a short
		// one of its own.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		cluster = clusterName(ctx, w.c, cluster)
	}
	return fmt.Sprintf("kpool nodepool get %s --cluster %s -w", w.pool.Name, cluster)
}

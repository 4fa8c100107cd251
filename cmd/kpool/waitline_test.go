package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
)

// TestWaitLineAt80: on an 80-column terminal the redrawn line keeps the
// phase, the counts, the time elapsed and the start of what the message
// says, without the controllers' names and "waiting for generation N".
func TestWaitLineAt80(t *testing.T) {
	t.Parallel()
	const aks = "aks-nodepool-controller@kpool.example"
	tests := []struct {
		name, line  string
		controllers []string
		want        []string // in this order
		exact       string   // the whole line, when given
	}{
		{"creating at azure", "nodepool tmuxp: Provisioning  0/3 nodes ready  (waiting for generation 1: " + aks + " (at generation 0: Creating at azure))",
			[]string{aks}, []string{"nodepool tmuxp: Provisioning", "0/3 nodes ready", "12s", "Creating at azure"},
			"nodepool tmuxp: Provisioning  0/3 nodes ready  12s  Creating at azure"},
		{"a long message is cut at its end", "nodepool web: Updating  2/5 nodes ready  (waiting for generation 4: " + aks +
			" (at generation 3: Scaling the agent pool web from 2 to 5 nodes in resource group rg-production-westeurope-1); other-controller: not ready yet)",
			[]string{aks, "other-controller"}, []string{"Updating", "2/5 nodes ready", "12s", "Scaling the agent pool web"}, ""},
		{"a controller behind with nothing to say", "nodepool web: Updating  3/3 nodes ready  (waiting for generation 2: gcp-nodepool-controller (at generation 1))",
			[]string{"gcp-nodepool-controller"}, nil, "nodepool web: Updating  3/3 nodes ready  12s  at generation 1"},
		{"last error", "nodepool web: Updating  3/3 nodes ready  (last error: gcp-nodepool-controller: quota exceeded)",
			[]string{"gcp-nodepool-controller"}, nil, "nodepool web: Updating  3/3 nodes ready  12s  error: quota exceeded"},
		{"deleting: the phase says it all", "nodepool web: Deleting  (waiting for the pool to be deleted by gcp-nodepool-controller)",
			[]string{"gcp-nodepool-controller"}, nil, "nodepool web: Deleting  12s"},
		{"no message", "nodepool web: Ready  3/3 nodes ready", nil, nil, "nodepool web: Ready  3/3 nodes ready  12s"},
		{"a replacement's line, cut before", "nodepool web: Draining  old 3, new 3 ready  (PodDisruptionBudget shop/a-very-long-budget-name-that…",
			nil, []string{"Draining", "old 3, new 3 ready", "12s", "PodDisruptionBudget shop/"}, ""},
		{"a long name: still 79", "nodepool " + strings.Repeat("n", 70) + ": Provisioning  0/3 nodes ready  (waiting for generation 1: x: Creating)",
			[]string{"x"}, []string{"nodepool nnn"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			w := &waiter{out: &out, tty: true, cols: 80, start: time.Now().Add(-12 * time.Second), controllers: tt.controllers}
			w.show(tt.line)
			got := strings.TrimRight(strings.TrimPrefix(out.String(), "\r"), " ")
			if n := len([]rune(got)); n > 79 {
				t.Errorf("%d runes, over 79: %q", n, got)
			}
			if tt.exact != "" && got != tt.exact {
				t.Errorf("line %q, want %q", got, tt.exact)
			}
			rest := got
			for _, part := range tt.want {
				i := strings.Index(rest, part)
				if i < 0 {
					t.Fatalf("no %q (in order) in %q", part, got)
				}
				rest = rest[i+len(part):]
			}
			if strings.Contains(got, "waiting for generation") || (len(tt.controllers) > 0 && strings.Contains(got, tt.controllers[0])) {
				t.Errorf("boilerplate left in %q", got)
			}
		})
	}
}

// TestWaitStopped: a wait that stops early says the change goes on at the
// server and how to follow it, by names; an interrupt exits 2.
func TestWaitStopped(t *testing.T) {
	t.Parallel()
	pool := &kpool.NodePool{ID: "0b1f4c2e-0000-4000-8000-000000000001", Name: "web", ClusterID: "0b1f4c2e-0000-4000-8000-0000000000c1"}
	tests := []struct {
		name     string
		pool     *kpool.NodePool
		deadline bool
		lastErr  error
		want     string
	}{
		{"interrupt", pool, false, nil, "Stopped waiting after 12s; the change goes on at the server. Follow it with: kpool nodepool get web --cluster " +
			pool.ClusterID + " -w\n  last seen: Provisioning  0/3 nodes ready"},
		{"--timeout", pool, true, errors.New("connection refused"), "Not done within --timeout 10m0s; the change goes on at the server. " +
			"Follow it with: kpool nodepool get web --cluster " + pool.ClusterID + " -w\n  last seen: Provisioning  0/3 nodes ready\n  last error reading it: connection refused"},
		{"no name", &kpool.NodePool{ID: pool.ID}, false, nil, "Stopped waiting after 12s; the change goes on at the server. Follow it with: kpool nodepool get " +
			pool.ID + " -w\n  last seen: nodepool web: Provisioning  0/3 nodes ready"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &waiter{pool: tt.pool, start: time.Now().Add(-12 * time.Second), last: "nodepool web: Provisioning  0/3 nodes ready"}
			if got := w.stopped(tt.deadline, 10*time.Minute, tt.lastErr).Error(); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}

	// The command: Ctrl-C (its context cancelled) at the first poll.
	srv := newServer(t)
	cluster := drivenCluster(t, srv, "gke")
	createPool(t, srv, "web", cluster, "--machine-type", "e2-small")
	interrupted := clock{tick: func(context.Context) error { return context.Canceled }}
	_, _, err := executeOn(interrupted, "", "nodepool", "scale", "web", "--cluster", "gke", "--count", "2", "--wait", "--server", srv, "--user", testUser)
	var errOut bytes.Buffer
	if code := exitCode(err, &errOut); code != exitTimeout ||
		!strings.Contains(errOut.String(), "Error: Stopped waiting after 0s; the change goes on at the server. Follow it with: kpool nodepool get web --cluster gke -w") {
		t.Errorf("exit %d: %s", code, errOut.String())
	}
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
)

// TestDevCreateWait is README's first two steps: kpool dev, then the
// nodepool create --wait it suggests, which must end with the pool Ready
// on the AKS emulator.
func TestDevCreateWait(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	f := serveFlags{listen: "127.0.0.1:0", database: "sqlite:" + filepath.Join(t.TempDir(), "dev.db"), logFormat: "text",
		reconcile: true, resyncFast: 2 * time.Second, resyncSlow: 5 * time.Minute}
	pr, pw := io.Pipe()
	exited := make(chan error, 1)
	go func() {
		err := dev(ctx, &f, devUser, pw)
		pw.CloseWithError(io.EOF)
		exited <- err
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-exited; err != nil {
			t.Errorf("kpool dev: %v", err)
		}
	})

	// Read what dev prints up to its suggested commands.
	var printed strings.Builder
	var try string
	sc := bufio.NewScanner(pr)
	for try == "" && sc.Scan() {
		line := sc.Text()
		printed.WriteString(line + "\n")
		if strings.Contains(line, "nodepool create") {
			try = strings.TrimSpace(line)
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if try == "" {
		t.Fatalf("kpool dev printed no nodepool create to try:\n%s", printed.String())
	}
	m := regexp.MustCompile(`export KPOOL_SERVER=(\S+) KPOOL_USER=(\S+)`).FindStringSubmatch(printed.String())
	if m == nil || m[2] != devUser {
		t.Fatalf("kpool dev printed no server and user:\n%s", printed.String())
	}
	args, ok := strings.CutPrefix(try, "go run ./cmd/kpool ")
	if !ok || !strings.Contains(args, "--wait") {
		t.Fatalf("suggested command %q", try)
	}

	out, stderr, err := execute("", append(strings.Fields(args), "--server", m[1], "--user", m[2], "--timeout", "2m", "-o", "json")...)
	if err != nil {
		t.Fatalf("%s: %v\n%s", try, err, stderr)
	}
	if !strings.Contains(stderr, "nodepool web: Provisioning") || !strings.Contains(stderr, "nodepool web: Ready  3/3 nodes ready") {
		t.Errorf("progress:\n%s", stderr)
	}
	var p kpool.NodePool
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	if p.Status.Phase != kpool.PhaseReady || p.Status.ObservedGeneration != p.Generation {
		t.Errorf("pool after --wait: %+v", p.Status)
	}
	// The demo cluster is visible to its owner.
	list, err := api.NewClient(m[1], m[2]).Clusters(ctx, kpool.ListOptions{})
	if err != nil || len(list.Clusters) != 1 || list.Clusters[0].ID != p.ClusterID {
		t.Errorf("the demo clusters: %+v, %v", list, err)
	}
}

package main

import (
	"bufio"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/cloudsim/sim"
)

// TestWatch: nodepool get -w prints a line each time the pool changes, as
// the server's live feed says (no polling), and ends when it is deleted;
// nodepool list -w prints the changed pools' lines.
func TestWatch(t *testing.T) {
	clock := sim.NewManualClock(time.Now())
	printed := startDev(t, clock)
	runClock(t, clock)
	m := regexp.MustCompile(`export KPOOL_SERVER=(\S+) KPOOL_TOKEN=(\S+)`).FindStringSubmatch(printed)
	aks := regexp.MustCompile(`demo-aks\s+(\S+)`).FindStringSubmatch(printed)
	server, token := m[1], m[2]
	c := api.NewClient(server, "")
	c.Token = token
	watch := func(args ...string) (*bufio.Scanner, chan error, context.CancelFunc) {
		pr, pw := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			root := newRoot()
			root.SetOut(pw)
			root.SetErr(io.Discard)
			root.SetArgs(append(args, "--server", server, "--token", token))
			done <- root.ExecuteContext(ctx)
			pw.Close()
		}()
		return bufio.NewScanner(pr), done, cancel
	}
	until := func(sc *bufio.Scanner, want string) string {
		t.Helper()
		for sc.Scan() {
			if strings.Contains(sc.Text(), want) {
				return sc.Text()
			}
		}
		t.Fatalf("the watch ended before a line with %q (%v)", want, sc.Err())
		return ""
	}

	// The list's header comes once its stream is open: what happens
	// after it is seen.
	list, listDone, stopList := watch("nodepool", "list", "-w", "--cluster", "demo-aks")
	until(list, "PHASE")
	// -l keeps the pools it matches, with the header of -o custom-columns
	// once.
	labelled, labelledDone, stopLabelled := watch("nodepool", "list", "-w", "-l", "team=web", "-o", "custom-columns=NAME:.name,TEAM:.spec.labels.team")
	defer stopLabelled()
	until(labelled, "TEAM")
	p, err := c.CreateNodePool(context.Background(), api.NodePoolBody{Name: new("watched"), ClusterID: &aks[1],
		Spec: []byte(`{"platform":{"azure":{"vmSize":"Standard_D4s_v5"}},"nodeCount":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	if line := until(list, "Ready"); !strings.HasPrefix(line, "watched ") || !strings.Contains(line, " demo-aks ") {
		t.Fatalf("list -w: %q", line)
	}
	if _, err := c.CreateNodePool(context.Background(), api.NodePoolBody{Name: new("webbed"), ClusterID: &aks[1],
		Spec: []byte(`{"platform":{"azure":{"vmSize":"Standard_D4s_v5"}},"nodeCount":1,"labels":{"team":"web"}}`)}); err != nil {
		t.Fatal(err)
	}
	// The first line after the header is webbed's: watched, made first,
	// is not matched.
	if labelled.Scan(); strings.Fields(labelled.Text())[0] != "webbed" || strings.Fields(labelled.Text())[1] != "web" {
		t.Fatalf("list -w -l team=web: %q", labelled.Text())
	}
	stopLabelled()
	for labelled.Scan() {
		if strings.Contains(labelled.Text(), "watched") || strings.Contains(labelled.Text(), "TEAM") {
			t.Errorf("list -w -l team=web printed %q", labelled.Text())
		}
	}
	if err := <-labelledDone; err != nil && err != context.Canceled {
		t.Fatalf("list -w -l: %v", err)
	}
	get, getDone, stopGet := watch("nodepool", "get", "watched", "-w")
	defer stopGet()
	until(get, "Ready")
	if _, _, err := c.DeleteNodePool(context.Background(), p.ID); err != nil {
		t.Fatal(err)
	}
	if line := until(get, "DELETED"); line != "watched   DELETED" {
		t.Errorf("get -w of a pool deleted: %q", line)
	}
	if err := <-getDone; err != nil {
		t.Fatalf("get -w after the delete: %v", err)
	}
	until(list, "DELETED")
	stopList()
	for list.Scan() { // drain what is left
	}
	if err := <-listDone; err != nil && err != context.Canceled {
		t.Fatalf("list -w: %v", err)
	}
}

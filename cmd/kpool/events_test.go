package main

import (
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
)

// TestEvents reads the audit trail of a cluster's life from the command
// line: as a table, as JSON, filtered and paged.
func TestEvents(t *testing.T) {
	srv := newServer(t)
	cluster := createCluster(t, srv, "prod", kpool.PlatformGCP)
	p := createPool(t, srv, "web", cluster, "--machine-type", "e2-standard-4", "--count", "2")
	mustRun(t, srv, "nodepool", "scale", p.ID, "--count", "4")

	out := mustRun(t, srv, "events", "--cluster", cluster)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "TIME") {
		t.Fatalf("events table:\n%s", out)
	}
	for i, want := range []string{"nodepool.updated", "nodepool.created", "cluster.created"} {
		if !strings.Contains(lines[i+1], want) || !strings.Contains(lines[i+1], testUser) {
			t.Errorf("line %d: %q, want %s by %s", i+1, lines[i+1], want, testUser)
		}
	}
	if !strings.Contains(lines[1], "1→2") || !strings.Contains(lines[1], "spec.nodeCount") {
		t.Errorf("the scale reads %q: want generation 1→2 and spec.nodeCount", lines[1])
	}

	l := decode[api.EventList](t, srv, "events", "--pool", p.ID, "--type", "nodepool.updated")
	if len(l.Events) != 1 || l.Events[0].RequestID == "" || l.Events[0].Generation != 2 {
		t.Errorf("filtered events: %+v", l.Events)
	}
	all := decode[api.EventList](t, srv, "events", "--cluster", cluster, "--limit", "1", "--all")
	if len(all.Events) != 3 || all.Next != "" {
		t.Errorf("--all over pages of one: %d events, next %q", len(all.Events), all.Next)
	}
	// A cluster may be named by its name too; an unknown one is not found.
	cl := decode[kpool.Cluster](t, srv, "cluster", "get", cluster)
	byName := decode[api.EventList](t, srv, "events", "--cluster", cl.Name, "--limit", "1", "--all")
	if len(byName.Events) != 3 {
		t.Errorf("events --cluster %s (by name): %d events", cl.Name, len(byName.Events))
	}
	if _, err := run(srv, "", "events", "--cluster", "no-such-cluster"); kpool.ErrorCode(err) != kpool.CodeNotFound || !strings.Contains(err.Error(), `No cluster named "no-such-cluster"`) {
		t.Errorf("an unknown cluster name for --cluster: %v", err)
	}
}

package main

import (
	"slices"
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
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "AGE") {
		t.Fatalf("events table:\n%s", out)
	}
	for i, want := range [][]string{{"updated", "pool", "web"}, {"created", "pool", "web"}, {"created", "cluster", "prod"}} {
		if got := strings.Fields(lines[i+1]); len(got) < 5 || !slices.Equal(got[1:4], want) || got[4] != testUser {
			t.Errorf("line %d: %q, want %s by %s", i+1, lines[i+1], want, testUser)
		}
	}
	if !strings.Contains(lines[1], "spec.nodeCount") {
		t.Errorf("the scale reads %q: want spec.nodeCount", lines[1])
	}
	wide := strings.Split(strings.TrimSpace(mustRun(t, srv, "events", "--cluster", cluster, "-o", "wide")), "\n")
	if !strings.HasPrefix(wide[0], "TIME") || !strings.Contains(wide[1], "nodepool.updated") || !strings.Contains(wide[1], "1→2") ||
		!strings.Contains(wide[1], p.ID) || !strings.Contains(wide[1], "prod") {
		t.Errorf("events -o wide: want the type, generations 1→2, the pool's ID and the cluster's name:\n%s", strings.Join(wide, "\n"))
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

func TestStatusSummary(t *testing.T) {
	tests := []struct{ in, want string }{
		{"NodeLabels=True (LabelsPresent), Ready=False (Creating), Progressing=True (Creating), Degraded=False, Drifted=False, Supported=True; Ready: creating web at gcp",
			"Creating: creating web at gcp"},
		{"Ready=True (Ready), Progressing=False, Degraded=False, Drifted=False; nodes 3/3", "Ready, nodes 3/3"},
		{"Ready=True, Drifted=True (ChangedAtProvider), Degraded=False; Drifted: count 6, want 3; nodes 6/3",
			"Drifted ChangedAtProvider, nodes 6/3: count 6, want 3"},
		{"Ready=False, NodesCurrent=False (Outdated), Degraded=True (Quota)", "Not ready, NodesCurrent=False (Outdated), Degraded Quota"},
		{"NodesWatched=True (Watching)", "healthy"},
	}
	for _, tt := range tests {
		if got := statusSummary(tt.in); got != tt.want {
			t.Errorf("statusSummary(%q)\n = %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

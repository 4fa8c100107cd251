package api

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/store/testdb"
)

// events reads a page of the audit trail as email.
func (a *testAPI) events(email, query string) EventList {
	a.t.Helper()
	r := a.as(email, "GET", "/api/v1/events"+query, "")
	want(a.t, r, http.StatusOK)
	var l EventList
	r.json(a.t, &l)
	return l
}

// TestAuditTrail makes every kind of write, each in a request of its own id,
// and reads each back from the trail: its actor, request, generations and
// what changed. Writes that store nothing (a dry run, a refused update)
// record nothing.
func TestAuditTrail(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *testAPI) {
		rid := func(s string) string { return "X-Request-ID: " + s }
		r := a.as(user, "POST", "/api/v1/clusters", `{"name":"prod","spec":`+gcpCluster+`}`, rid("req-cluster-create"))
		want(t, r, http.StatusCreated)
		var c kpool.Cluster
		r.json(t, &c)
		want(t, a.as(user, "PATCH", "/api/v1/clusters/"+c.ID, `{"spec":{"importPools":true}}`, rid("req-cluster-patch")), http.StatusOK)
		r = a.as(user, "POST", "/api/v1/nodepools", fmt.Sprintf(`{"name":"web","cluster_id":%q,"spec":%s}`, c.ID, gcpPool), rid("req-pool-create"))
		want(t, r, http.StatusCreated)
		var p kpool.NodePool
		r.json(t, &p)
		want(t, a.as(user, "PATCH", "/api/v1/nodepools/"+p.ID, `{"spec":{"nodeCount":5,"labels":{"team":"web"}}}`, rid("req-pool-patch")), http.StatusOK)
		// Neither of these stores anything, so neither is recorded.
		want(t, a.as(user, "PATCH", "/api/v1/nodepools/"+p.ID+"?dry_run=true", `{"spec":{"nodeCount":7}}`, rid("req-dry-run")), http.StatusOK)
		want(t, a.as(user, "PATCH", "/api/v1/nodepools/"+p.ID, `{"spec":{"nodeCount":-1}}`, rid("req-refused")), http.StatusBadRequest)
		want(t, a.as(controller, "PUT", "/api/v1/nodepools/"+p.ID+"/status",
			`{"controller_name":"gcp-nodepool-controller","observed_generation":2,"conditions":[{"type":"Ready","status":"True","reason":"NodesReady"}]}`,
			rid("req-report")), http.StatusOK)
		want(t, a.as(admin, "DELETE", "/api/v1/clusters/"+c.ID+"?force=true", "", rid("req-force-delete")), http.StatusAccepted)

		l := a.events(user, "?cluster_id="+c.ID)
		type row struct {
			typ, object, actor, request string
			before, after               int64
			detail                      string
		}
		wantRows := []row{ // newest first
			{kpool.EventClusterDeleting, c.ID, admin, "req-force-delete", 2, 2, "force: its node pools are deleted with it"},
			{kpool.EventNodePoolDeleting, p.ID, admin, "req-force-delete", 2, 2, "with its cluster (force)"},
			{kpool.EventNodePoolStatus, p.ID, controller, "req-report", 2, 2, "gcp-nodepool-controller: Ready=True (NodesReady)"},
			{kpool.EventNodePoolUpdated, p.ID, user, "req-pool-patch", 1, 2, "spec.labels, spec.nodeCount"},
			{kpool.EventNodePoolCreated, p.ID, user, "req-pool-create", 0, 1, ""},
			{kpool.EventClusterUpdated, c.ID, user, "req-cluster-patch", 1, 2, "spec.importPools"},
			{kpool.EventClusterCreated, c.ID, user, "req-cluster-create", 0, 1, ""},
		}
		if len(l.Events) != len(wantRows) {
			t.Fatalf("%d events, want %d: %+v", len(l.Events), len(wantRows), l.Events)
		}
		for i, w := range wantRows {
			e := l.Events[i]
			got := row{e.Type, e.ObjectID, e.Actor, e.RequestID, e.GenerationBefore, e.Generation, e.Detail}
			if got != w {
				t.Errorf("event %d: %+v, want %+v", i, got, w)
			}
			if e.ClusterID != c.ID || e.Owner != user || e.CreatedAt.IsZero() {
				t.Errorf("event %d: cluster %s owner %s at %v", i, e.ClusterID, e.Owner, e.CreatedAt)
			}
			if i > 0 && e.ID >= l.Events[i-1].ID {
				t.Errorf("event %d: id %d not below %d: not newest first", i, e.ID, l.Events[i-1].ID)
			}
		}

		// Filters: one pool, one kind, one type, one actor.
		for q, n := range map[string]int{
			"?nodepool_id=" + p.ID:                             4,
			"?cluster_id=" + c.ID + "&type=cluster.":           3,
			"?cluster_id=" + c.ID + "&type=nodepool.status":    1,
			"?cluster_id=" + c.ID + "&actor=ADMIN@example.com": 2,
		} {
			if got := len(a.events(user, q).Events); got != n {
				t.Errorf("%s: %d events, want %d", q, got, n)
			}
		}
	})
}

// TestEventsPaging pages through the trail two at a time: every event once,
// newest first, and the last page has no next.
func TestEventsPaging(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *testAPI) {
		c := a.cluster(user, "prod", gcpCluster)
		for i := range 4 {
			a.pool(user, c.ID, fmt.Sprintf("p%d", i))
		}
		var ids []int64
		q := "?limit=2&cluster_id=" + c.ID
		for pages := 0; ; pages++ {
			if pages > 5 {
				t.Fatal("paging does not end")
			}
			l := a.events(user, q)
			if l.Limit != 2 || len(l.Events) > 2 {
				t.Fatalf("limit %d, %d events", l.Limit, len(l.Events))
			}
			for _, e := range l.Events {
				ids = append(ids, e.ID)
			}
			if l.Next == "" {
				break
			}
			q = "?limit=2&cluster_id=" + c.ID + "&after=" + l.Next
		}
		if len(ids) != 5 {
			t.Fatalf("%d events over the pages, want 5 (a cluster and four pools): %v", len(ids), ids)
		}
		for i := 1; i < len(ids); i++ {
			if ids[i] >= ids[i-1] {
				t.Fatalf("ids %v: not strictly newest first", ids)
			}
		}
	})
}

// TestEventsVisibility: a user reads the events of the clusters they
// registered, even after the cluster is gone, and never another user's;
// admins and controllers read all.
func TestEventsVisibility(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *testAPI) {
		mine := a.cluster(user, "mine", gcpCluster)
		theirs := a.cluster(other, "theirs", gcpCluster)
		want(t, a.as(user, "DELETE", "/api/v1/clusters/"+mine.ID, ""), http.StatusNoContent)

		clustersIn := func(l EventList) map[string]int {
			m := map[string]int{}
			for _, e := range l.Events {
				m[e.ClusterID]++
			}
			return m
		}
		if got := clustersIn(a.events(user, "")); got[mine.ID] != 2 || got[theirs.ID] != 0 {
			t.Errorf("user sees %v: want the create and delete of %s only", got, mine.ID)
		}
		if got := a.events(user, "?cluster_id="+theirs.ID); len(got.Events) != 0 {
			t.Errorf("user sees another user's cluster's events: %+v", got.Events)
		}
		for _, who := range []string{admin, controller} {
			if got := clustersIn(a.events(who, "")); got[mine.ID] != 2 || got[theirs.ID] != 1 {
				t.Errorf("%s sees %v: want every event", who, got)
			}
		}
	})
}

// TestTeamEvents: a team's members read the events of its clusters from
// the write that put the cluster in the team on, each naming the team
// (what came before was its owner's alone); others read none.
func TestTeamEvents(t *testing.T) {
	a := newTestAPI(t, testdb.SQLite)
	shared := a.cluster(user, "shared", gcpCluster)
	want(t, a.as(admin, "PATCH", "/api/v1/clusters/"+shared.ID, `{"team":"platform"}`), http.StatusOK)
	a.pool(user, shared.ID, "web")
	read := func(auth string) EventList {
		r := a.do("GET", "/api/v1/events?cluster_id="+shared.ID, "", auth)
		want(t, r, http.StatusOK)
		var l EventList
		r.json(t, &l)
		return l
	}
	member := read(a.token("vera@example.com", "platform:viewer"))
	if len(member.Events) != 2 || member.Events[0].Team != "platform" || member.Events[0].Type != kpool.EventNodePoolCreated ||
		member.Events[1].Detail != `team "" -> "platform"` {
		t.Fatalf("the team's viewer reads %+v: want the cluster's move to the team and the pool's create", member.Events)
	}
	if got := read(a.token("olga@example.com", "data:admin")); len(got.Events) != 0 {
		t.Fatalf("someone outside the team reads %+v", got.Events)
	}
}

// TestEventsBadQuery: every bad parameter is a 400 naming it.
func TestEventsBadQuery(t *testing.T) {
	a := newTestAPI(t, testdb.SQLite)
	for q, field := range map[string]string{
		"?cluster_id=prod":      "cluster_id",
		"?nodepool_id=web":      "nodepool_id",
		"?type=nodepool.scaled": "type",
		"?limit=0":              "limit",
		"?limit=101":            "limit",
		"?after=bogus":          "after",
		"?after=":               "after",
		"?offset=10":            "offset",
		"?type=cluster.&type=x": "type",
	} {
		r := a.as(user, "GET", "/api/v1/events"+q, "")
		e := wantError(t, r, http.StatusBadRequest, "VALIDATION_ERROR", "")
		found := false
		for _, f := range e.Fields {
			found = found || f.Field == field
		}
		if !found && !strings.Contains(e.Details, field) {
			t.Errorf("%s: error %+v does not name %s", q, e, field)
		}
	}
}

// TestStatusEventsOnChange: a controller's reports make a nodepool.status
// event only when the phase, a condition (type, status, reason) or the
// observed generation changes, not when they only refresh node counts or
// messages; the detail quotes why the pool is not well.
func TestStatusEventsOnChange(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *testAPI) {
		c := a.cluster(user, "prod", gcpCluster)
		p := a.pool(user, c.ID, "web")
		report := func(ready, reason, msg string, active int) string {
			return fmt.Sprintf(`{"controller_name":"gcp-nodepool-controller","observed_generation":1,`+
				`"conditions":[{"type":"Ready","status":%q,"reason":%q,"message":%q}],"metadata":{"active_nodes":%d,"desired_nodes":3}}`,
				ready, reason, msg, active)
		}
		for i, step := range []struct {
			body   string
			detail string // of the newest status event; "" when the report makes none
		}{
			{report("False", "Creating", "creating web", 0), "gcp-nodepool-controller: Ready=False (Creating); Ready: creating web; nodes 0/3"},
			{report("False", "Creating", "creating web, 1 node up", 1), ""},
			{report("True", "NodesReady", "3 of 3 nodes ready", 3), "gcp-nodepool-controller: Ready=True (NodesReady); nodes 3/3"},
			{report("True", "NodesReady", "3 of 3 nodes ready, again", 3), ""},
			{report("False", "QuotaExceeded", "gcp: quota: CPUs", 3), "gcp-nodepool-controller: Ready=False (QuotaExceeded); Ready: gcp: quota: CPUs; nodes 3/3"},
		} {
			before := len(a.events(user, "?nodepool_id="+p.ID+"&type=nodepool.status").Events)
			want(t, a.as(controller, "PUT", "/api/v1/nodepools/"+p.ID+"/status", step.body), http.StatusOK)
			evs := a.events(user, "?nodepool_id="+p.ID+"&type=nodepool.status").Events
			switch {
			case step.detail == "" && len(evs) != before:
				t.Errorf("report %d: %d status events, want still %d: %+v", i, len(evs), before, evs[0])
			case step.detail != "" && (len(evs) != before+1 || evs[0].Detail != step.detail):
				t.Errorf("report %d: %d status events (had %d), newest %+v; want one more, with detail %q", i, len(evs), before, evs, step.detail)
			}
		}
	})
}

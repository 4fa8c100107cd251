package api

import (
	"net/http"
	"testing"
)

// TestEventsObjectName: GET /events answers each event with object_name,
// the name of the cluster or pool written, beside object_id.
func TestEventsObjectName(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *testAPI) {
		c := a.cluster(user, "named", gcpCluster)
		p := a.pool(user, c.ID, "web")
		want(t, a.as(user, "PATCH", "/api/v1/nodepools/"+p.ID, `{"spec":{"nodeCount":4}}`), http.StatusOK)
		want(t, a.as(user, "DELETE", "/api/v1/nodepools/"+p.ID, ""), http.StatusNoContent) // gone at once: no controller had it
		r := a.as(user, "GET", "/api/v1/events?cluster_id="+c.ID, "")
		want(t, r, http.StatusOK)
		var l struct {
			Events []struct {
				Type       string `json:"type"`
				ObjectID   string `json:"object_id"`
				ObjectName string `json:"object_name"`
			} `json:"events"`
		}
		r.json(t, &l)
		names := map[string]string{c.ID: "named", p.ID: "web"}
		types := map[string]bool{}
		for _, e := range l.Events {
			types[e.Type] = true
			if e.ObjectName != names[e.ObjectID] {
				t.Errorf("%s of %s: object_name %q, want %q", e.Type, e.ObjectID, e.ObjectName, names[e.ObjectID])
			}
		}
		for _, typ := range []string{"cluster.created", "nodepool.created", "nodepool.updated", "nodepool.deleted"} {
			if !types[typ] {
				t.Errorf("no %s among %+v", typ, l.Events)
			}
		}
	})
}

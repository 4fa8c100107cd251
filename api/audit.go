package api

import (
	"net/http"
	"strconv"

	"github.com/kpool/kpool/audit"

	"github.com/kpool/kpool"
)

// EventList is a page of the audit trail, newest first. It has no total:
// counting a trail of millions would cost more than the page.
type EventList struct {
	Events []kpool.Event `json:"events"`
	Limit  int           `json:"limit"`
	Next   string        `json:"next,omitempty"`
}

// listEvents answers GET /events: a page of the audit trail, newest first,
// filtered by cluster, pool, type or actor.
func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) {
	q, err := query(r, "limit", "after", "cluster_id", "nodepool_id", "type", "actor")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	eq := audit.Query{ClusterID: lowerID(q.Get("cluster_id")), NodePoolID: lowerID(q.Get("nodepool_id")), Type: q.Get("type"), Actor: q.Get("actor"), After: q.Get("after")}
	var fe kpool.FieldErrors
	if v := q.Get("limit"); q.Has("limit") {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > kpool.MaxLimit {
			fe.Add("limit", "must be an integer between 1 and %d, got %q", kpool.MaxLimit, v)
		}
		eq.Limit = n
	}
	if q.Has("after") && eq.After == "" {
		fe.Add("after", "must be the next cursor of a previous page")
	}
	if err := fe.Err(); err != nil {
		s.writeError(w, r, err)
		return
	}
	l, err := s.svc.Events(r.Context(), eq)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, EventList{Events: l.Items, Limit: l.Limit, Next: l.Next})
}

package aks

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kpool/kpool/cloudsim/sim"
)

func (s *Server) operationURL(req *request, o *sim.Operation, kind string) string {
	in := infoOf(o)
	return fmt.Sprintf("%s/subscriptions/%s/providers/Microsoft.ContainerService/locations/%s/%s/%s?api-version=%s",
		req.base, in.subscription, in.location, kind, o.ID, url.QueryEscape(req.version))
}

func (s *Server) findOp(req *request) (*sim.Operation, *sim.Reply) {
	sub, location, id := req.vars["subscription"], req.vars["location"], req.vars["id"]
	o := req.Operation(id)
	if o == nil || !strings.EqualFold(infoOf(o).subscription, sub) || !strings.EqualFold(infoOf(o).location, normLocation(location)) {
		return nil, errorReply(http.StatusNotFound, "NotFound", "Operation '%s' was not found in location '%s'.", id, location)
	}
	return o, nil
}

type operationStatus struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Status    string    `json:"status"`
	StartTime string    `json:"startTime"`
	EndTime   string    `json:"endTime,omitempty"`
	Error     *armError `json:"error,omitempty"`
}

func (s *Server) operationStatus(req *request) *sim.Reply {
	o, rep := s.findOp(req)
	if rep != nil {
		return rep
	}
	in := infoOf(o)
	st := operationStatus{
		ID:        fmt.Sprintf("/subscriptions/%s/providers/Microsoft.ContainerService/locations/%s/operations/%s", in.subscription, in.location, o.ID),
		Name:      o.ID,
		Status:    opStatus(o),
		StartTime: o.Start.UTC().Format(time.RFC3339Nano),
	}
	if !o.Running() {
		st.EndTime = o.End.UTC().Format(time.RFC3339Nano)
	}
	if st.Status == stateFailed {
		st.Error = opError(o)
	}
	return jsonReply(http.StatusOK, st)
}

// operationResult answers the Location URL of an operation: 202 while it
// runs, then 204 for a delete (or a pool since gone), 200 with the pool
// for a create or update, or the operation's error.
func (s *Server) operationResult(req *request) *sim.Reply {
	o, rep := s.findOp(req)
	if rep != nil {
		return rep
	}
	switch opStatus(o) {
	case "InProgress":
		rep := sim.NewReply(http.StatusAccepted)
		rep.Header.Set("Location", s.operationURL(req, o, "operationresults"))
		return rep
	case stateFailed:
		e := opError(o)
		return errorReply(http.StatusBadRequest, e.Code, "%s", e.Message)
	}
	if o.Kind == stateDeleting || o.Kind == kindAbort {
		return sim.NewReply(http.StatusNoContent)
	}
	p := infoOf(o).pool
	if cur, ok := p.cluster.pools[strings.ToLower(p.name)]; ok && cur == p {
		return jsonReply(http.StatusOK, cur.wire(req.version))
	}
	return sim.NewReply(http.StatusNoContent)
}

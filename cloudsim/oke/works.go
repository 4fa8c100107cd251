package oke

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"

	"github.com/kpool/kpool/cloudsim/sim"
)

// Work requests: OKE explains what a create, update or delete did through
// the work request (GetWorkRequest), its log (ListWorkRequestLogs) and, for
// one that FAILED, its errors (ListWorkRequestErrors); ListWorkRequests
// finds them by compartment, cluster, resource and status.

// log adds an entry to the work request's log.
func (w *work) log(at time.Time, format string, args ...any) {
	w.logs = append(w.logs, ce.WorkRequestLogEntry{Message: common.String(fmt.Sprintf(format, args...)),
		Timestamp: common.String(at.UTC().Format(time.RFC3339Nano))})
}

// fail records why the work request failed, in its errors and its log.
func (w *work) fail(at time.Time, code, message string) {
	w.errs = append(w.errs, ce.WorkRequestError{Code: common.String(code), Message: common.String(message), Timestamp: &common.SDKTime{Time: at}})
	w.log(at, "The work request failed: %s: %s", code, message)
}

// lookupWork finds the work request of the path.
func (s *Server) lookupWork(req *sim.Request) (*work, *sim.Reply) {
	id := req.HTTP.PathValue("id")
	w, ok := s.works[id]
	if !ok {
		return nil, notFound("work request", id)
	}
	return w, nil
}

func (s *Server) getWork(req *sim.Request) *sim.Reply {
	w, rep := s.lookupWork(req)
	if rep != nil {
		return rep
	}
	return jsonReply(http.StatusOK, w.view())
}

// workErrors answers ListWorkRequestErrors: compartmentId is required, as
// the API reference has it.
func (s *Server) workErrors(req *sim.Request) *sim.Reply {
	w, rep := s.lookupWork(req)
	if rep != nil {
		return rep
	}
	if req.HTTP.URL.Query().Get("compartmentId") == "" {
		return missing("compartmentId")
	}
	return jsonReply(http.StatusOK, append([]ce.WorkRequestError{}, w.errs...))
}

// workLogs answers ListWorkRequestLogs, compartmentId required.
func (s *Server) workLogs(req *sim.Request) *sim.Reply {
	w, rep := s.lookupWork(req)
	if rep != nil {
		return rep
	}
	if req.HTTP.URL.Query().Get("compartmentId") == "" {
		return missing("compartmentId")
	}
	return jsonReply(http.StatusOK, append([]ce.WorkRequestLogEntry{}, w.logs...))
}

// listWorks answers ListWorkRequests: the compartment's work requests,
// of a cluster, resource, resource type and statuses when given, by time
// accepted (oldest first, newest with sortOrder DESC), paged.
func (s *Server) listWorks(req *sim.Request) *sim.Reply {
	q := req.HTTP.URL.Query()
	if q.Get("compartmentId") == "" {
		return missing("compartmentId")
	}
	size, ok := sim.PageSize(q.Get("limit"), s.pageSize, 1000)
	if !ok {
		return invalid("limit must be between 1 and 1000.")
	}
	if t := q.Get("resourceType"); t != "" && t != "NODEPOOL" && t != "CLUSTER" {
		return invalid("resourceType must be CLUSTER or NODEPOOL.")
	}
	var all []*work
	for _, w := range s.works {
		if s.worksMatch(w, q.Get("compartmentId"), q.Get("clusterId"), q.Get("resourceId"), q.Get("resourceType"), q["status"]) {
			all = append(all, w)
		}
	}
	slices.SortFunc(all, func(a, b *work) int { return a.seq - b.seq })
	desc := q.Get("sortOrder") == "DESC"
	if desc {
		slices.Reverse(all)
	}
	page, next, err := sim.Page(all, func(w *work) string { return w.pageKey(desc) }, q.Get("page"), size)
	if err != nil {
		return invalid("The page token is invalid.")
	}
	out := []ce.WorkRequestSummary{}
	for _, w := range page {
		v := w.view()
		out = append(out, ce.WorkRequestSummary{Id: v.Id, OperationType: v.OperationType, Status: v.Status, CompartmentId: v.CompartmentId,
			Resources: v.Resources, TimeAccepted: v.TimeAccepted, TimeStarted: v.TimeStarted, TimeFinished: v.TimeFinished})
	}
	rep := jsonReply(http.StatusOK, out)
	if next != "" {
		rep.Header.Set("opc-next-page", next)
	}
	return rep
}

// worksMatch says whether a work request passes ListWorkRequests'
// filters (node pool work requests only: the emulator makes no other).
func (s *Server) worksMatch(w *work, compartment, clusterID, resourceID, resourceType string, statuses []string) bool {
	p := s.pools[w.poolID]
	switch {
	case w.compartment != compartment, resourceType == "CLUSTER" && w.addon == "", resourceType == "NODEPOOL" && w.addon != "":
		return false
	case clusterID != "" && w.cluster != clusterID && (p == nil || p.cluster.ID != clusterID):
		return false
	case resourceID != "" && resourceID != w.poolID && resourceID != w.cluster:
		return false
	case len(statuses) > 0 && !slices.Contains(statuses, string(w.view().Status)):
		return false
	}
	return true
}

// pageKey is the work request's place in a list, as pool.pageKey.
func (w *work) pageKey(desc bool) string {
	n := uint64(w.seq)
	if desc {
		n = ^n
	}
	return fmt.Sprintf("%016x", n)
}

func (w *work) view() ce.WorkRequest {
	v := ce.WorkRequest{Id: common.String(w.id), OperationType: ce.WorkRequestOperationTypeEnum(w.typ), CompartmentId: common.String(w.compartment),
		TimeAccepted: &common.SDKTime{Time: w.accepted}, TimeStarted: &common.SDKTime{Time: w.accepted}}
	action := ce.WorkRequestResourceActionTypeInProgress
	switch {
	case w.running():
		v.Status = ce.WorkRequestStatusInProgress
	case w.fails():
		v.Status, action = ce.WorkRequestStatusFailed, ce.WorkRequestResourceActionTypeFailed
		v.TimeFinished = &common.SDKTime{Time: w.ended()}
	default:
		v.Status = ce.WorkRequestStatusSucceeded
		v.TimeFinished = &common.SDKTime{Time: w.ended()}
		action = map[string]ce.WorkRequestResourceActionTypeEnum{opCreate: ce.WorkRequestResourceActionTypeCreated,
			opUpdate: ce.WorkRequestResourceActionTypeUpdated, opDelete: ce.WorkRequestResourceActionTypeDeleted}[w.typ]
	}
	v.Resources = []ce.WorkRequestResource{{ActionType: action, EntityType: common.String("nodepool"), Identifier: common.String(w.poolID),
		EntityUri: common.String("/" + APIVersion + "/nodePools/" + w.poolID)}}
	if w.addon != "" {
		if !w.running() && !w.fails() {
			action = ce.WorkRequestResourceActionTypeUpdated
		}
		v.Resources = []ce.WorkRequestResource{{ActionType: action, EntityType: common.String("cluster"), Identifier: common.String(w.cluster),
			EntityUri: common.String("/" + APIVersion + "/clusters/" + w.cluster + "/addons/" + w.addon)}}
	}
	return v
}

// running, fails and ended are the work request's state: its
// operation's, or its node cycling's once that settled it.
func (w *work) running() bool { return !w.settled && w.op.Running() }

func (w *work) fails() bool {
	if w.settled {
		return w.failed
	}
	return w.op.Fails
}

func (w *work) ended() time.Time {
	if w.settled {
		return w.end
	}
	return w.op.End
}

// verb is what a work request does, for its log.
func (w *work) verb() string {
	if w.addon != "" {
		return strings.ToLower(strings.TrimSuffix(w.typ, "_ADDON"))
	}
	return strings.ToLower(strings.TrimPrefix(w.typ, "NODEPOOL_"))
}

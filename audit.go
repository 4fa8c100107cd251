package kpool

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

type requestIDKey struct{}

// WithRequestID returns a context that carries the id of the API request it
// serves, which the events it writes record.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the request id in ctx, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// EventQuery is what a caller asks of the audit trail (Service.Events).
type EventQuery struct {
	ClusterID  string
	NodePoolID string
	Type       string
	Actor      string
	Limit      int    // 1-MaxLimit; 0 means DefaultLimit
	After      string // a cursor from a previous page's Next
}

// Events reads the audit trail, newest first: every write to clusters and
// node pools, with its actor, time, request and generations. Users see the
// events of the clusters they registered (deleted ones included), admins and
// controllers every event.
func (s *Service) Events(ctx context.Context, q EventQuery) (*List[Event], error) {
	id, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	f := EventFilter{ClusterID: q.ClusterID, ObjectID: q.NodePoolID, Type: q.Type, Actor: strings.ToLower(q.Actor), Limit: q.Limit}
	if !id.SeesAll() {
		f.Owner, f.Teams = id.Email, id.TeamNames()
	}
	var fe FieldErrors
	if f.ClusterID != "" && !IsUUID(f.ClusterID) {
		fe.Add("cluster_id", "%q is not a cluster id (a UUID in canonical form)", f.ClusterID)
	}
	if f.ObjectID != "" && !IsUUID(f.ObjectID) {
		fe.Add("nodepool_id", "%q is not a node pool id (a UUID in canonical form)", f.ObjectID)
	}
	if f.Type != "" && !validEventType(f.Type) {
		fe.Add("type", "%q is not an event type: use one of %s, or a kind such as nodepool.", f.Type, strings.Join(EventTypes, ", "))
	}
	if f.Limit == 0 {
		f.Limit = DefaultLimit
	}
	if f.Limit < 1 || f.Limit > MaxLimit {
		fe.Add("limit", "must be between 1 and %d, got %d", MaxLimit, q.Limit)
	}
	if q.After != "" {
		if f.Before, err = decodeEventCursor(q.After); err != nil {
			fe.Add("after", "%v", err)
		}
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	limit := f.Limit
	f.Limit++ // one more than asked says whether a next page exists
	evs, err := s.Store.AuditEvents(ctx, f)
	if err != nil {
		return nil, err
	}
	l := &List[Event]{Items: evs, Total: -1, Limit: limit}
	if len(evs) > limit {
		l.Items = evs[:limit]
		l.Next = encodeEventCursor(l.Items[limit-1].ID)
	}
	return l, nil
}

// EventTypes lists every event type, in the order of an object's life.
var EventTypes = []string{
	EventClusterCreated, EventClusterUpdated, EventClusterStatus, EventClusterDeleting, EventClusterDeleted,
	EventNodePoolCreated, EventNodePoolUpdated, EventNodePoolStatus, EventNodePoolDeleting, EventNodePoolDeleted,
}

func validEventType(t string) bool {
	return t == "cluster." || t == "nodepool." || slices.Contains(EventTypes, t)
}

// Event cursors are opaque like the lists' ones: the last id of a page.
const eventCursorPrefix = "ev."

func encodeEventCursor(id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(eventCursorPrefix + strconv.FormatInt(id, 10)))
}

func decodeEventCursor(s string) (int64, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		if rest, ok := strings.CutPrefix(string(b), eventCursorPrefix); ok {
			if id, err := strconv.ParseInt(rest, 10, 64); err == nil && id > 0 {
				return id, nil
			}
		}
	}
	return 0, fmt.Errorf("%q is not a cursor from a previous page of events", s)
}

// clusterEvent is the event of a write to cluster c, made in ctx's request.
func clusterEvent(ctx context.Context, typ string, c *Cluster, before int64, actor string) *Event {
	return &Event{Type: typ, ObjectID: c.ID, ClusterID: c.ID, Owner: c.CreatedBy, Team: c.Team, GenerationBefore: before,
		Generation: c.Generation, Actor: actor, RequestID: RequestID(ctx)}
}

// poolEvent is the event of a write to pool p, made in ctx's request.
func poolEvent(ctx context.Context, typ string, p *NodePool, before int64, actor string) *Event {
	return &Event{Type: typ, ObjectID: p.ID, ClusterID: p.ClusterID, Owner: p.ClusterOwner, Team: p.ClusterTeam, GenerationBefore: before,
		Generation: p.Generation, Actor: actor, RequestID: RequestID(ctx)}
}

// changedFields names the top-level fields that differ between two specs,
// each under prefix ("spec.nodeCount, spec.labels"): an update's detail.
func changedFields(prefix string, old, next any) string {
	var a, b map[string]json.RawMessage
	oj, err1 := json.Marshal(old)
	nj, err2 := json.Marshal(next)
	if err1 != nil || err2 != nil || json.Unmarshal(oj, &a) != nil || json.Unmarshal(nj, &b) != nil {
		return ""
	}
	var out []string
	for k, v := range b {
		if w, ok := a[k]; !ok || string(v) != string(w) { // Marshal's output is canonical
			out = append(out, prefix+k)
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			out = append(out, prefix+k)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// statusDetail summarizes a controller's report: its name and conditions.
func statusDetail(r *ControllerStatus) string {
	var b strings.Builder
	b.WriteString(r.ControllerName)
	for i, c := range r.Conditions {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%s", c.Type, c.Status)
		if c.Reason != "" {
			fmt.Fprintf(&b, " (%s)", c.Reason)
		}
	}
	// The node counts it saw, for a history of the pool's size.
	if m := r.Meta(); m.ActiveNodes != nil && m.DesiredNodes != nil {
		fmt.Fprintf(&b, "; nodes %d/%d", *m.ActiveNodes, *m.DesiredNodes)
	}
	return b.String()
}

// clusterDeleteEvent is the event of a delete of cluster c; force says it
// took the cluster's pools with it.
func clusterDeleteEvent(ctx context.Context, typ string, c *Cluster, actor string, force bool, now time.Time) *Event {
	ev := clusterEvent(ctx, typ, c, c.Generation, actor)
	if force {
		ev.Detail = "force: its node pools are deleted with it"
	}
	ev.CreatedAt = now
	return ev
}

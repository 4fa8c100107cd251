package audit

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/internal/tracing"
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

// Query is what a caller asks of the audit trail (Service.Events).
type Query struct {
	ClusterID  string
	NodePoolID string
	Type       string
	Actor      string
	Limit      int    // 1-MaxLimit; 0 means DefaultLimit
	After      string // a cursor from a previous page's Next
}

// EventTypes lists every event type, in the order of an object's life.
var EventTypes = []string{
	kpool.EventClusterCreated, kpool.EventClusterUpdated, kpool.EventClusterStatus, kpool.EventClusterDeleting, kpool.EventClusterDeleted,
	kpool.EventNodePoolCreated, kpool.EventNodePoolUpdated, kpool.EventNodePoolStatus, kpool.EventNodePoolDeleting, kpool.EventNodePoolDeleted,
	kpool.EventNodePoolReplaced, kpool.EventNodePoolRollback,
	kpool.EventLogicalPoolCreated, kpool.EventLogicalPoolUpdated, kpool.EventLogicalPoolMoved, kpool.EventLogicalPoolDeleted,
}

func ValidEventType(t string) bool {
	return t == "cluster." || t == "nodepool." || t == "logicalpool." || slices.Contains(EventTypes, t)
}

// Event cursors are opaque like the lists' ones: the last id of a page.
const eventCursorPrefix = "ev."

func EncodeCursor(id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(eventCursorPrefix + strconv.FormatInt(id, 10)))
}

func DecodeCursor(s string) (int64, error) {
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

// ClusterEvent is the event of a write to cluster c, made in ctx's request.
func ClusterEvent(ctx context.Context, typ string, c *kpool.Cluster, before int64, actor string) *kpool.Event {
	return &kpool.Event{Type: typ, ObjectID: c.ID, ObjectName: c.Name, ClusterID: c.ID, Owner: c.CreatedBy, Team: c.Team, GenerationBefore: before,
		Generation: c.Generation, Actor: actor, RequestID: RequestID(ctx), TraceParent: tracing.TraceParent(ctx)}
}

// PoolEvent is the event of a write to pool p, made in ctx's request.
func PoolEvent(ctx context.Context, typ string, p *kpool.NodePool, before int64, actor string) *kpool.Event {
	return &kpool.Event{Type: typ, ObjectID: p.ID, ObjectName: p.Name, ClusterID: p.ClusterID, Owner: p.ClusterOwner, Team: p.ClusterTeam, GenerationBefore: before,
		Generation: p.Generation, Actor: actor, RequestID: RequestID(ctx), TraceParent: tracing.TraceParent(ctx)}
}

// ChangedFields names the top-level fields that differ between two specs,
// each under prefix ("spec.nodeCount, spec.labels"): an update's detail.
func ChangedFields(prefix string, old, next any) string {
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

// StatusDetail summarizes a controller's report: its name and conditions.
func StatusDetail(r *kpool.ControllerStatus) string {
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
	// Why, when the pool is not well: the messages of Ready not True and
	// of Drifted or Degraded True (a re-create after a delete behind
	// kpool's back, a drift corrected, a quota refused, a failure).
	for _, c := range r.Conditions {
		bad := c.Status != kpool.ConditionTrue
		if c.Type == kpool.ConditionDrifted || c.Type == kpool.ConditionDegraded {
			bad = c.Status == kpool.ConditionTrue
		}
		if bad && c.Message != "" && (c.Type == kpool.ConditionReady || c.Type == kpool.ConditionDrifted || c.Type == kpool.ConditionDegraded) {
			fmt.Fprintf(&b, "; %s: %s", c.Type, clip(c.Message, maxWhy))
		}
	}
	// The node counts it saw, for a history of the pool's size (last:
	// the dashboard's chart reads them there).
	if m := r.Meta(); m.ActiveNodes != nil && m.DesiredNodes != nil {
		fmt.Fprintf(&b, "; nodes %d/%d", *m.ActiveNodes, *m.DesiredNodes)
	}
	return b.String()
}

// maxWhy bounds each message an event's detail quotes.
const maxWhy = 240

// clip cuts s to at most n bytes, at a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// ClusterDeleteEvent is the event of a delete of cluster c; force says it
// took the cluster's pools with it.
func ClusterDeleteEvent(ctx context.Context, typ string, c *kpool.Cluster, actor string, force bool, now time.Time) *kpool.Event {
	ev := ClusterEvent(ctx, typ, c, c.Generation, actor)
	if force {
		ev.Detail = "force: its node pools are deleted with it"
	}
	ev.CreatedAt = now
	return ev
}

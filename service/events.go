package service

import (
	"context"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/audit"
)

// Events reads the audit trail, newest first: every write to clusters and
// node pools, with its actor, time, request and generations. Users see the
// events of the clusters they registered (deleted ones included), admins and
// controllers every event.
func (s *Service) Events(ctx context.Context, q audit.Query) (*List[kpool.Event], error) {
	id, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	f := kpool.EventFilter{ClusterID: q.ClusterID, ObjectID: q.NodePoolID, Type: q.Type, Actor: strings.ToLower(q.Actor), Limit: q.Limit}
	f.Owner, f.Teams = id.Visible()
	var fe kpool.FieldErrors
	if f.ClusterID != "" && !kpool.IsUUID(f.ClusterID) {
		fe.Add("cluster_id", "%q is not a cluster id (a UUID in canonical form)", f.ClusterID)
	}
	if f.ObjectID != "" && !kpool.IsUUID(f.ObjectID) {
		fe.Add("nodepool_id", "%q is not a node pool id (a UUID in canonical form)", f.ObjectID)
	}
	if f.Type != "" && !audit.ValidEventType(f.Type) {
		fe.Add("type", "%q is not an event type: use one of %s, or a kind such as nodepool.", f.Type, strings.Join(audit.EventTypes, ", "))
	}
	if f.Limit == 0 {
		f.Limit = kpool.DefaultLimit
	}
	if f.Limit < 1 || f.Limit > kpool.MaxLimit {
		fe.Add("limit", "must be between 1 and %d, got %d", kpool.MaxLimit, q.Limit)
	}
	if q.After != "" {
		if f.Before, err = audit.DecodeCursor(q.After); err != nil {
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
	l := &List[kpool.Event]{Items: evs, Total: -1, Limit: limit}
	if len(evs) > limit {
		l.Items = evs[:limit]
		l.Next = audit.EncodeCursor(l.Items[limit-1].ID)
	}
	return l, nil
}

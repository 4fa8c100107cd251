package service

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/audit"
)

// NodePoolStatus returns a pool's aggregated status and every report.
func (s *Service) NodePoolStatus(ctx context.Context, poolID string) (*StatusDocument, error) {
	_, p, err := s.visiblePool(ctx, poolID)
	if err != nil {
		return nil, err
	}
	reports, err := s.Store.ControllerStatuses(ctx, poolID)
	if err != nil {
		return nil, err
	}
	return statusDocument(p, reports), nil
}

func statusDocument(p *kpool.NodePool, reports []kpool.ControllerStatus) *StatusDocument {
	if reports == nil {
		reports = []kpool.ControllerStatus{}
	}
	return &StatusDocument{NodePoolID: p.ID, ClusterID: p.ClusterID, Generation: p.Generation, Status: p.Status, ControllerStatus: reports}
}

// stampTransitions sets the transition time of each condition of a
// report: kept from the controller's last report while the condition's
// status holds; else now, or the time the report gives when that is
// earlier.
func stampTransitions(r *kpool.ControllerStatus, prev *kpool.ControllerStatus, now time.Time) {
	var old []kpool.Condition
	if prev != nil {
		old = prev.Conditions
	}
	for i := range r.Conditions {
		cond := &r.Conditions[i]
		given := cond.LastTransitionTime
		*cond = kpool.StampTransition(old, *cond, now)
		if cond.LastTransitionTime.Equal(now) && !given.IsZero() && given.Before(now) {
			cond.LastTransitionTime = given.UTC()
		}
	}
}

// ReportNodePoolStatus stores a controller's report and recomputes the
// pool's status. Only controller identities may report. A report ahead of
// the pool's generation is refused; one older than the controller's last
// report is ignored (and says so).
func (s *Service) ReportNodePoolStatus(ctx context.Context, poolID string, r kpool.ControllerStatus) (*StatusDocument, error) {
	id, err := poolCaller(ctx, poolID)
	if err != nil {
		return nil, err
	}
	if !id.Controller {
		return nil, kpool.Errorf(kpool.CodeForbidden, "only controller identities may report node pool status")
	}
	r.Metadata = compactObject(r.Metadata)
	if r.Conditions == nil {
		r.Conditions = []kpool.Condition{}
	}
	scrubReport(&r)
	if err := kpool.ValidateControllerStatus(&r); err != nil {
		return nil, err
	}
	if err := id.MayReportAs(r.ControllerName, s.Platforms.ControllerNames()); err != nil {
		return nil, err
	}
	var doc *StatusDocument
	err = s.write(ctx, false, func(tx kpool.Tx) error {
		doc, err = s.storeReport(ctx, tx, id, poolID, &r)
		return err
	})
	if err != nil {
		return nil, err
	}
	return doc, nil
}

// storeReport stores controller report r on a pool in tx, unless it is
// older than the controller's last, and removes the pool once every
// reporting controller says it is deleted.
func (s *Service) storeReport(ctx context.Context, tx kpool.Tx, id *kpool.Identity, poolID string, r *kpool.ControllerStatus) (*StatusDocument, error) {
	p, c, reports, err := lockPool(ctx, tx, id, poolID, kpool.Read)
	if err != nil {
		return nil, err
	}
	if id.Scope != nil && !id.Scope.Covers(c.Spec.Platform.Type, c) {
		return nil, kpool.Errorf(kpool.CodeForbidden, "%s may report on %s only, not on this %s pool", id.Email, id.Scope, c.Spec.Platform.Type)
	}
	if r.ObservedGeneration > p.Generation {
		return nil, kpool.Invalid("observed_generation", "%d is ahead of the node pool's generation %d", r.ObservedGeneration, p.Generation)
	}
	now := s.now()
	var prev *kpool.ControllerStatus
	for i := range reports {
		if reports[i].ControllerName == r.ControllerName {
			prev = &reports[i]
		}
	}
	if prev != nil && r.ObservedGeneration < prev.ObservedGeneration {
		doc := statusDocument(p, reports)
		doc.Ignored = fmt.Sprintf("observed_generation %d is older than %s's last report (%d)", r.ObservedGeneration, r.ControllerName, prev.ObservedGeneration)
		return doc, nil
	}
	stampTransitions(r, prev, now)
	r.UpdatedAt = now
	if err := tx.PutControllerStatus(poolID, r); err != nil {
		return nil, err
	}
	said := prev == nil || !sameStatus(prev.Conditions, r.Conditions) || prev.ObservedGeneration != r.ObservedGeneration
	before := p.Status
	if prev != nil {
		*prev = *r
	} else {
		reports = append(reports, *r)
	}
	kind := kpool.EventNodePoolStatus
	if p.Deleting() && allDeleted(reports) {
		kind = kpool.EventNodePoolDeleted
		if err := tx.DeleteNodePool(p.ID); err != nil {
			return nil, err
		}
	} else {
		moved, err := replaced(ctx, tx, p, r, id.Email)
		if err != nil {
			return nil, err
		}
		p.Status = s.aggregate(p, reports, p.Status, now)
		p.UpdatedAt = now
		if err := updatePool(tx, p); err != nil {
			return nil, err
		}
		if moved != nil {
			moved.CreatedAt = now
			if err := tx.AddEvent(moved); err != nil {
				return nil, err
			}
		}
		said = said || p.Status.Phase != before.Phase || !sameStatus(before.Conditions, p.Status.Conditions)
	}
	// The trail records what changed, not every report: a report that
	// moves the phase, a condition (type, status or reason) or the
	// generation it observed is an event, one that only refreshes node
	// counts or messages is not (it would outnumber the users' writes).
	if said || kind == kpool.EventNodePoolDeleted {
		ev := audit.PoolEvent(ctx, kind, p, p.Generation, id.Email)
		ev.Detail, ev.CreatedAt = audit.StatusDetail(r), now
		if err := tx.AddEvent(ev); err != nil {
			return nil, err
		}
	}
	doc := statusDocument(p, reports)
	if kind == kpool.EventNodePoolDeleted {
		doc.Deleted = true
		return doc, s.removeClusterIfDone(ctx, tx, c, id.Email, now)
	}
	return doc, nil
}

// sameStatus reports whether two lists of conditions say the same: the
// same types, statuses and reasons, in the same order (messages and times
// aside).
func sameStatus(a, b []kpool.Condition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type || a[i].Status != b[i].Status || a[i].Reason != b[i].Reason {
			return false
		}
	}
	return true
}

func allDeleted(reports []kpool.ControllerStatus) bool {
	for _, r := range reports {
		if r.Condition(kpool.ConditionDeleted) != kpool.ConditionTrue {
			return false
		}
	}
	return len(reports) > 0
}

// compactObject normalises a JSON object: absent or null becomes {}.
func compactObject(m json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if len(m) == 0 || json.Compact(&b, m) != nil {
		if len(bytes.TrimSpace(m)) == 0 {
			return json.RawMessage("{}")
		}
		return m
	}
	if b.String() == "null" {
		return json.RawMessage("{}")
	}
	return b.Bytes()
}

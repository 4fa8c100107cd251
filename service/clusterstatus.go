package service

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/audit"
)

// ReportClusterStatus sets conditions on a cluster's status, as a
// controller found them: each replaces the condition of its type, keeping
// its transition time while its status holds; and the foreign and
// unmarked pools at the provider, when the report carries them. Only controllers may report;
// a report that changes nothing writes nothing. The cluster's resource
// version moves, its generation does not, and the audit trail gets a
// cluster.status event.
func (s *Service) ReportClusterStatus(ctx context.Context, clusterID string, r kpool.ClusterReport) (*kpool.Cluster, error) {
	conds := scrubConditions(r.Conditions)
	id, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if !id.Controller {
		return nil, kpool.Errorf(kpool.CodeForbidden, "only controller identities may report cluster status")
	}
	if err := kpool.ValidateControllerStatus(&kpool.ControllerStatus{ControllerName: "cluster", Conditions: conds}); err != nil {
		return nil, err
	}
	if !kpool.IsUUID(clusterID) {
		return nil, notFound("Cluster", clusterID)
	}
	var out *kpool.Cluster
	err = s.write(ctx, false, func(tx kpool.Tx) error {
		c, err := tx.Cluster(clusterID)
		if err != nil {
			return err
		}
		now := s.now()
		next := *c
		next.Status.Conditions = mergeConditions(c.Status.Conditions, conds, now)
		next.Status.Foreign = replaceList(c.Status.Foreign, r.Foreign)
		next.Status.Unmarked = replaceList(c.Status.Unmarked, r.Unmarked)
		foreignChanged := !sameList(c.Status.Foreign, next.Status.Foreign)
		unmarkedChanged := !sameList(c.Status.Unmarked, next.Status.Unmarked)
		next.Status.Drift = replaceDrift(c.Status.Drift, r.Drift)
		driftChanged := !sameDrift(c.Status.Drift, next.Status.Drift)
		if sameConditions(c.Status.Conditions, next.Status.Conditions) && !foreignChanged && !unmarkedChanged && !driftChanged {
			out = c
			return nil
		}
		next.UpdatedAt = now
		if err := updateCluster(tx, &next); err != nil {
			return err
		}
		out = &next
		ev := audit.ClusterEvent(ctx, kpool.EventClusterStatus, &next, next.Generation, id.Email)
		ev.Detail, ev.CreatedAt = conditionsDetail(conds), now
		if foreignChanged {
			ev.Detail = strings.TrimPrefix(ev.Detail+fmt.Sprintf("; %d foreign pools", len(next.Status.Foreign)), "; ")
		}
		if unmarkedChanged {
			ev.Detail = strings.TrimPrefix(ev.Detail+fmt.Sprintf("; %d unmarked pools", len(next.Status.Unmarked)), "; ")
		}
		if driftChanged {
			ev.Detail = strings.TrimPrefix(ev.Detail+"; "+driftDetail(next.Status.Drift), "; ")
		}
		return tx.AddEvent(ev)
	})
	if err != nil {
		return nil, err
	}
	s.clusters.forget(clusterID)
	return out, nil
}

// replaceList is a reported list in place of old: old when the report has
// none (nil), none when it is empty.
func replaceList[T any](old, reported []T) []T {
	switch {
	case reported == nil:
		return old
	case len(reported) == 0:
		return nil
	}
	return reported
}

// replaceDrift is the drift schedule a report leaves: old when it has
// none, none when it clears it.
func replaceDrift(old, reported *kpool.DriftSchedule) *kpool.DriftSchedule {
	switch {
	case reported == nil:
		return old
	case reported.EverySeconds == 0:
		return nil
	}
	d := *reported
	return &d
}

func sameDrift(a, b *kpool.DriftSchedule) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func driftDetail(d *kpool.DriftSchedule) string {
	if d == nil {
		return "drift checked as configured"
	}
	return d.Notice()
}

// sameList reports whether two lists encode alike.
func sameList[T any](a, b []T) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// mergeConditions returns old with each of set in place of the condition
// of its type (appended when new), stamped by transition.
func mergeConditions(old, set []kpool.Condition, now time.Time) []kpool.Condition {
	out := append([]kpool.Condition(nil), old...)
	for _, c := range set {
		c = kpool.StampTransition(old, c, now)
		replaced := false
		for i := range out {
			if out[i].Type == c.Type {
				out[i], replaced = c, true
			}
		}
		if !replaced {
			out = append(out, c)
		}
	}
	return out
}

func sameConditions(a, b []kpool.Condition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Type != y.Type || x.Status != y.Status || x.Reason != y.Reason || x.Message != y.Message {
			return false
		}
	}
	return true
}

// conditionsDetail is an event's detail for conditions: Type=Status
// (Reason), comma-separated, and for one not True its message (why a
// cluster is not reachable), cut to maxWhy bytes.
func conditionsDetail(cs []kpool.Condition) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.Type + "=" + c.Status
		if c.Reason != "" {
			parts[i] += fmt.Sprintf(" (%s)", c.Reason)
		}
		if c.Status != kpool.ConditionTrue && c.Message != "" {
			parts[i] += ": " + strings.ToValidUTF8(c.Message[:min(len(c.Message), maxWhy)], "")
		}
	}
	return strings.Join(parts, ", ")
}

// maxWhy bounds the message a cluster event quotes.
const maxWhy = 240

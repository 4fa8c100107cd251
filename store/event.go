package store

import (
	"context"
	"strings"
	"time"

	"github.com/kpool/kpool"
)

// The events outbox, which is also the audit trail.

const eventCols = `id, type, object_id, cluster_id, owner, team, generation_before, generation, actor, request_id, trace_parent, detail, created_at, object_name`

func scanEvent(s Scanner) (kpool.Event, error) {
	var e kpool.Event
	err := s.Scan(&e.ID, &e.Type, &e.ObjectID, &e.ClusterID, &e.Owner, &e.Team, &e.GenerationBefore, &e.Generation,
		&e.Actor, &e.RequestID, &e.TraceParent, &e.Detail, timeCol{&e.CreatedAt}, &e.ObjectName)
	return e, err
}

// Events returns up to limit outbox events after the given id.
func (db *DB) Events(ctx context.Context, after int64, limit int) ([]kpool.Event, error) {
	out := []kpool.Event{}
	err := db.db.Read(ctx, db.read(`SELECT `+eventCols+` FROM events WHERE id > ? ORDER BY id LIMIT ?`, []any{after, limit}, func(s Scanner) error {
		e, err := scanEvent(s)
		out = append(out, e)
		return err
	}))
	return out, db.fail(ctx, err)
}

// AuditEvents returns the events f selects, newest first. Each filter is
// a range of an index on (column, id), so a page costs the same at any
// depth of the trail.
func (db *DB) AuditEvents(ctx context.Context, f kpool.EventFilter) ([]kpool.Event, error) {
	var w where
	if f.Owner != "" {
		cond, args := "owner = ?", []any{strings.ToLower(f.Owner)}
		if len(f.Teams) > 0 {
			cond = "(owner = ? OR team IN (?" + strings.Repeat(", ?", len(f.Teams)-1) + "))"
			for _, t := range f.Teams {
				args = append(args, t)
			}
		}
		w.add(cond, args...)
	}
	if f.ClusterID != "" {
		w.add("cluster_id = ?", f.ClusterID)
	}
	if f.ObjectID != "" {
		w.add("object_id = ?", f.ObjectID)
	}
	if kind, ok := strings.CutSuffix(f.Type, "."); ok {
		w.add("type LIKE ?", kind+".%")
	} else if f.Type != "" {
		w.add("type = ?", f.Type)
	}
	if f.Actor != "" {
		w.add("actor = ?", strings.ToLower(f.Actor))
	}
	if f.Before > 0 {
		w.add("id < ?", f.Before)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = kpool.DefaultLimit
	}
	out := []kpool.Event{}
	err := db.db.Read(ctx, db.read(`SELECT `+eventCols+` FROM events`+w.String()+` ORDER BY id DESC LIMIT ?`, append(w.args, limit), func(s Scanner) error {
		e, err := scanEvent(s)
		out = append(out, e)
		return err
	}))
	return out, db.fail(ctx, err)
}

// LastEventID returns the newest event's id.
func (db *DB) LastEventID(ctx context.Context) (int64, error) {
	var id *int64
	err := db.db.Read(ctx, db.read(`SELECT max(id) FROM events`, nil, func(s Scanner) error { return s.Scan(&id) }))
	if id == nil {
		return 0, db.fail(ctx, err)
	}
	return *id, db.fail(ctx, err)
}

// PruneEvents deletes up to limit events created before before, oldest
// first, in one statement of its own (a short transaction, whatever the
// outbox's size). What goes is a run from the bottom of the outbox: of the
// oldest limit events by id, those below the first one that is not old
// enough (clocks of several processes may disagree a little), and never the
// newest event. So every event pruned has a lower id than every event kept,
// and a feed can tell that events after its cursor were pruned (see
// audit.Feed). It returns how many went.
func (db *DB) PruneEvents(ctx context.Context, before time.Time, limit int) (int, error) {
	n, err := db.db.Exec(ctx, db.q(`DELETE FROM events WHERE id IN (
		SELECT id FROM events WHERE id < (SELECT max(id) FROM events) ORDER BY id LIMIT ?)
		AND id < coalesce((SELECT min(w.id) FROM (SELECT id, created_at FROM events ORDER BY id LIMIT ?) w WHERE w.created_at >= ?), 9223372036854775807)`),
		limit, limit, db.d.Time(before))
	return int(n), db.fail(ctx, err)
}

func (t *tx) AddEvent(e *kpool.Event) error {
	t.events++
	return t.queue(`INSERT INTO events (type, object_id, cluster_id, owner, team, generation_before, generation, actor, request_id, trace_parent, detail, created_at, object_name)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		[]any{e.Type, e.ObjectID, e.ClusterID, strings.ToLower(e.Owner), e.Team, e.GenerationBefore, e.Generation, e.Actor, e.RequestID, e.TraceParent, e.Detail,
			t.db.d.Time(e.CreatedAt), e.ObjectName}, plain)
}

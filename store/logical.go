package store

import (
	"context"
	"strings"

	"github.com/kpool/kpool"
)

// Logical pools: reads, and the writes of a transaction.

const logicalCols = `l.id, l.name, l.cluster_id, l.created_by, l.generation, l.resource_version, l.spec, l.status,
	l.created_at, l.updated_at, l.deletion_timestamp, c.created_by, c.team`

// Constraint names of the logical_pools table (see the migrations).
const (
	violationLogicalID   = "logical_pools_pkey"
	violationLogicalName = "logical_pools_cluster_name"
)

func scanLogical(s Scanner) (*kpool.LogicalPool, error) {
	lp := &kpool.LogicalPool{}
	return lp, s.Scan(&lp.ID, &lp.Name, &lp.ClusterID, &lp.CreatedBy, &lp.Generation, &lp.ResourceVersion, jsonCol{&lp.Spec}, jsonCol{&lp.Status},
		timeCol{&lp.CreatedAt}, timeCol{&lp.UpdatedAt}, nullTimeCol{&lp.DeletionTimestamp}, &lp.ClusterOwner, &lp.ClusterTeam)
}

func logicalNotFound(id string) error {
	return &kpool.Error{Code: kpool.CodeNotFound, Message: "LogicalPool not found", Details: id}
}

// logicalRead reads one logical pool with its cluster's owner and team,
// locked with lock (a dialect's row lock, or "").
func (db *DB) logicalRead(id, lock string, out **kpool.LogicalPool) Read {
	return db.read(`SELECT `+logicalCols+` FROM logical_pools l JOIN clusters c ON c.id = l.cluster_id WHERE l.id = ?`+lock,
		[]any{id}, func(s Scanner) (err error) {
			*out, err = scanLogical(s)
			return err
		})
}

// LogicalPool returns one logical pool.
func (db *DB) LogicalPool(ctx context.Context, id string) (*kpool.LogicalPool, error) {
	var lp *kpool.LogicalPool
	err := db.db.Read(ctx, db.logicalRead(id, "", &lp))
	if err == nil && lp == nil {
		err = logicalNotFound(id)
	}
	return lp, db.fail(ctx, err)
}

// LogicalPools lists logical pools in (created_at, id) order, with the
// total. A cluster has few, so the total is a count of the rows selected.
func (db *DB) LogicalPools(ctx context.Context, f kpool.LogicalPoolFilter) ([]*kpool.LogicalPool, int, error) {
	var w where
	visible(&w, f.Owner, f.Teams)
	if f.ClusterID != "" {
		w.add("l.cluster_id = ?", f.ClusterID)
	}
	if f.Name != "" {
		w.add("l.name = ?", f.Name)
	}
	if err := db.addLabels(&w, f.Labels, "l.spec", "template", "labels"); err != nil {
		return nil, 0, err
	}
	read := db.read
	if len(f.Labels) > 0 {
		read = db.readOnce
	}
	from := ` FROM logical_pools l JOIN clusters c ON c.id = l.cluster_id`
	tail, args := db.page(w, f.Page, "l", nil)
	out := []*kpool.LogicalPool{}
	var total int64
	err := db.db.Read(ctx,
		read(`SELECT `+logicalCols+from+tail, args, func(s Scanner) error {
			lp, err := scanLogical(s)
			out = append(out, lp)
			return err
		}),
		read(`SELECT count(*)`+from+w.String(), w.args, func(s Scanner) error { return s.Scan(&total) }))
	if err != nil {
		return nil, 0, db.fail(ctx, err)
	}
	return out, int(total), nil
}

func (t *tx) LogicalPool(id string) (*kpool.LogicalPool, error) {
	var lp *kpool.LogicalPool
	err := t.conn.Read(t.ctx, t.db.logicalRead(id, t.lockOf("l"), &lp))
	if err == nil && lp == nil {
		err = logicalNotFound(id)
	}
	return lp, err
}

func (t *tx) CreateLogicalPool(lp *kpool.LogicalPool) error {
	return t.queue(`INSERT INTO logical_pools (id, name, cluster_id, created_by, generation, resource_version, spec, status,
		created_at, updated_at, deletion_timestamp) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		[]any{lp.ID, lp.Name, lp.ClusterID, strings.ToLower(lp.CreatedBy), lp.Generation, lp.ResourceVersion, mustJSON(lp.Spec), mustJSON(lp.Status),
			t.db.d.Time(lp.CreatedAt), t.db.d.Time(lp.UpdatedAt), t.db.nullTime(lp.DeletionTimestamp)},
		func(_ int64, err error) error {
			name, _ := t.violation(err)
			switch {
			case name == violationLogicalID:
				return idTaken("LogicalPool")
			case name == violationLogicalName:
				return kpool.Errorf(kpool.CodeConflict, "LogicalPool with name '%s' already exists in cluster", lp.Name)
			case name == ViolationForeignKey || strings.HasSuffix(name, "_fkey"):
				return clusterNotFound(lp.ClusterID)
			}
			return err
		})
}

func (t *tx) UpdateLogicalPool(lp *kpool.LogicalPool, from string) error {
	return t.oneRow(`UPDATE logical_pools SET spec = ?, status = ?, updated_at = ?, deletion_timestamp = ?,
		resource_version = ?, generation = ? WHERE id = ? AND resource_version = ?`,
		[]any{mustJSON(lp.Spec), mustJSON(lp.Status), t.db.d.Time(lp.UpdatedAt), t.db.nullTime(lp.DeletionTimestamp),
			lp.ResourceVersion, lp.Generation, lp.ID, from},
		func() error { return kpool.Errorf(kpool.CodeConflict, "LogicalPool '%s' has been modified", lp.Name) })
}

func (t *tx) DeleteLogicalPool(id string) error {
	return t.queue(`DELETE FROM logical_pools WHERE id = ?`, []any{id}, plain)
}

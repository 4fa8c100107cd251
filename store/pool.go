package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/kpool/kpool"
)

// Node pools: reads, and the writes of a transaction.

const poolCols = `p.id, p.name, p.cluster_id, p.created_by, p.generation, p.resource_version, p.spec, p.status, p.created_at, p.updated_at, p.deletion_timestamp, p.provider_name, c.created_by, c.team`

func poolDest(p *kpool.NodePool) []any {
	return []any{&p.ID, &p.Name, &p.ClusterID, &p.CreatedBy, &p.Generation, &p.ResourceVersion, jsonCol{&p.Spec}, jsonCol{&p.Status},
		timeCol{&p.CreatedAt}, timeCol{&p.UpdatedAt}, nullTimeCol{&p.DeletionTimestamp}, &p.ProviderName, &p.ClusterOwner, &p.ClusterTeam}
}

func scanPool(s Scanner) (*kpool.NodePool, error) {
	p := &kpool.NodePool{}
	return p, s.Scan(poolDest(p)...)
}

func scanRawPool(s Scanner) (*kpool.RawNodePool, error) {
	p := &kpool.RawNodePool{}
	return p, s.Scan(&p.ID, &p.Name, &p.ClusterID, &p.CreatedBy, &p.Generation, &p.ResourceVersion, rawCol{&p.Spec}, rawCol{&p.Status},
		timeCol{&p.CreatedAt}, timeCol{&p.UpdatedAt}, nullTimeCol{&p.DeletionTimestamp}, &p.ProviderName, &p.ClusterOwner, &p.ClusterTeam)
}

func poolNotFound(id string) error {
	return &kpool.Error{Code: kpool.CodeNotFound, Message: "NodePool not found", Details: id}
}

// NodePool returns one pool, deleting ones included.
func (db *DB) NodePool(ctx context.Context, id string) (*kpool.NodePool, error) {
	r, err := db.RawNodePool(ctx, id)
	if err != nil {
		return nil, err
	}
	return r.Decode()
}

// RawNodePool returns one pool with its spec and status as stored.
func (db *DB) RawNodePool(ctx context.Context, id string) (*kpool.RawNodePool, error) {
	var p *kpool.RawNodePool
	err := db.db.Read(ctx, db.read(`SELECT `+poolCols+` FROM nodepools p JOIN clusters c ON c.id = p.cluster_id WHERE p.id = ?`,
		[]any{id}, func(s Scanner) (err error) {
			p, err = scanRawPool(s)
			return err
		}))
	if err == nil && p == nil {
		err = poolNotFound(id)
	}
	return p, db.fail(ctx, err)
}

// where builds a WHERE clause from conditions joined by AND.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

func (w *where) String() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// page returns the ORDER BY/LIMIT/OFFSET tail with the keyset condition. The
// cursor is a row value, so that it is a range of the (…, created_at, id)
// index rather than a filter over the rows before it: a page costs the same
// at any depth.
func (db *DB) page(w where, p kpool.Page, table string) (string, []any) {
	all := where{conds: append([]string(nil), w.conds...), args: append([]any(nil), w.args...)}
	if p.After != nil {
		all.add(fmt.Sprintf("(%[1]s.created_at, %[1]s.id) > (?, ?)", table), db.d.Time(p.After.CreatedAt), p.After.ID)
	}
	tail := fmt.Sprintf("%s ORDER BY %[2]s.created_at, %[2]s.id LIMIT ? OFFSET ?", all.String(), table)
	return tail, append(all.args, p.Limit, p.Offset)
}

// NodePools lists pools in (created_at, id) order, with the total.
func (db *DB) NodePools(ctx context.Context, f kpool.NodePoolFilter) ([]*kpool.NodePool, int, error) {
	raw, total, err := db.RawNodePools(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	out := make([]*kpool.NodePool, len(raw))
	for i, r := range raw {
		if out[i], err = r.Decode(); err != nil {
			return nil, 0, err
		}
	}
	return out, total, nil
}

// RawNodePools lists pools with their spec and status as stored. The page
// is an index range and the total a sum over the counters the schema's
// triggers keep per cluster, phase and health, so a page costs the same at
// any depth, with ten pools or a million.
func (db *DB) RawNodePools(ctx context.Context, f kpool.NodePoolFilter) ([]*kpool.RawNodePool, int, error) {
	var w, cw where
	visible(&w, f.Owner, f.Teams)
	visible(&cw, f.Owner, f.Teams)
	if f.ClusterID != "" {
		w.add("p.cluster_id = ?", f.ClusterID)
		cw.add("k.cluster_id = ?", f.ClusterID)
	}
	if f.Phase != "" {
		w.add("p.phase = ?", string(f.Phase))
		cw.add("k.phase = ?", string(f.Phase))
	}
	if f.Health != "" {
		w.add("p.health = ?", string(f.Health))
		cw.add("k.health = ?", string(f.Health))
	}
	count := `SELECT coalesce(sum(k.n), 0) FROM nodepool_counts k`
	if f.Owner != "" {
		count += ` JOIN clusters c ON c.id = k.cluster_id`
	}
	count += cw.String()
	if f.Name != "" {
		w.add("p.name = ?", f.Name)
	}
	if err := db.addLabels(&w, f.Labels, "p.spec", "labels"); err != nil {
		return nil, 0, err
	}
	read := db.read
	if f.Name != "" || len(f.Labels) > 0 {
		// The counters are per cluster, phase and health: a name or a
		// label selector is counted over the rows it picks.
		count, cw = `SELECT count(*) FROM nodepools p JOIN clusters c ON c.id = p.cluster_id`+w.String(), w
	}
	if len(f.Labels) > 0 {
		read = db.readOnce
	}
	tail, args := db.page(w, f.Page, "p")
	out := []*kpool.RawNodePool{}
	var total int64
	err := db.db.Read(ctx,
		read(`SELECT `+poolCols+` FROM nodepools p JOIN clusters c ON c.id = p.cluster_id`+tail, args, func(s Scanner) error {
			p, err := scanRawPool(s)
			out = append(out, p)
			return err
		}),
		read(count, cw.args, func(s Scanner) error { return s.Scan(&total) }))
	if err != nil {
		return nil, 0, db.fail(ctx, err)
	}
	return out, int(total), nil
}

// ControllerStatuses returns every controller's report on a pool, by name.
func (db *DB) ControllerStatuses(ctx context.Context, poolID string) ([]kpool.ControllerStatus, error) {
	out := []kpool.ControllerStatus{}
	return out, db.fail(ctx, db.db.Read(ctx, db.statusesRead(poolID, &out)))
}

func (db *DB) statusesRead(poolID string, out *[]kpool.ControllerStatus) Read {
	return db.read(`SELECT controller_name, observed_generation, conditions, metadata, updated_at
		FROM nodepool_controller_status WHERE nodepool_id = ? ORDER BY controller_name`, []any{poolID}, func(s Scanner) error {
		var cs kpool.ControllerStatus
		if err := s.Scan(&cs.ControllerName, &cs.ObservedGeneration, jsonCol{&cs.Conditions}, rawCol{&cs.Metadata}, timeCol{&cs.UpdatedAt}); err != nil {
			return err
		}
		if cs.Conditions == nil {
			cs.Conditions = []kpool.Condition{}
		}
		*out = append(*out, cs)
		return nil
	})
}

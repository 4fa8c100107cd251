package store

import (
	"context"
	"slices"

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
// is an index range (see page) and the total a sum over the counters the
// schema's triggers keep per cluster, phase and health, so a page costs the
// same at any depth, with ten pools or a million, whatever other clusters
// hold.
func (db *DB) RawNodePools(ctx context.Context, f kpool.NodePoolFilter) ([]*kpool.RawNodePool, int, error) {
	if f.ClusterID != "" && f.Owner != "" {
		// Whether the caller sees the cluster is read first, by its key:
		// as a condition of the join it made SQLite read the owner's
		// clusters first and sort all of the cluster's pools for a page.
		seen, err := db.sees(ctx, f.ClusterID, f.Owner, f.Teams)
		if err != nil || !seen {
			return []*kpool.RawNodePool{}, 0, err
		}
		f.Owner, f.Teams = "", nil
	}
	var w, cw where
	visible(&w, f.Owner, f.Teams)
	visible(&cw, f.Owner, f.Teams)
	keys, rest := poolKeys(f)
	cw = cw.with("k", slices.Concat(keys, rest))
	w = w.with("p", rest)
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
		cw = w.with("p", keys)
		count = `SELECT count(*) FROM nodepools p JOIN clusters c ON c.id = p.cluster_id` + cw.String()
	}
	if len(f.Labels) > 0 {
		read = db.readOnce
	}
	tail, args := db.page(w, f.Page, "p", keys)
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

// sees reports whether owner (or one of teams) sees the cluster id.
func (db *DB) sees(ctx context.Context, id, owner string, teams []string) (bool, error) {
	w := where{conds: []string{"c.id = ?"}, args: []any{id}}
	visible(&w, owner, teams)
	found := false
	err := db.db.Read(ctx, db.read(`SELECT 1 FROM clusters c`+w.String(), w.args, func(Scanner) error {
		found = true
		return nil
	}))
	return found, db.fail(ctx, err)
}

// poolKeys splits the columns f fixes into the keys of the index its pages
// are ranges of (the migrations' (…, created_at, id) indexes: cluster, then
// phase or health; or phase; or health) and the rest, conditions on the rows
// of that range. A name picks one pool per cluster through its unique
// index: then every column is a condition.
func poolKeys(f kpool.NodePoolFilter) (keys, rest []key) {
	n := 1
	if f.ClusterID != "" {
		keys, n = append(keys, key{"cluster_id", f.ClusterID}), 2
	}
	if f.Phase != "" {
		keys = append(keys, key{"phase", string(f.Phase)})
	}
	if f.Health != "" {
		keys = append(keys, key{"health", string(f.Health)})
	}
	if f.Name != "" {
		n = 0
	}
	n = min(n, len(keys))
	return keys[:n], keys[n:]
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

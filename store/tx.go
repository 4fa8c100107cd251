package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/kpool/kpool"
)

// tx implements kpool.Tx on a Conn. Reads go out at once; writes may be
// queued until the next read or the commit (see Conn).
type tx struct {
	db     *DB
	conn   Conn
	ctx    context.Context
	events int
	// In a shared transaction, tag is this write's place and failed is set
	// to the tag of the first write whose statement failed.
	tag    int
	failed *int
}

// lockOf returns the dialect's row lock for table alias a in a join.
func (t *tx) lockOf(a string) string {
	return strings.Replace(t.db.d.LockSuffix, "UPDATE", "UPDATE OF "+a, 1)
}

func (t *tx) Cluster(id string) (*kpool.Cluster, error) {
	var c *kpool.Cluster
	err := t.conn.Read(t.ctx, t.db.clusterRead(id, t.db.d.LockSuffix, &c))
	if err == nil && c == nil {
		err = clusterNotFound(id)
	}
	return c, err
}

func (t *tx) NodePool(id string) (*kpool.NodePool, *kpool.Cluster, []kpool.ControllerStatus, error) {
	var p *kpool.NodePool
	var c *kpool.Cluster
	reports := []kpool.ControllerStatus{}
	err := t.conn.Read(t.ctx,
		t.db.read(`SELECT `+poolCols+`, `+clusterCols+` FROM nodepools p JOIN clusters c ON c.id = p.cluster_id WHERE p.id = ?`+t.lockOf("p"),
			[]any{id}, func(s Scanner) error {
				p, c = &kpool.NodePool{}, &kpool.Cluster{}
				return s.Scan(append(poolDest(p), clusterDest(c)...)...)
			}),
		t.db.statusesRead(id, &reports))
	if err == nil && p == nil {
		err = poolNotFound(id)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	return p, c, reports, nil
}

func (t *tx) LiveNodePools(clusterID string) ([]*kpool.NodePool, error) {
	var out []*kpool.NodePool
	err := t.conn.Read(t.ctx, t.db.read(`SELECT `+poolCols+` FROM nodepools p JOIN clusters c ON c.id = p.cluster_id
		WHERE p.cluster_id = ? ORDER BY p.created_at, p.id`+t.lockOf("p"), []any{clusterID}, func(s Scanner) error {
		p, err := scanPool(s)
		out = append(out, p)
		return err
	}))
	return out, err
}

func (t *tx) HasNodePools(clusterID string) (bool, error) {
	found := false
	err := t.conn.Read(t.ctx, t.db.read(`SELECT 1 FROM nodepools WHERE cluster_id = ? LIMIT 1`, []any{clusterID}, func(Scanner) error {
		found = true
		return nil
	}))
	return found, err
}

func (t *tx) ProviderNamesTaken(clusterID string, names []string) ([]string, error) {
	taken := []string{}
	if len(names) == 0 {
		return taken, nil
	}
	args := []any{clusterID}
	for _, n := range names {
		args = append(args, n)
	}
	in := strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", ")
	err := t.conn.Read(t.ctx, t.db.read(`SELECT provider_name FROM nodepools WHERE cluster_id = ? AND provider_name IN (`+in+`)`, args,
		func(s Scanner) error {
			var n string
			err := s.Scan(&n)
			taken = append(taken, n)
			return err
		}))
	return taken, err
}

func (t *tx) ControllerStatuses(poolID string) ([]kpool.ControllerStatus, error) {
	out := []kpool.ControllerStatus{}
	return out, t.conn.Read(t.ctx, t.db.statusesRead(poolID, &out))
}

func (t *tx) Flush() error { return t.conn.Flush(t.ctx) }

// queue runs or queues a write; check maps its outcome.
func (t *tx) queue(query string, args []any, check func(n int64, err error) error) error {
	if t.failed != nil {
		inner := check
		check = func(n int64, err error) error {
			err = inner(n, err)
			if err != nil && *t.failed < 0 {
				*t.failed = t.tag
			}
			return err
		}
	}
	return t.conn.Queue(t.ctx, t.db.q(query), args, check)
}

// plain is the check of a write whose only failure is the database's error.
func plain(_ int64, err error) error { return err }

// oneRow makes an UPDATE fail the transaction unless it changed exactly one
// row: in SQL where writes are pipelined (Dialect.OneRow), otherwise here.
func (t *tx) oneRow(update string, args []any, stale func() error) error {
	if t.db.d.OneRow != nil {
		update = t.db.d.OneRow(update)
	}
	return t.queue(update, args, func(n int64, err error) error {
		switch name, _ := t.violation(err); name {
		case violationStale:
			return stale()
		case violationCloudID:
			return kpool.ErrCloudClusterTaken
		}
		if err == nil && n != 1 {
			return stale()
		}
		return err
	})
}

func (t *tx) violation(err error) (string, bool) {
	if err == nil || t.db.d.Violation == nil {
		return "", false
	}
	return t.db.d.Violation(err)
}

// idTaken is the answer to a create whose id is in use: the same whoever
// owns the object, naming neither it nor its id, so that a create cannot
// tell another user's object from one's own (ids are random UUIDs; one
// chosen by the client is only ever refused).
func idTaken(kind string) error {
	return &kpool.Error{Code: kpool.CodeConflict, Message: kind + " id is taken",
		Details: "choose another id, or leave id out and the server picks one"}
}

func (t *tx) CreateNodePool(p *kpool.NodePool, clusterGeneration int64) error {
	if err := t.expectGeneration(p.ClusterID, clusterGeneration); err != nil {
		return err
	}
	return t.queue(`INSERT INTO nodepools (id, name, cluster_id, created_by, generation, resource_version, spec, status, phase, health,
		created_at, updated_at, deletion_timestamp, provider_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		[]any{p.ID, p.Name, p.ClusterID, strings.ToLower(p.CreatedBy), p.Generation, p.ResourceVersion, mustJSON(p.Spec), mustJSON(p.Status),
			string(p.Status.Phase), string(p.Status.Health), t.db.d.Time(p.CreatedAt), t.db.d.Time(p.UpdatedAt), t.db.nullTime(p.DeletionTimestamp), p.ProviderName},
		func(_ int64, err error) error {
			name, _ := t.violation(err)
			switch {
			case name == violationPoolID:
				return idTaken("NodePool")
			case name == violationPoolName:
				return kpool.Errorf(kpool.CodeConflict, "NodePool with name '%s' already exists in cluster", p.Name)
			case name == violationProviderName:
				return fmt.Errorf("%w: %q", kpool.ErrProviderNameTaken, p.ProviderName)
			case name == violationClusterDeleting:
				return kpool.ErrClusterDeleting
			case name == violationClusterChanged:
				return kpool.ErrClusterChanged
			case name == ViolationForeignKey || strings.HasSuffix(name, "_fkey"):
				return clusterNotFound(p.ClusterID)
			}
			return err
		})
}

// expectGeneration makes the next pool insert fail unless the cluster is at
// generation: in the insert's trigger where the dialect pipelines, otherwise
// by reading the cluster here (a local read costs no round trip).
func (t *tx) expectGeneration(clusterID string, generation int64) error {
	if t.db.d.ExpectGeneration != "" {
		return t.queue(t.db.d.ExpectGeneration, []any{strconv.FormatInt(generation, 10)}, plain)
	}
	var got *int64
	err := t.conn.Read(t.ctx, t.db.read(`SELECT generation FROM clusters WHERE id = ?`, []any{clusterID}, func(s Scanner) error {
		return s.Scan(&got)
	}))
	switch {
	case err != nil:
		return err
	case got == nil:
		return clusterNotFound(clusterID)
	case *got != generation:
		return kpool.ErrClusterChanged
	}
	return nil
}

func (t *tx) UpdateNodePool(p *kpool.NodePool, from string) error {
	return t.oneRow(`UPDATE nodepools SET spec = ?, status = ?, phase = ?, health = ?, updated_at = ?,
		deletion_timestamp = ?, resource_version = ?, generation = ?, provider_name = ? WHERE id = ? AND resource_version = ?`,
		[]any{mustJSON(p.Spec), mustJSON(p.Status), string(p.Status.Phase), string(p.Status.Health), t.db.d.Time(p.UpdatedAt),
			t.db.nullTime(p.DeletionTimestamp), p.ResourceVersion, p.Generation, p.ProviderName, p.ID, from},
		func() error { return kpool.Errorf(kpool.CodeConflict, "NodePool '%s' has been modified", p.Name) })
}

func (t *tx) DeleteNodePool(id string) error {
	if err := t.queue(`DELETE FROM nodepool_controller_status WHERE nodepool_id = ?`, []any{id}, plain); err != nil {
		return err
	}
	return t.queue(`DELETE FROM nodepools WHERE id = ?`, []any{id}, plain)
}

func (t *tx) PutControllerStatus(poolID string, cs *kpool.ControllerStatus) error {
	meta := string(cs.Metadata)
	if meta == "" {
		meta = "{}"
	}
	conds := cs.Conditions
	if conds == nil {
		conds = []kpool.Condition{}
	}
	return t.queue(`INSERT INTO nodepool_controller_status (nodepool_id, controller_name, observed_generation, conditions, metadata, updated_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (nodepool_id, controller_name) DO UPDATE SET observed_generation = excluded.observed_generation,
		conditions = excluded.conditions, metadata = excluded.metadata, updated_at = excluded.updated_at`,
		[]any{poolID, cs.ControllerName, cs.ObservedGeneration, mustJSON(conds), meta, t.db.d.Time(cs.UpdatedAt)}, plain)
}

var _ kpool.Store = (*DB)(nil)

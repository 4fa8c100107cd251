// Package store implements kpool.Store on database/sql. The SQL is shared;
// store/sqlite and store/postgres supply the driver, the schema migrations and
// a Dialect for what differs (placeholders, row locks, time encoding, errors).
package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kpool/kpool"
)

// Dialect is what differs between the SQL databases kpool runs on.
type Dialect struct {
	// Numbered placeholders ($1, $2…) instead of ?.
	Numbered bool
	// LockSuffix locks the rows a SELECT returns (" FOR UPDATE"), or "" where
	// the whole database is locked by a write transaction (SQLite).
	LockSuffix string
	// Time encodes a time for a query parameter.
	Time func(time.Time) any
	// UniqueViolation reports whether err is a unique-constraint violation.
	UniqueViolation func(error) bool
	// Retryable reports whether a transaction failed only because it ran
	// against another (deadlock, serialization); Write then runs it again.
	Retryable func(error) bool
	// AfterEvent runs in the transaction after its first event is added,
	// e.g. to NOTIFY other processes on commit. May be nil.
	AfterEvent func(ctx context.Context, tx *sql.Tx, e *kpool.Event) error
}

// DB is a kpool.Store on a SQL database. Writes go through the write pool
// (one connection on SQLite, so writers queue in Go instead of spinning on
// a lock); reads use the read pool.
type DB struct {
	read, write *sql.DB
	d           Dialect

	mu   sync.Mutex
	subs map[chan struct{}]bool
	// Listen, when set, delivers other processes' commits: it calls wake
	// for each until ctx ends (PostgreSQL LISTEN). It is started with the
	// first subscriber.
	Listen    func(ctx context.Context, wake func())
	listening bool
	stop      context.CancelFunc
}

// New returns a Store on the given pools (which may be the same) and dialect.
// The schema must already be migrated.
func New(read, write *sql.DB, d Dialect) *DB {
	return &DB{read: read, write: write, d: d, subs: map[chan struct{}]bool{}}
}

// Close closes both pools.
func (db *DB) Close() error {
	db.mu.Lock()
	if db.stop != nil {
		db.stop()
	}
	db.mu.Unlock()
	err := db.write.Close()
	if db.read != db.write {
		err = errors.Join(err, db.read.Close())
	}
	return err
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.read.PingContext(ctx); err != nil {
		return fmt.Errorf("database unreachable: %w", err)
	}
	return nil
}

// q rewrites ? placeholders for the dialect.
func (db *DB) q(query string) string { return rebind(query, db.d.Numbered) }

func rebind(query string, numbered bool) string {
	if !numbered {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func newResourceVersion() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b[:])
}

// timeCol scans a time stored either as a native timestamp or as text.
type timeCol struct{ t *time.Time }

func (c timeCol) Scan(v any) error {
	switch x := v.(type) {
	case time.Time:
		*c.t = x.UTC()
	case string:
		return c.parse(x)
	case []byte:
		return c.parse(string(x))
	default:
		return fmt.Errorf("cannot scan %T into a time", v)
	}
	return nil
}

func (c timeCol) parse(s string) error {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return err
	}
	*c.t = t.UTC()
	return nil
}

// nullTimeCol scans a nullable time into a *time.Time.
type nullTimeCol struct{ t **time.Time }

func (c nullTimeCol) Scan(v any) error {
	if v == nil {
		*c.t = nil
		return nil
	}
	var t time.Time
	if err := (timeCol{&t}).Scan(v); err != nil {
		return err
	}
	*c.t = &t
	return nil
}

// jsonCol scans a JSON column into a Go value.
type jsonCol struct{ v any }

func (c jsonCol) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return json.Unmarshal([]byte(x), c.v)
	case []byte:
		return json.Unmarshal(x, c.v)
	}
	return fmt.Errorf("cannot scan %T as JSON", v)
}

func (db *DB) nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return db.d.Time(*t)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // kpool's own types always marshal
	}
	return string(b)
}

// queryer is what reads need from a pool or a transaction.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

const clusterCols = `c.id, c.name, c.created_by, c.generation, c.resource_version, c.spec, c.status, c.created_at, c.updated_at, c.deletion_timestamp`

func scanCluster(s interface{ Scan(...any) error }) (*kpool.Cluster, error) {
	c := &kpool.Cluster{}
	err := s.Scan(&c.ID, &c.Name, &c.CreatedBy, &c.Generation, &c.ResourceVersion, jsonCol{&c.Spec}, jsonCol{&c.Status},
		timeCol{&c.CreatedAt}, timeCol{&c.UpdatedAt}, nullTimeCol{&c.DeletionTimestamp})
	return c, err
}

const poolCols = `p.id, p.name, p.cluster_id, p.created_by, p.generation, p.resource_version, p.spec, p.status, p.created_at, p.updated_at, p.deletion_timestamp, p.provider_name, c.created_by`

func scanPool(s interface{ Scan(...any) error }) (*kpool.NodePool, error) {
	p := &kpool.NodePool{}
	err := s.Scan(&p.ID, &p.Name, &p.ClusterID, &p.CreatedBy, &p.Generation, &p.ResourceVersion, jsonCol{&p.Spec}, jsonCol{&p.Status},
		timeCol{&p.CreatedAt}, timeCol{&p.UpdatedAt}, nullTimeCol{&p.DeletionTimestamp}, &p.ProviderName, &p.ClusterOwner)
	return p, err
}

func (db *DB) cluster(ctx context.Context, q queryer, id string, lock bool) (*kpool.Cluster, error) {
	query := `SELECT ` + clusterCols + ` FROM clusters c WHERE c.id = ?`
	if lock {
		query += db.d.LockSuffix
	}
	c, err := scanCluster(q.QueryRowContext(ctx, db.q(query), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &kpool.Error{Code: kpool.CodeNotFound, Message: "Cluster not found", Details: id}
	}
	return c, err
}

func (db *DB) pool(ctx context.Context, q queryer, id string, lock bool) (*kpool.NodePool, error) {
	query := `SELECT ` + poolCols + ` FROM nodepools p JOIN clusters c ON c.id = p.cluster_id WHERE p.id = ?`
	if lock {
		query += strings.Replace(db.d.LockSuffix, "UPDATE", "UPDATE OF p", 1)
	}
	p, err := scanPool(q.QueryRowContext(ctx, db.q(query), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &kpool.Error{Code: kpool.CodeNotFound, Message: "NodePool not found", Details: id}
	}
	return p, err
}

// Cluster returns one cluster, deleting ones included.
func (db *DB) Cluster(ctx context.Context, id string) (*kpool.Cluster, error) {
	return db.cluster(ctx, db.read, id, false)
}

// NodePool returns one pool, deleting ones included.
func (db *DB) NodePool(ctx context.Context, id string) (*kpool.NodePool, error) {
	return db.pool(ctx, db.read, id, false)
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

// page returns the ORDER BY/LIMIT/OFFSET tail and adds the cursor condition.
func (db *DB) page(w *where, p kpool.Page, table string) (string, []any) {
	all := *w
	all.conds = append([]string(nil), w.conds...)
	all.args = append([]any(nil), w.args...)
	if p.After != nil {
		all.add(fmt.Sprintf("(%[1]s.created_at > ? OR (%[1]s.created_at = ? AND %[1]s.id > ?))", table),
			db.d.Time(p.After.CreatedAt), db.d.Time(p.After.CreatedAt), p.After.ID)
	}
	tail := fmt.Sprintf("%s ORDER BY %[2]s.created_at, %[2]s.id LIMIT ? OFFSET ?", all.String(), table)
	return tail, append(all.args, p.Limit, p.Offset)
}

// Clusters lists clusters in (created_at, id) order with the total count.
func (db *DB) Clusters(ctx context.Context, f kpool.ClusterFilter) ([]*kpool.Cluster, int, error) {
	var w where
	if f.Owner != "" {
		w.add("c.created_by = ?", strings.ToLower(f.Owner))
	}
	tail, args := db.page(&w, f.Page, "c")
	rows, err := db.read.QueryContext(ctx, db.q(`SELECT `+clusterCols+` FROM clusters c`+tail), args...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := []*kpool.Cluster{}
	for rows.Next() {
		c, err := scanCluster(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	var total int
	err = db.read.QueryRowContext(ctx, db.q(`SELECT count(*) FROM clusters c`+w.String()), w.args...).Scan(&total)
	return out, total, err
}

// NodePools lists pools in (created_at, id) order with the total count.
func (db *DB) NodePools(ctx context.Context, f kpool.NodePoolFilter) ([]*kpool.NodePool, int, error) {
	var w where
	if f.Owner != "" {
		w.add("c.created_by = ?", strings.ToLower(f.Owner))
	}
	if f.ClusterID != "" {
		w.add("p.cluster_id = ?", f.ClusterID)
	}
	if f.Phase != "" {
		w.add("p.phase = ?", string(f.Phase))
	}
	if f.Health != "" {
		w.add("p.health = ?", string(f.Health))
	}
	from := ` FROM nodepools p JOIN clusters c ON c.id = p.cluster_id`
	tail, args := db.page(&w, f.Page, "p")
	rows, err := db.read.QueryContext(ctx, db.q(`SELECT `+poolCols+from+tail), args...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := []*kpool.NodePool{}
	for rows.Next() {
		p, err := scanPool(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	var total int
	err = db.read.QueryRowContext(ctx, db.q(`SELECT count(*)`+from+w.String()), w.args...).Scan(&total)
	return out, total, err
}

// ControllerStatuses returns every controller's report on a pool, by name.
func (db *DB) ControllerStatuses(ctx context.Context, poolID string) ([]kpool.ControllerStatus, error) {
	return db.statuses(ctx, db.read, poolID)
}

func (db *DB) statuses(ctx context.Context, q queryer, poolID string) ([]kpool.ControllerStatus, error) {
	rows, err := q.QueryContext(ctx, db.q(`SELECT controller_name, observed_generation, conditions, metadata, updated_at
		FROM nodepool_controller_status WHERE nodepool_id = ? ORDER BY controller_name`), poolID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []kpool.ControllerStatus{}
	for rows.Next() {
		var cs kpool.ControllerStatus
		var meta string
		if err := rows.Scan(&cs.ControllerName, &cs.ObservedGeneration, jsonCol{&cs.Conditions}, &meta, timeCol{&cs.UpdatedAt}); err != nil {
			return nil, err
		}
		cs.Metadata = json.RawMessage(meta)
		if cs.Conditions == nil {
			cs.Conditions = []kpool.Condition{}
		}
		out = append(out, cs)
	}
	return out, rows.Err()
}

// Events returns up to limit outbox events after the given id.
func (db *DB) Events(ctx context.Context, after int64, limit int) ([]kpool.Event, error) {
	rows, err := db.read.QueryContext(ctx, db.q(`SELECT id, type, object_id, cluster_id, generation, actor, created_at
		FROM events WHERE id > ? ORDER BY id LIMIT ?`), after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []kpool.Event{}
	for rows.Next() {
		var e kpool.Event
		if err := rows.Scan(&e.ID, &e.Type, &e.ObjectID, &e.ClusterID, &e.Generation, &e.Actor, timeCol{&e.CreatedAt}); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// Write runs fn in one transaction and commits it. A transaction that lost a
// deadlock or serialization race is run again, up to three times.
func (db *DB) Write(ctx context.Context, fn func(kpool.Tx) error) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		err = db.write1(ctx, fn)
		if err == nil || db.d.Retryable == nil || !db.d.Retryable(err) {
			return err
		}
	}
	return err
}

func (db *DB) write1(ctx context.Context, fn func(kpool.Tx) error) error {
	sqlTx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	t := &tx{db: db, tx: sqlTx, ctx: ctx}
	if err := fn(t); err != nil {
		_ = sqlTx.Rollback()
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		return err
	}
	if t.events > 0 {
		db.wake()
	}
	return nil
}

// Subscribe returns a channel woken after writes with events commit.
func (db *DB) Subscribe(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{}, 1)
	db.mu.Lock()
	db.subs[ch] = true
	if db.Listen != nil && !db.listening {
		db.listening = true
		lctx, cancel := context.WithCancel(context.Background())
		db.stop = cancel
		go db.Listen(lctx, db.wake)
	}
	db.mu.Unlock()
	go func() {
		<-ctx.Done()
		db.mu.Lock()
		delete(db.subs, ch)
		close(ch)
		db.mu.Unlock()
	}()
	return ch
}

// wake tells every subscriber that events may have arrived.
func (db *DB) wake() {
	db.mu.Lock()
	defer db.mu.Unlock()
	for ch := range db.subs {
		select {
		case ch <- struct{}{}:
		default: // already woken; the reader will see every event
		}
	}
}

// LastEventID returns the newest event's id.
func (db *DB) LastEventID(ctx context.Context) (int64, error) {
	var id sql.NullInt64
	err := db.read.QueryRowContext(ctx, `SELECT max(id) FROM events`).Scan(&id)
	return id.Int64, err
}

// AcquireLease takes or renews a lease in one statement: it is written
// only where it is free, expired, or already the holder's.
func (db *DB) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	now := time.Now().UTC()
	_, err := db.write.ExecContext(ctx, db.q(`INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
		WHERE leases.holder = excluded.holder OR leases.expires_at < ?`), name, holder, db.d.Time(now.Add(ttl)), db.d.Time(now))
	if err != nil {
		return false, err
	}
	var got string
	if err := db.write.QueryRowContext(ctx, db.q(`SELECT holder FROM leases WHERE name = ?`), name).Scan(&got); err != nil {
		return false, err
	}
	return got == holder, nil
}

// ReleaseLease expires the lease if holder has it, so a standby need not
// wait for it to run out.
func (db *DB) ReleaseLease(ctx context.Context, name, holder string) error {
	_, err := db.write.ExecContext(ctx, db.q(`UPDATE leases SET expires_at = ? WHERE name = ? AND holder = ?`),
		db.d.Time(time.Unix(0, 0).UTC()), name, holder)
	return err
}

// tx implements kpool.Tx.
type tx struct {
	db     *DB
	tx     *sql.Tx
	ctx    context.Context
	events int
}

func (t *tx) exec(query string, args ...any) (sql.Result, error) {
	return t.tx.ExecContext(t.ctx, t.db.q(query), args...)
}

func (t *tx) Cluster(id string) (*kpool.Cluster, error)   { return t.db.cluster(t.ctx, t.tx, id, true) }
func (t *tx) NodePool(id string) (*kpool.NodePool, error) { return t.db.pool(t.ctx, t.tx, id, true) }

func (t *tx) LiveNodePools(clusterID string) ([]*kpool.NodePool, error) {
	rows, err := t.tx.QueryContext(t.ctx, t.db.q(`SELECT `+poolCols+` FROM nodepools p JOIN clusters c ON c.id = p.cluster_id
		WHERE p.cluster_id = ? ORDER BY p.created_at, p.id`+strings.Replace(t.db.d.LockSuffix, "UPDATE", "UPDATE OF p", 1)), clusterID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*kpool.NodePool
	for rows.Next() {
		p, err := scanPool(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

func (t *tx) ControllerStatuses(poolID string) ([]kpool.ControllerStatus, error) {
	return t.db.statuses(t.ctx, t.tx, poolID)
}

func (t *tx) CreateCluster(c *kpool.Cluster) error {
	c.CreatedBy = strings.ToLower(c.CreatedBy)
	c.ResourceVersion = newResourceVersion()
	if err := t.idFree("clusters", "Cluster", c.ID); err != nil {
		return err
	}
	_, err := t.exec(`INSERT INTO clusters (id, name, created_by, generation, resource_version, spec, status, created_at, updated_at, deletion_timestamp)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.Name, c.CreatedBy, c.Generation, c.ResourceVersion, mustJSON(c.Spec), mustJSON(c.Status),
		t.db.d.Time(c.CreatedAt), t.db.d.Time(c.UpdatedAt), t.db.nullTime(c.DeletionTimestamp))
	if err != nil && t.db.d.UniqueViolation(err) {
		return kpool.Errorf(kpool.CodeConflict, "Cluster with name '%s' already exists", c.Name)
	}
	return err
}

func (t *tx) UpdateCluster(c *kpool.Cluster, specChanged bool) error {
	rv := newResourceVersion()
	err := t.tx.QueryRowContext(t.ctx, t.db.q(`UPDATE clusters SET spec = ?, status = ?, updated_at = ?, deletion_timestamp = ?,
		resource_version = ?, generation = generation + ? WHERE id = ? AND resource_version = ? RETURNING generation`),
		mustJSON(c.Spec), mustJSON(c.Status), t.db.d.Time(c.UpdatedAt), t.db.nullTime(c.DeletionTimestamp),
		rv, bump(specChanged), c.ID, c.ResourceVersion).Scan(&c.Generation)
	if errors.Is(err, sql.ErrNoRows) {
		return kpool.Errorf(kpool.CodeConflict, "Cluster '%s' has been modified", c.Name)
	}
	if err == nil {
		c.ResourceVersion = rv
	}
	return err
}

// idFree refuses an id that is taken, so that a client-chosen id that
// collides gets a CONFLICT that says so rather than one about the name.
func (t *tx) idFree(table, kind, id string) error {
	var n int
	if err := t.tx.QueryRowContext(t.ctx, t.db.q(`SELECT count(*) FROM `+table+` WHERE id = ?`), id).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return kpool.Errorf(kpool.CodeConflict, "%s with id %s already exists", kind, id)
	}
	return nil
}

func bump(changed bool) int {
	if changed {
		return 1
	}
	return 0
}

func (t *tx) DeleteCluster(id string) error {
	_, err := t.exec(`DELETE FROM clusters WHERE id = ?`, id)
	return err
}

func (t *tx) CreateNodePool(p *kpool.NodePool) error {
	p.ResourceVersion = newResourceVersion()
	if err := t.idFree("nodepools", "NodePool", p.ID); err != nil {
		return err
	}
	_, err := t.exec(`INSERT INTO nodepools (id, name, cluster_id, created_by, generation, resource_version, spec, status, phase, health,
		created_at, updated_at, deletion_timestamp, provider_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.ID, p.Name, p.ClusterID, strings.ToLower(p.CreatedBy), p.Generation, p.ResourceVersion, mustJSON(p.Spec), mustJSON(p.Status),
		string(p.Status.Phase), string(p.Status.Health), t.db.d.Time(p.CreatedAt), t.db.d.Time(p.UpdatedAt), t.db.nullTime(p.DeletionTimestamp), p.ProviderName)
	if err != nil && t.db.d.UniqueViolation(err) {
		return kpool.Errorf(kpool.CodeConflict, "NodePool with name '%s' already exists in cluster", p.Name) // or its provider name, which the service keeps distinct
	}
	return err
}

func (t *tx) UpdateNodePool(p *kpool.NodePool, specChanged bool) error {
	rv := newResourceVersion()
	err := t.tx.QueryRowContext(t.ctx, t.db.q(`UPDATE nodepools SET spec = ?, status = ?, phase = ?, health = ?, updated_at = ?,
		deletion_timestamp = ?, resource_version = ?, generation = generation + ? WHERE id = ? AND resource_version = ? RETURNING generation`),
		mustJSON(p.Spec), mustJSON(p.Status), string(p.Status.Phase), string(p.Status.Health), t.db.d.Time(p.UpdatedAt),
		t.db.nullTime(p.DeletionTimestamp), rv, bump(specChanged), p.ID, p.ResourceVersion).Scan(&p.Generation)
	if errors.Is(err, sql.ErrNoRows) {
		return kpool.Errorf(kpool.CodeConflict, "NodePool '%s' has been modified", p.Name)
	}
	if err == nil {
		p.ResourceVersion = rv
	}
	return err
}

func (t *tx) DeleteNodePool(id string) error {
	if _, err := t.exec(`DELETE FROM nodepool_controller_status WHERE nodepool_id = ?`, id); err != nil {
		return err
	}
	_, err := t.exec(`DELETE FROM nodepools WHERE id = ?`, id)
	return err
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
	_, err := t.exec(`INSERT INTO nodepool_controller_status (nodepool_id, controller_name, observed_generation, conditions, metadata, updated_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (nodepool_id, controller_name) DO UPDATE SET observed_generation = excluded.observed_generation,
		conditions = excluded.conditions, metadata = excluded.metadata, updated_at = excluded.updated_at`,
		poolID, cs.ControllerName, cs.ObservedGeneration, mustJSON(conds), meta, t.db.d.Time(cs.UpdatedAt))
	return err
}

func (t *tx) AddEvent(e *kpool.Event) error {
	err := t.tx.QueryRowContext(t.ctx, t.db.q(`INSERT INTO events (type, object_id, cluster_id, generation, actor, created_at)
		VALUES (?, ?, ?, ?, ?, ?) RETURNING id`), e.Type, e.ObjectID, e.ClusterID, e.Generation, e.Actor, t.db.d.Time(e.CreatedAt)).Scan(&e.ID)
	if err != nil {
		return err
	}
	t.events++
	if t.db.d.AfterEvent != nil && t.events == 1 {
		return t.db.d.AfterEvent(t.ctx, t.tx, e)
	}
	return nil
}

var _ kpool.Store = (*DB)(nil)

// Package store implements kpool.Store on SQL. The SQL is shared; store/sqlite
// and store/postgres supply the Database (connections and transactions), the
// schema migrations and a Dialect for what differs (placeholders, row locks,
// time encoding, constraint errors).
//
// Costs do not grow with the data: a pool is read by its key, a create checks
// names through unique indexes rather than by reading the cluster's pools, a
// list page is an index range (keyset) and its total a sum over per-cluster
// counters that triggers keep (see the migrations).
package store

import (
	"context"
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
	// Violation names the constraint err broke, as the migrations name it
	// (an index such as "nodepools_cluster_name", "foreign key", or a
	// trigger's "kpool_cluster_deleting"), or reports false.
	Violation func(err error) (string, bool)
	// Retryable reports whether a transaction failed only because it ran
	// against another (deadlock, serialization); Write then runs it again.
	Retryable func(error) bool
	// ExpectGeneration, when set, is the statement that hands a pool
	// insert's trigger the generation its cluster must be at (as a text
	// argument); otherwise the store reads the cluster in the transaction
	// before the insert.
	ExpectGeneration string
	// GroupCommit runs concurrent writes in one transaction, each in a
	// savepoint (see group): for a database with a single writer.
	GroupCommit bool
	// GroupInserts, when above 0, runs concurrent Inserts in shared
	// transactions, this many at once (see group).
	GroupInserts int
	// OneRow, when set, wraps an UPDATE so that the database itself fails
	// the transaction (constraint "kpool_stale") unless exactly one row
	// changed: needed where writes are pipelined with the commit, as the
	// store sees a row count only after the commit has been sent.
	OneRow func(update string) string
	// Unavailable reports whether err means the database cannot be reached
	// or used for now (refused, dropped, shut down, closed, busy beyond its
	// timeout): the store then returns a kpool UNAVAILABLE error, which the
	// API answers 503 with Retry-After rather than 500.
	Unavailable func(error) bool
	// NowPlus, when set, is the SQL of the database's own time plus a
	// number of seconds given as a query parameter (?): leases then
	// compare times of one clock, however far apart the clocks of the
	// hosts sharing the database are. Where every process shares one host
	// (SQLite), leases are timed on its clock, time.Now.
	NowPlus string
}

// Constraint names the store maps to kpool errors.
const (
	violationClusterID       = "clusters_pkey"
	violationClusterName     = "clusters_owner_name"
	violationCloudID         = "clusters_cloud_id"
	violationPoolID          = "nodepools_pkey"
	violationPoolName        = "nodepools_cluster_name"
	violationProviderName    = "nodepools_cluster_provider_name"
	violationClusterDeleting = "kpool_cluster_deleting"
	violationClusterChanged  = "kpool_cluster_changed"
	violationStale           = "kpool_stale"
	// ViolationForeignKey is what a dialect that cannot tell which foreign
	// key was broken names it.
	ViolationForeignKey = "foreign key"
)

// DB is a kpool.Store on a SQL database.
type DB struct {
	db Database
	d  Dialect

	mu   sync.Mutex
	subs map[chan struct{}]bool
	// Listen, when set, delivers other processes' commits: it calls wake
	// for each until ctx ends (PostgreSQL LISTEN). It is started with the
	// first subscriber.
	Listen func(ctx context.Context, wake func())
	// Notify, when set, tells other processes that events committed. It is
	// called after the commit and must not block: a notification is only a
	// wake-up (readers also poll), so it is sent outside the transaction,
	// where it costs no commit its throughput.
	Notify    func()
	listening bool
	stop      context.CancelFunc

	rebound sync.Map // query -> query with $n placeholders

	writes  group // every write, with Dialect.GroupCommit
	inserts group // Inserts, with Dialect.GroupInserts
}

// New returns a Store on db with dialect d. The schema must already be
// migrated.
func New(db Database, d Dialect) *DB {
	return &DB{db: db, d: d, subs: map[chan struct{}]bool{},
		writes:  group{max: 1, savepoints: true},
		inserts: group{max: d.GroupInserts}}
}

// Close closes the database.
func (db *DB) Close() error {
	db.mu.Lock()
	if db.stop != nil {
		db.stop()
	}
	db.mu.Unlock()
	return db.db.Close()
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.db.Ping(ctx); err != nil {
		return db.fail(ctx, fmt.Errorf("database unreachable: %w", err))
	}
	return nil
}

// fail turns a database error that means "unreachable for now" into a kpool
// UNAVAILABLE error (which keeps err as its cause). kpool errors, and any
// error once ctx has ended (the caller left), are returned as they are.
func (db *DB) fail(ctx context.Context, err error) error {
	if err == nil || db.d.Unavailable == nil || ctx.Err() != nil {
		return err
	}
	var ke *kpool.Error
	if errors.As(err, &ke) || !db.d.Unavailable(err) {
		return err
	}
	return kpool.Unavailable("Database unavailable", err)
}

// q rewrites ? placeholders for the dialect. The store's queries are a small
// fixed set, so each is rewritten once.
func (db *DB) q(query string) string {
	if !db.d.Numbered {
		return query
	}
	if q, ok := db.rebound.Load(query); ok {
		return q.(string)
	}
	q := rebind(query, true)
	db.rebound.Store(query, q)
	return q
}

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

// read is one query for Database.Read or Conn.Read, rebound for the dialect.
func (db *DB) read(query string, args []any, row func(Scanner) error) Read {
	return Read{SQL: db.q(query), Args: args, Row: row}
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

// rawCol scans a JSON column's text as it is.
type rawCol struct{ v *json.RawMessage }

// ScanBytes takes the column's bytes as the driver has them (pgx calls it in
// preference to Scan), saving the copy into a driver value that Scan costs.
func (c rawCol) ScanBytes(b []byte) error {
	if b == nil {
		*c.v = nil
	} else {
		*c.v = append(json.RawMessage(nil), b...)
	}
	return nil
}

func (c rawCol) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*c.v = nil
	case string:
		*c.v = json.RawMessage(x)
	case []byte:
		*c.v = append(json.RawMessage(nil), x...)
	default:
		return fmt.Errorf("cannot scan %T as JSON", v)
	}
	return nil
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
		// The counters are per cluster, phase and health: a name is
		// counted over its (at most one per cluster) rows.
		w.add("p.name = ?", f.Name)
		count, cw = `SELECT count(*) FROM nodepools p JOIN clusters c ON c.id = p.cluster_id`+w.String(), w
	}
	tail, args := db.page(w, f.Page, "p")
	out := []*kpool.RawNodePool{}
	var total int64
	err := db.db.Read(ctx,
		db.read(`SELECT `+poolCols+` FROM nodepools p JOIN clusters c ON c.id = p.cluster_id`+tail, args, func(s Scanner) error {
			p, err := scanRawPool(s)
			out = append(out, p)
			return err
		}),
		db.read(count, cw.args, func(s Scanner) error { return s.Scan(&total) }))
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

// Write runs fn in one transaction and commits it. A transaction that lost a
// deadlock or serialization race is run again, up to three times.
func (db *DB) Write(ctx context.Context, fn func(kpool.Tx) error) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if db.d.GroupCommit {
			err = db.submit(ctx, &db.writes, fn)
		} else {
			err = db.write1(ctx, fn)
		}
		if err == nil || db.d.Retryable == nil || !db.d.Retryable(err) {
			return db.fail(ctx, err)
		}
	}
	return db.fail(ctx, err)
}

func (db *DB) write1(ctx context.Context, fn func(kpool.Tx) error) error {
	conn, err := db.db.Begin(ctx)
	if err != nil {
		return err
	}
	t := &tx{db: db, conn: conn, ctx: ctx}
	if err := fn(t); err != nil {
		_ = conn.Rollback(ctx)
		return err
	}
	if err := conn.Commit(ctx); err != nil {
		_ = conn.Rollback(ctx)
		return err
	}
	if t.events > 0 {
		db.committed()
	}
	return nil
}

// Insert is Write for a function that only writes (it reads nothing in the
// transaction): the store may run it in one transaction with other
// concurrent writes, which commit together; it fails only for its own
// reasons (see group).
func (db *DB) Insert(ctx context.Context, fn func(kpool.Tx) error) error {
	if db.d.GroupInserts > 0 && !db.d.GroupCommit {
		return db.fail(ctx, db.submit(ctx, &db.inserts, fn))
	}
	return db.Write(ctx, fn)
}

// committed tells subscribers here, and other processes, that events
// committed.
func (db *DB) committed() {
	db.wake()
	if db.Notify != nil {
		db.Notify()
	}
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

// AcquireLease takes or renews a lease in one statement: it is written
// only where it is free, expired, or already the holder's.
// Times are the database's where the dialect says how (Dialect.NowPlus),
// so processes whose clocks disagree still agree on when a lease runs out.
func (db *DB) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	const upsert = `INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, %s)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
		WHERE leases.holder = excluded.holder OR leases.expires_at < %s`
	var n int64
	var err error
	if db.d.NowPlus != "" {
		n, err = db.db.Exec(ctx, db.q(fmt.Sprintf(upsert, db.d.NowPlus, db.d.NowPlus)), name, holder, ttl.Seconds(), 0.0)
	} else {
		now := time.Now().UTC()
		n, err = db.db.Exec(ctx, db.q(fmt.Sprintf(upsert, "?", "?")), name, holder, db.d.Time(now.Add(ttl)), db.d.Time(now))
	}
	return n == 1, db.fail(ctx, err)
}

// ReleaseLease expires the lease if holder has it, so a standby need not
// wait for it to run out.
func (db *DB) ReleaseLease(ctx context.Context, name, holder string) error {
	_, err := db.db.Exec(ctx, db.q(`UPDATE leases SET expires_at = ? WHERE name = ? AND holder = ?`),
		db.d.Time(time.Unix(0, 0).UTC()), name, holder)
	return db.fail(ctx, err)
}

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
		deletion_timestamp = ?, resource_version = ?, generation = ? WHERE id = ? AND resource_version = ?`,
		[]any{mustJSON(p.Spec), mustJSON(p.Status), string(p.Status.Phase), string(p.Status.Health), t.db.d.Time(p.UpdatedAt),
			t.db.nullTime(p.DeletionTimestamp), p.ResourceVersion, p.Generation, p.ID, from},
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

package store

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kpool/kpool"
)

// group commits concurrent writes together: writes that queue while a
// transaction commits run next, in one shared transaction, which then commits
// (and syncs) once. None is acknowledged before that commit is durable; a
// write that fails fails alone.
//
// On SQLite every write is grouped, each in a savepoint (a write that fails
// rolls back to it): there is one writer, and a commit's sync is most of a
// small write's cost. On PostgreSQL only inserts that read nothing are (see
// Insert): they hold no row locks, so sharing a transaction delays no one,
// and the per-transaction cost (begin, commit, WAL flush, a round trip) is
// most of theirs. There a failed write aborts the transaction; the others run
// again without it.
type group struct {
	mu      sync.Mutex
	queue   []*groupWrite
	running int // transactions being run
	// max is how many transactions run at once; savepoints says how a
	// failed write is undone (see above).
	max        int
	savepoints bool
}

type groupWrite struct {
	ctx    context.Context
	fn     func(kpool.Tx) error
	state  atomic.Int32 // writeQueued, then writeTaken or writeAbandoned
	done   chan struct{}
	err    error
	events int
}

const (
	writeQueued int32 = iota
	writeTaken
	writeAbandoned
)

// maxGroup bounds the writes of one transaction.
const maxGroup = 128

// submit runs fn in the next transaction of g and waits for its commit.
func (db *DB) submit(ctx context.Context, g *group, fn func(kpool.Tx) error) error {
	w := &groupWrite{ctx: ctx, fn: fn, done: make(chan struct{})}
	g.mu.Lock()
	g.queue = append(g.queue, w)
	lead := g.running < max(1, g.max)
	if lead {
		g.running++
	}
	g.mu.Unlock()
	if lead {
		// Run the first transaction here (it holds this write), and leave
		// the writes that come meanwhile to a goroutine.
		if db.runNext(g) {
			go func() {
				for db.runNext(g) {
				}
			}()
		}
	}
	select {
	case <-w.done:
	case <-ctx.Done():
		if w.state.CompareAndSwap(writeQueued, writeAbandoned) {
			return ctx.Err()
		}
		<-w.done // in a transaction already: its outcome is moments away
	}
	return w.err
}

// runNext runs up to maxGroup queued writes in one transaction and reports
// whether more are queued (otherwise this runner stops).
func (db *DB) runNext(g *group) bool {
	g.mu.Lock()
	n := min(len(g.queue), maxGroup)
	batch := g.queue[:n:n]
	g.queue = g.queue[n:]
	g.mu.Unlock()

	var taken []*groupWrite
	for _, w := range batch {
		if w.state.CompareAndSwap(writeQueued, writeTaken) {
			taken = append(taken, w)
		}
	}
	if len(taken) > 0 {
		// The transaction is everyone's: no one caller's cancellation stops it.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(taken[0].ctx), time.Minute)
		if g.savepoints {
			db.runSavepoints(ctx, taken)
		} else {
			db.runRetrying(ctx, taken)
		}
		cancel()
		for _, w := range taken {
			close(w.done)
		}
	}

	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queue) > 0 {
		return true
	}
	g.running--
	return false
}

// runSavepoints runs each write in a savepoint of one transaction and
// commits.
func (db *DB) runSavepoints(ctx context.Context, ws []*groupWrite) {
	fail := func(err error) {
		for _, w := range ws {
			if w.err == nil {
				w.err = err
			}
		}
	}
	conn, err := db.db.Begin(ctx)
	if err != nil {
		fail(err)
		return
	}
	ok, events := 0, 0
	for _, w := range ws {
		// Each savepoint is released before the next: one name serves
		// them all, and keeps the statements few (they are prepared).
		const sp = "w"
		steps := []string{"SAVEPOINT " + sp}
		t := &tx{db: db, conn: conn, ctx: ctx}
		if err := conn.Queue(ctx, steps[0], nil, plain); err == nil {
			if w.err = w.fn(t); w.err != nil {
				steps = []string{"ROLLBACK TO " + sp, "RELEASE " + sp}
			} else {
				steps = []string{"RELEASE " + sp}
			}
		}
		for _, q := range steps {
			if err == nil {
				err = conn.Queue(ctx, q, nil, plain)
			}
		}
		if err != nil {
			_ = conn.Rollback(ctx)
			fail(err)
			return
		}
		if w.err == nil {
			ok++
			events += t.events
		}
	}
	if ok == 0 {
		_ = conn.Rollback(ctx)
		return
	}
	if err := conn.Commit(ctx); err != nil {
		_ = conn.Rollback(ctx)
		fail(err)
		return
	}
	if events > 0 {
		db.committed()
	}
}

// runRetrying runs the writes in one transaction without savepoints. When
// one fails the transaction is rolled back, that write gets its error, and
// the others run again without it; an error no write caused (the connection,
// a deadlock after three tries) is everyone's.
func (db *DB) runRetrying(ctx context.Context, ws []*groupWrite) {
	for tries := 0; len(ws) > 0; {
		conn, err := db.db.Begin(ctx)
		if err != nil {
			for _, w := range ws {
				w.err = err
			}
			return
		}
		failed := -1
		events := 0
		for i, w := range ws {
			t := &tx{db: db, conn: conn, ctx: ctx, tag: i, failed: &failed}
			if err = w.fn(t); err != nil {
				if failed < 0 {
					failed = i
				}
				break
			}
			events += t.events
		}
		if err == nil {
			err = conn.Commit(ctx)
		}
		if err == nil {
			if events > 0 {
				db.committed()
			}
			return
		}
		_ = conn.Rollback(ctx)
		switch {
		case db.d.Retryable != nil && db.d.Retryable(err) && tries < 2:
			tries++ // lost a race with another transaction: all again
		case failed >= 0:
			ws[failed].err = err
			ws = append(ws[:failed:failed], ws[failed+1:]...)
		default:
			for _, w := range ws {
				w.err = err
			}
			return
		}
	}
}

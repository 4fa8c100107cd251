package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kpool/kpool/store"
)

// pool is a store.Database on a pgx pool. Reads in one call go out in one
// round trip; a write transaction queues its writes and sends them with its
// next read or with the COMMIT (pipelining), and its BEGIN with its first
// statement, so a create costs one round trip and a read-modify-write two.
type pool struct {
	p *pgxpool.Pool

	// notifications: a coalescing wake-up for the NOTIFY sender.
	notifyOnce sync.Once
	kick       chan struct{}
	stop       context.CancelFunc
}

func newPool(p *pgxpool.Pool) *pool {
	return &pool{p: p, kick: make(chan struct{}, 1)}
}

func (d *pool) Read(ctx context.Context, reads ...store.Read) error {
	if len(reads) == 1 {
		rows, err := d.p.Query(ctx, reads[0].SQL, reads[0].Args...)
		return each(rows, err, reads[0].Row)
	}
	b := &pgx.Batch{}
	for _, r := range reads {
		b.Queue(r.SQL, r.Args...)
	}
	br := d.p.SendBatch(ctx, b)
	var first error
	for _, r := range reads {
		rows, err := br.Query()
		if err := each(rows, err, r.Row); err != nil && first == nil {
			first = err
		}
	}
	if err := br.Close(); err != nil && first == nil {
		first = err
	}
	return first
}

// each calls fn for every row and closes rows.
func each(rows pgx.Rows, err error, fn func(store.Scanner) error) error {
	if err != nil {
		if rows != nil {
			rows.Close()
		}
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (d *pool) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	ct, err := d.p.Exec(ctx, query, args...)
	return ct.RowsAffected(), err
}

func (d *pool) Begin(ctx context.Context) (store.Conn, error) {
	c, err := d.p.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	t := &conn{c: c}
	t.add("begin", nil, nil)
	return t, nil
}

func (d *pool) Ping(ctx context.Context) error { return d.p.Ping(ctx) }

func (d *pool) Close() error {
	if d.stop != nil {
		d.stop()
	}
	d.p.Close()
	return nil
}

// notify tells other processes that events committed, without waiting: one
// goroutine sends NOTIFYs, and calls while one is being sent fold into the
// next. The NOTIFY is its own transaction, as a NOTIFY inside a write would
// take PostgreSQL's notification lock until that write's commit is flushed,
// one commit at a time (a fourth of the insert rate, measured).
func (d *pool) notify() {
	d.notifyOnce.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		d.stop = cancel
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case <-d.kick:
					_, _ = d.p.Exec(ctx, `SELECT pg_notify('`+channel+`', '')`)
				}
			}
		}()
	})
	select {
	case d.kick <- struct{}{}:
	default: // one is pending already
	}
}

// conn is a write transaction on one pooled connection. Statements wait in
// batch until a read or the commit needs the server; checks holds what to do
// with each queued write's outcome.
type conn struct {
	c      *pgxpool.Conn
	batch  pgx.Batch
	checks []func(int64, error) error
	done   bool
}

func (t *conn) add(query string, args []any, check func(int64, error) error) {
	t.batch.Queue(query, args...)
	t.checks = append(t.checks, check)
}

func (t *conn) Queue(_ context.Context, query string, args []any, check func(int64, error) error) error {
	t.add(query, args, check)
	return nil
}

func (t *conn) Read(ctx context.Context, reads ...store.Read) error { return t.send(ctx, reads) }

func (t *conn) Flush(ctx context.Context) error { return t.send(ctx, nil) }

// send sends the queued writes and the reads in one batch and returns the
// first error: a write's check, a read's, or the server's.
func (t *conn) send(ctx context.Context, reads []store.Read) error {
	for _, r := range reads {
		t.batch.Queue(r.SQL, r.Args...)
	}
	if t.batch.Len() == 0 {
		return nil
	}
	b, checks := t.batch, t.checks
	t.batch, t.checks = pgx.Batch{}, nil
	br := t.c.SendBatch(ctx, &b)
	var first error
	for _, check := range checks {
		ct, err := br.Exec()
		if check != nil {
			err = check(ct.RowsAffected(), err)
		}
		if err != nil && first == nil {
			first = err
		}
	}
	for _, r := range reads {
		rows, err := br.Query()
		if err := each(rows, err, r.Row); err != nil && first == nil {
			first = err
		}
	}
	if err := br.Close(); err != nil && first == nil {
		first = err
	}
	return first
}

func (t *conn) Commit(ctx context.Context) error {
	t.add("commit", nil, nil)
	if err := t.send(ctx, nil); err != nil {
		return err
	}
	t.release()
	return nil
}

// Rollback ends a transaction that failed or was abandoned: if anything was
// sent, the server is told; a transaction whose BEGIN never left needs
// nothing.
func (t *conn) Rollback(ctx context.Context) error {
	if t.done {
		return nil
	}
	defer t.release()
	if t.c.Conn().PgConn().TxStatus() == 'I' {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_, err := t.c.Exec(ctx, "rollback")
	return err
}

func (t *conn) release() {
	if !t.done {
		t.done = true
		t.c.Release()
	}
}

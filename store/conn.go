package store

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// Database is a pool of connections to one SQL database, as the shared store
// uses it. The SQLite store passes database/sql pools (SQLDatabase); the
// PostgreSQL store passes a pgx pool that pipelines (store/postgres).
type Database interface {
	// Read runs the queries, in order; on a remote database in one round trip.
	Read(ctx context.Context, reads ...Read) error
	// Exec runs one statement on its own and returns the rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// Begin starts a write transaction.
	Begin(ctx context.Context) (Conn, error)
	Ping(ctx context.Context) error
	Close() error
}

// Read is one query: its SQL and arguments, and Row, called with each row.
type Read struct {
	SQL  string
	Args []any
	Row  func(Scanner) error
	// Once marks SQL whose text varies with the request (a label
	// selector's terms): not worth keeping prepared.
	Once bool
}

// Scanner reads the current row into dest.
type Scanner interface{ Scan(dest ...any) error }

// Conn is one write transaction. Writes whose outcome is not needed at once
// are queued and go out with the next read or the commit, so that a
// transaction on a remote database costs one round trip per read plus one
// for its writes and the commit, not one per statement.
type Conn interface {
	// Read sends the queued writes, then runs the reads.
	Read(ctx context.Context, reads ...Read) error
	// Queue runs a write, or queues it. check turns its outcome (rows
	// changed, or the database's error) into the transaction's error: Queue
	// returns it when the write ran at once, otherwise the Read, Flush or
	// Commit that sends the write does. A write that fails aborts the
	// transaction, so nothing queued after it, the commit included, takes
	// effect.
	Queue(ctx context.Context, query string, args []any, check func(n int64, err error) error) error
	// Flush sends the queued writes and returns the first error.
	Flush(ctx context.Context) error
	// Commit sends the queued writes and commits; it returns once the
	// commit is durable.
	Commit(ctx context.Context) error
	// Rollback ends the transaction without its changes; it is a no-op
	// after Commit.
	Rollback(ctx context.Context) error
}

// SQLDatabase is a Database on database/sql pools: reads on read, writes on
// write (one connection for SQLite, so that writers queue in Go instead of
// spinning on the database lock). Statements run one at a time; nothing is
// queued, as an embedded database has no round trips to save.
type SQLDatabase struct {
	ReadPool, WritePool *sql.DB

	once          sync.Once
	reads, writes *stmts
}

// pools returns the statements of the read pool and of the write pool.
func (d *SQLDatabase) pools() (reads, writes *stmts) {
	d.once.Do(func() {
		d.reads, d.writes = &stmts{db: d.ReadPool}, &stmts{db: d.WritePool}
		if d.ReadPool == d.WritePool {
			d.reads = d.writes
		}
	})
	return d.reads, d.writes
}

// Read runs each query on the read pool.
func (d *SQLDatabase) Read(ctx context.Context, reads ...Read) error {
	r0, _ := d.pools()
	return readAll(reads, func(r Read) (*sql.Rows, error) { return r0.query(ctx, r) })
}

// Exec runs a statement on the write pool.
func (d *SQLDatabase) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	_, w := d.pools()
	res, err := w.exec(ctx, query, args)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// Begin starts a transaction on the write pool.
func (d *SQLDatabase) Begin(ctx context.Context) (Conn, error) {
	_, w := d.pools()
	tx, err := d.WritePool.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return &sqlConn{tx: tx, stmts: w}, nil
}

// Ping checks that the database answers.
func (d *SQLDatabase) Ping(ctx context.Context) error { return d.ReadPool.PingContext(ctx) }

// Close closes both pools.
func (d *SQLDatabase) Close() error {
	// The statements kept go with their connections; left open, a read
	// after Close fails as the closed database it meets (503), not as a
	// closed statement.
	err := d.WritePool.Close()
	if d.ReadPool != d.WritePool {
		err = errors.Join(err, d.ReadPool.Close())
	}
	return err
}

// readAll runs each read through run and hands its rows to it.
func readAll(reads []Read, run func(Read) (*sql.Rows, error)) error {
	for _, r := range reads {
		if err := read1(r, run); err != nil {
			return err
		}
	}
	return nil
}

func read1(r Read, run func(Read) (*sql.Rows, error)) error {
	rows, err := run(r)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := r.Row(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// sqlConn is a database/sql transaction: every statement runs at once,
// through the pool's prepared statement when there is one. One that is not
// yet prepared runs as it is and is prepared once the transaction has ended:
// the write pool has one connection, which the transaction holds.
type sqlConn struct {
	tx     *sql.Tx
	stmts  *stmts
	missed []string
}

// stmt is the transaction's use of query's prepared statement, nil when
// there is none yet.
func (c *sqlConn) stmt(ctx context.Context, query string, once bool) *sql.Stmt {
	if st := c.stmts.cached(query); st != nil {
		return c.tx.StmtContext(ctx, st)
	}
	if !once {
		c.missed = append(c.missed, query)
	}
	return nil
}

func (c *sqlConn) Read(ctx context.Context, reads ...Read) error {
	return readAll(reads, func(r Read) (*sql.Rows, error) {
		if st := c.stmt(ctx, r.SQL, r.Once); st != nil {
			return st.QueryContext(ctx, r.Args...)
		}
		return c.tx.QueryContext(ctx, r.SQL, r.Args...)
	})
}

func (c *sqlConn) Queue(ctx context.Context, query string, args []any, check func(int64, error) error) error {
	var res sql.Result
	var err error
	if st := c.stmt(ctx, query, false); st != nil {
		res, err = st.ExecContext(ctx, args...)
	} else {
		res, err = c.tx.ExecContext(ctx, query, args...)
	}
	var n int64
	if err == nil {
		n, err = res.RowsAffected()
	}
	return check(n, err)
}

func (c *sqlConn) Flush(context.Context) error { return nil }

func (c *sqlConn) Commit(ctx context.Context) error {
	defer c.prepare(ctx)
	return c.tx.Commit()
}

func (c *sqlConn) Rollback(ctx context.Context) error {
	defer c.prepare(ctx)
	return c.tx.Rollback()
}

// prepare prepares the statements the transaction ran unprepared, now that
// its connection is free; a failure only leaves them to run unprepared.
func (c *sqlConn) prepare(ctx context.Context) {
	for _, q := range c.missed {
		_, _ = c.stmts.get(ctx, q, false)
	}
	c.missed = nil
}

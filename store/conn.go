package store

import (
	"context"
	"database/sql"
	"errors"
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
}

// Read runs each query on the read pool.
func (d *SQLDatabase) Read(ctx context.Context, reads ...Read) error {
	return readAll(ctx, d.ReadPool, reads)
}

// Exec runs a statement on the write pool.
func (d *SQLDatabase) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := d.WritePool.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// Begin starts a transaction on the write pool.
func (d *SQLDatabase) Begin(ctx context.Context) (Conn, error) {
	tx, err := d.WritePool.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return &sqlConn{tx: tx}, nil
}

// Ping checks that the database answers.
func (d *SQLDatabase) Ping(ctx context.Context) error { return d.ReadPool.PingContext(ctx) }

// Close closes both pools.
func (d *SQLDatabase) Close() error {
	err := d.WritePool.Close()
	if d.ReadPool != d.WritePool {
		err = errors.Join(err, d.ReadPool.Close())
	}
	return err
}

type sqlQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func readAll(ctx context.Context, q sqlQuerier, reads []Read) error {
	for _, r := range reads {
		if err := read1(ctx, q, r); err != nil {
			return err
		}
	}
	return nil
}

func read1(ctx context.Context, q sqlQuerier, r Read) error {
	rows, err := q.QueryContext(ctx, r.SQL, r.Args...)
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

// sqlConn is a database/sql transaction: every statement runs at once.
type sqlConn struct{ tx *sql.Tx }

func (c *sqlConn) Read(ctx context.Context, reads ...Read) error { return readAll(ctx, c.tx, reads) }

func (c *sqlConn) Queue(ctx context.Context, query string, args []any, check func(int64, error) error) error {
	res, err := c.tx.ExecContext(ctx, query, args...)
	var n int64
	if err == nil {
		n, err = res.RowsAffected()
	}
	return check(n, err)
}

func (c *sqlConn) Flush(context.Context) error    { return nil }
func (c *sqlConn) Commit(context.Context) error   { return c.tx.Commit() }
func (c *sqlConn) Rollback(context.Context) error { return c.tx.Rollback() }

package store

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
)

// MaxStatements is how many distinct statements a database/sql pool keeps
// prepared; statements past it (only queries whose text varies, such as a
// team list of unusual length) are compiled each time they run.
const MaxStatements = 256

// stmts keeps the store's statements prepared on one database/sql pool, by
// their SQL: compiling a statement was 30% of an SQLite GET's CPU, and the
// store's statements are a small fixed set. database/sql prepares a
// statement on each connection the first time it runs there and keeps it
// until the connection closes; a transaction uses its connection's own.
type stmts struct {
	db *sql.DB
	m  sync.Map // SQL -> *sql.Stmt
	n  atomic.Int32
}

// get returns the prepared statement of query, preparing it on first use;
// nil (and no error) when the cache is full or once is set (a query whose
// text varies with the request, not worth keeping). Never in a transaction
// of a pool of one connection: preparing waits for a free connection.
func (s *stmts) get(ctx context.Context, query string, once bool) (*sql.Stmt, error) {
	if st := s.cached(query); st != nil || once || s.n.Load() >= MaxStatements {
		return st, nil
	}
	st, err := s.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if v, loaded := s.m.LoadOrStore(query, st); loaded {
		st.Close()
		return v.(*sql.Stmt), nil
	}
	s.n.Add(1)
	return st, nil
}

// cached returns the prepared statement of query, nil if there is none yet.
func (s *stmts) cached(query string) *sql.Stmt {
	if v, ok := s.m.Load(query); ok {
		return v.(*sql.Stmt)
	}
	return nil
}

// query runs a read on the pool through its prepared statement.
func (s *stmts) query(ctx context.Context, r Read) (*sql.Rows, error) {
	st, err := s.get(ctx, r.SQL, r.Once)
	if err != nil || st == nil {
		return s.db.QueryContext(ctx, r.SQL, r.Args...)
	}
	return st.QueryContext(ctx, r.Args...)
}

// exec runs a statement on the pool through its prepared statement.
func (s *stmts) exec(ctx context.Context, query string, args []any) (sql.Result, error) {
	st, err := s.get(ctx, query, false)
	if err != nil || st == nil {
		return s.db.ExecContext(ctx, query, args...)
	}
	return st.ExecContext(ctx, args...)
}

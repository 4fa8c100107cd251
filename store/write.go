package store

import (
	"context"

	"github.com/kpool/kpool"
)

// Transactions: retried on a lost race, and the wake-up of subscribers
// once they commit.

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

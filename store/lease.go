package store

import (
	"context"
	"fmt"
	"time"
)

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

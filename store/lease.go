package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kpool/kpool"
)

// AcquireLease takes or renews a lease in one statement: it is written
// only where it is free, expired, or already the holder's.
// Times are the database's where the dialect says how (Dialect.NowPlus),
// so processes whose clocks disagree still agree on when a lease runs out.
func (db *DB) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	const upsert = `INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, %s)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
		WHERE leases.holder = excluded.holder OR leases.expires_at < %s`
	at, now, args := db.leaseTimes(ttl)
	n, err := db.db.Exec(ctx, db.q(fmt.Sprintf(upsert, at, now)), name, holder, args[0], args[1])
	return n == 1, db.fail(ctx, err)
}

// leaseTimes returns the SQL of now+ttl and of now, and their arguments:
// the database's clock where the dialect has one, this host's otherwise.
func (db *DB) leaseTimes(ttl time.Duration) (at, now string, args [2]any) {
	if db.d.NowPlus != "" {
		return db.d.NowPlus, db.d.NowPlus, [2]any{ttl.Seconds(), 0.0}
	}
	t := time.Now().UTC()
	return "?", "?", [2]any{db.d.Time(t.Add(ttl)), db.d.Time(t)}
}

// ReleaseLease expires the lease if holder has it, so a standby need not
// wait for it to run out.
func (db *DB) ReleaseLease(ctx context.Context, name, holder string) error {
	_, err := db.db.Exec(ctx, db.q(`UPDATE leases SET expires_at = ? WHERE name = ? AND holder = ?`),
		db.d.Time(time.Unix(0, 0).UTC()), name, holder)
	return db.fail(ctx, err)
}

// RenewLeases renews all of a holder's unexpired leases under a prefix in
// one statement, however many shards it holds.
func (db *DB) RenewLeases(ctx context.Context, prefix, holder string, ttl time.Duration) (int, error) {
	at, now, args := db.leaseTimes(ttl)
	q := fmt.Sprintf(`UPDATE leases SET expires_at = %s WHERE holder = ? AND name LIKE ? ESCAPE '\' AND expires_at >= %s`, at, now)
	n, err := db.db.Exec(ctx, db.q(q), args[0], holder, likePrefix(prefix), args[1])
	return int(n), db.fail(ctx, err)
}

// Leases lists the unexpired leases under a prefix with the time each has
// left, both read against the database's clock in the same statement.
func (db *DB) Leases(ctx context.Context, prefix string) ([]kpool.Lease, error) {
	_, now, args := db.leaseTimes(0)
	q := fmt.Sprintf(`SELECT name, holder, expires_at, %s FROM leases WHERE name LIKE ? ESCAPE '\' AND expires_at >= %s ORDER BY name`, now, now)
	var out []kpool.Lease
	err := db.db.Read(ctx, db.read(q, []any{args[1], likePrefix(prefix), args[1]}, func(s Scanner) error {
		var l kpool.Lease
		var expires, at time.Time
		if err := s.Scan(&l.Name, &l.Holder, timeCol{&expires}, timeCol{&at}); err != nil {
			return err
		}
		l.Left = expires.Sub(at)
		out = append(out, l)
		return nil
	}))
	return out, db.fail(ctx, err)
}

// likePrefix is the LIKE pattern of the names that begin with prefix.
func likePrefix(prefix string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(prefix) + "%"
}

package audit

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kpool/kpool"
)

// Event retention defaults: the outbox is also the audit trail, so events
// are kept 30 days, and pruned in batches small enough that each delete is a
// short transaction.
const (
	DefaultRetention  = 30 * 24 * time.Hour
	defaultPruneBatch = 500
	maxPruneEvery     = 10 * time.Minute
)

// Retention prunes the events outbox (the audit trail), which
// otherwise grows by every write for ever: events older than Retention are deleted, oldest first, a
// batch per statement. Every kpool process may run it: deleting what another
// process deleted already is nothing. Readers that fall further behind than
// Retention are told (ErrPruned) and resync.
type Retention struct {
	Store kpool.Store
	// Retention is how long an event is kept (default DefaultRetention).
	Retention time.Duration
	// Batch is how many events one statement deletes at most (default 500).
	Batch int
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Prune deletes every event older than the retention, batch by batch, and
// returns how many it deleted.
func (r *Retention) Prune(ctx context.Context) (int, error) {
	keep, batch, now := r.Retention, r.Batch, time.Now
	if keep <= 0 {
		keep = DefaultRetention
	}
	if batch <= 0 {
		batch = defaultPruneBatch
	}
	if r.Now != nil {
		now = r.Now
	}
	before := now().Add(-keep)
	total := 0
	for {
		n, err := r.Store.PruneEvents(ctx, before, batch)
		total += n
		if err != nil {
			return total, fmt.Errorf("pruning events older than %s: %w", keep, err)
		}
		if n < batch {
			return total, nil
		}
	}
}

// Run prunes at once and then periodically (a tenth of the retention, at
// most every 10 minutes) until ctx ends, logging what it deletes and any
// error (the next run tries again).
func (r *Retention) Run(ctx context.Context, log *slog.Logger) {
	keep := r.Retention
	if keep <= 0 {
		keep = DefaultRetention
	}
	t := time.NewTicker(min(keep/10, maxPruneEvery))
	defer t.Stop()
	for {
		n, err := r.Prune(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("event retention", "err", err)
		case n > 0:
			log.Info("event retention", "deleted", n, "older_than", keep)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

package ratelimit

import (
	"context"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/kpool/kpool/provider"
)

// Budget is one cloud account's call budget: a bucket of reads and one of
// writes, each adapting to the Throttled answers of the calls charged to
// it, shared by every cluster of the account in this process. It is the
// provider.Gate the controllers put in a pass's context; the wire charges
// each request to it.
type Budget struct {
	Account provider.Account
	Quota   provider.Quota
	reads   adaptive
	writes  adaptive
	observe Observer
}

// Observer hears of every request charged to a budget. It is called on the
// request's goroutine, so it must be quick.
type Observer func(provider.Spend)

// Take waits for a token of the request's access: a write from the write
// bucket, a read from the read bucket, by priority.
func (b *Budget) Take(ctx context.Context, a provider.Access, p provider.Priority) error {
	ad := &b.reads
	if a == provider.Write {
		ad = &b.writes
	}
	start := ad.clock.Now()
	waited, err := ad.take(ctx, Class(a, p))
	if err != nil {
		return err
	}
	if b.observe != nil {
		var d time.Duration
		if waited {
			d = max(ad.clock.Since(start), time.Nanosecond)
		}
		b.observe(provider.Spend{Account: b.Account, Access: a, Waited: d, Limit: ad.b.Limit(), At: ad.clock.Now()})
	}
	return nil
}

// awaitHold waits out the Retry-After the cloud last gave a call of
// access a charged to the budget: a call to be charged to it waits for
// that before it begins, whether or not it sends HTTP requests.
func (b *Budget) awaitHold(ctx context.Context, a provider.Access) error {
	ad := &b.reads
	if a == provider.Write {
		ad = &b.writes
	}
	_, err := ad.hold(ctx)
	return err
}

// Answered adapts the bucket of the call's access to its answer.
func (b *Budget) Answered(a provider.Access, err error) {
	if a == provider.Write {
		b.writes.done(err)
	} else {
		b.reads.done(err)
	}
}

// ReadLimit and WriteLimit are the rates the budget allows now (below the
// quota's while it adapts to throttling).
func (b *Budget) ReadLimit() float64  { return b.reads.b.Limit() }
func (b *Budget) WriteLimit() float64 { return b.writes.b.Limit() }

// Budgets are the budgets of every account the controllers charge, made on
// first use. Safe for concurrent use.
type Budgets struct {
	clock clock.Clock
	// overrides replace a platform's default quota, field by field (a 0
	// keeps the default).
	overrides map[string]provider.Quota
	observe   Observer

	mu    sync.Mutex
	all   map[provider.Account]*Budget
	share int // the controller processes the quotas are divided among (0: 1)
}

// NewBudgets returns the budgets timed on clk, with the operator's
// overrides by platform type, observed by observe (nil: none).
func NewBudgets(clk clock.Clock, overrides map[string]provider.Quota, observe Observer) *Budgets {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Budgets{clock: clk, overrides: overrides, observe: observe, all: map[provider.Account]*Budget{}}
}

// For returns account a's budget, made with quota q (or the operator's
// override of it) the first time.
func (bs *Budgets) For(a provider.Account, q provider.Quota) *Budget {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if b, ok := bs.all[a]; ok {
		return b
	}
	q = Override(q, bs.overrides[string(a.Platform)])
	n := float64(max(1, bs.share))
	b := &Budget{Account: a, Quota: q, observe: bs.observe,
		reads:  newAdaptive(q.Reads/n, part(q.ReadBurst, n), bs.clock),
		writes: newAdaptive(q.Writes/n, part(q.WriteBurst, n), bs.clock)}
	bs.all[a] = b
	return b
}

// Share divides every account's quota among n controller processes: the
// clusters of an account are spread over the processes' shards, and the
// cloud counts their calls together. Each budget keeps its adaptation to
// throttling below its new share.
func (bs *Budgets) Share(n int) {
	n = max(1, n)
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if n == max(1, bs.share) {
		return
	}
	bs.share = n
	for _, b := range bs.all {
		b.reads.scale(b.Quota.Reads/float64(n), part(b.Quota.ReadBurst, float64(n)))
		b.writes.scale(b.Quota.Writes/float64(n), part(b.Quota.WriteBurst, float64(n)))
	}
}

// part is a burst's share among n processes, at least one call.
func part(burst int, n float64) int { return max(1, int(float64(burst)/n)) }

// Override is q with each field o sets (not 0) in its place.
func Override(q, o provider.Quota) provider.Quota {
	if o.Reads != 0 {
		q.Reads = o.Reads
	}
	if o.ReadBurst != 0 {
		q.ReadBurst = o.ReadBurst
	}
	if o.Writes != 0 {
		q.Writes = o.Writes
	}
	if o.WriteBurst != 0 {
		q.WriteBurst = o.WriteBurst
	}
	return q
}

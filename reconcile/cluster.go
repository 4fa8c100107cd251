package reconcile

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// reconcileCluster reconciles every pool of a cluster from one provider
// list. It returns when to look again (0: only on the next event), or an
// error to retry the whole cluster with backoff: only what concerns the
// cluster as a whole (the List failing, throttling, an endpoint that does
// not answer, the store). A pool's own errors back off that pool alone.
// A cluster without pools is listed too, so that whether kpool reaches it
// (its Reachable condition) is known before the first pool. *result
// hears what the pass came to (a Result*; left as it is: ok).
func (c *Controller) reconcileCluster(ctx context.Context, id string, result *string) (time.Duration, error) {
	cl, err := c.store.Cluster(ctx, id)
	if kpool.IsNotFound(err) {
		c.forget(id)
		return 0, nil // gone, and its pools with it
	}
	if err != nil {
		return 0, err
	}
	t := cl.Spec.Platform.Type
	d, ok := c.drivers[t]
	if !ok {
		// No driver here for this provider: its pools are left to
		// external controllers, which report through the API (and the
		// API says so while none has).
		c.noDriverFor(t)
		c.forget(id)
		return 0, nil
	}
	pools, err := c.pools(ctx, id)
	if err != nil {
		return 0, err
	}
	st := c.state(cl)
	ctx, charged := c.charge(ctx, cl, pools)
	defer charged()
	prof := c.cfg.Drivers.Profile(t)
	lane := &laned{Driver: d, c: c, t: t, st: st}
	r := &clusterRun{c: c, cl: cl, d: lane, lane: lane, prof: prof, name: prof.ControllerName(), st: st, result: result}
	observed, err := r.d.NodePoolList(ctx, cl)
	if err != nil {
		return r.listFailed(ctx, pools, err)
	}
	r.answered(ctx)
	if err := r.reachable(ctx); err != nil {
		return 0, err
	}
	r.learnFacts(ctx)
	r.watchNodes(ctx)
	r.reportProviderPools(ctx, pools, observed)
	if len(pools) == 0 && !cl.Spec.ImportPools {
		c.prune(st, nil)
		return soonest(c.cfg.ResyncSlow, r.logicalPools(ctx)), nil
	}
	next, err := r.reconcilePools(ctx, pools, observed)
	if err != nil {
		return next, err
	}
	return soonest(next, r.logicalPools(ctx)), nil
}

// creates reports whether a pass would create pool p at the provider:
// nothing of its name listed, and no delete, import or replacement.
func (r *clusterRun) creates(p *kpool.NodePool) bool {
	return r.observed[p.ProviderName] == nil && !p.Deleting() && !p.Spec.Observed() && !p.Status.Replacement.Active()
}

// soonest is the earlier of two times to look again (0: none).
func soonest(a, b time.Duration) time.Duration {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// reconcilePools reconciles each pool against the provider's list, and
// imports the provider's other pools when the cluster asks for it.
func (r *clusterRun) reconcilePools(ctx context.Context, pools []*kpool.NodePool, observed []provider.Pool) (time.Duration, error) {
	c, st := r.c, r.st
	byName := map[string]*provider.Pool{}
	for i := range observed {
		byName[observed[i].ProviderName] = &observed[i]
	}
	known := map[string]bool{}
	r.observed, r.taken = byName, map[string]bool{}
	for _, p := range pools {
		r.taken[p.ProviderName], known[p.ProviderName] = true, true
		if rp := p.Status.Replacement; rp.Active() {
			known[rp.To] = true // the pool's successor
		}
	}
	t := &tally{}
	now := c.cfg.Clock.Now()
	for _, p := range rotate(pools, st.from) {
		if int(r.lane.writes.Load()) >= c.cfg.WritesPerPass {
			// The rest after the clusters queued meanwhile.
			t.more, st.from = true, p.ID
			break
		}
		if err := r.turn(ctx, p, now, t); err != nil {
			return 0, err
		}
	}
	if !t.more {
		st.from = ""
	}
	if r.cl.Spec.ImportPools {
		for i := range observed {
			// A pool another owner marked is never imported (an admin
			// may force it: Service.ImportProviderPool).
			if o := &observed[i]; !known[o.ProviderName] && o.Owner.IsZero() && !unread(o) {
				r.importPool(ctx, o)
			}
		}
	}
	c.prune(st, pools)
	r.settle(t.busy || t.more, t.next > 0)
	switch {
	case t.more:
		return yield, nil
	case t.next > 0 && t.busy:
		return min(t.next, c.cfg.ResyncFast), nil
	case t.next > 0:
		return t.next, nil
	case t.busy:
		return c.cfg.ResyncFast, nil
	}
	return c.driftInterval(r.cl), nil
}

// yield is the next turn of a cluster whose pass stopped at
// Config.WritesPerPass: at once, behind the clusters queued meanwhile.
const yield time.Duration = -1

// rotate returns pools starting at the one whose ID is from (as they are
// when none is).
func rotate(pools []*kpool.NodePool, from string) []*kpool.NodePool {
	i := slices.IndexFunc(pools, func(p *kpool.NodePool) bool { return p.ID == from })
	if i <= 0 {
		return pools
	}
	return append(slices.Clone(pools[i:]), pools[:i]...)
}

// tally is what a pass's pools came to so far.
type tally struct {
	more bool // the pass stopped at its writes: the others' turn first
	busy bool // an operation is under way
	// held: the cloud refused a create of this pass for another operation
	// on the cluster (GKE runs one at a time): the other creates would be.
	held bool
	next time.Duration // the earliest retry of a pool, if any
}

// soonest notes a pool due again after d.
func (t *tally) soonest(d time.Duration) {
	if t.next == 0 || d < t.next {
		t.next = max(d, time.Millisecond)
	}
}

// turn reconciles pool p unless it waits for a retry, into t; it returns
// an error that ends the pass.
func (r *clusterRun) turn(ctx context.Context, p *kpool.NodePool, now time.Time, t *tally) error {
	c, st := r.c, r.st
	if rt, ok := st.retry[p.ID]; ok {
		same := rt.generation == p.Generation && rt.deleting == p.Deleting()
		if same && now.Before(rt.next) {
			t.soonest(rt.next.Sub(now))
			return nil
		}
		if !same {
			// A new spec (or a delete) is worth trying at once.
			delete(st.retry, p.ID)
			c.retries.Forget(p.ID)
		}
	}
	if t.held && r.creates(p) {
		// Its turn comes once the cluster's operation ends, with no
		// call, no claim and no backoff.
		st.retry[p.ID] = poolRetry{generation: p.Generation, deleting: p.Deleting(), next: now.Add(c.cfg.ResyncFast)}
		t.soonest(c.cfg.ResyncFast)
		t.busy = true
		return nil
	}
	b, err := r.pool(ctx, p, r.observed[p.ProviderName])
	t.busy = t.busy || b
	switch {
	case err != nil:
		if halt := r.poolFailed(ctx, p, err, now, t.soonest); halt != nil {
			return halt
		}
		if provider.IsBusy(err) {
			t.busy, t.held = true, t.held || r.creates(p)
		} else {
			*r.result = ResultPoolFailed
		}
	case !b:
		// Settled: its failures are behind it.
		delete(st.retry, p.ID)
		c.retries.Forget(p.ID)
	}
	return nil
}

// settle sets the pass's result once every pool had its turn: a failed
// pool's result stands; else following while an operation is under way,
// backoff while a pool that failed before waits for its retry, else ok.
func (r *clusterRun) settle(busy, waiting bool) {
	switch {
	case *r.result == ResultPoolFailed:
	case busy:
		*r.result = ResultFollowing
	case waiting:
		*r.result = ResultBackoff
	}
}

// poolFailed handles a pool's error: one that concerns the whole pass
// (the provider throttling, an endpoint that stopped answering, the
// context ending) is returned to end it; any other backs the pool off and
// soonest hears when it is due again.
func (r *clusterRun) poolFailed(ctx context.Context, p *kpool.NodePool, err error, now time.Time, soonest func(time.Duration)) error {
	c := r.c
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case provider.IsThrottled(err), provider.IsTimeout(err), errors.Is(err, errLaneBusy):
		// The provider asks everyone to slow down, or the endpoint
		// stopped answering: the rest of the pass would only add to it.
		if provider.IsTimeout(err) {
			r.slowLane(ctx, err)
		}
		return err
	}
	var wait time.Duration
	if provider.IsBusy(err) {
		// Not the pool's fault: another operation runs, and the call goes
		// once it ends, which following the cluster sees.
		c.retries.Forget(p.ID)
		wait = c.cfg.ResyncFast
	} else {
		wait = c.retries.When(p.ID)
	}
	if after, ok := provider.RetryAfter(err); ok {
		wait = max(wait, after)
	}
	r.st.retry[p.ID] = poolRetry{generation: p.Generation, deleting: p.Deleting(), next: now.Add(wait)}
	soonest(wait)
	// A provider's error was logged with its call (poolScope.called):
	// when the pool is tried again is the rest.
	level := slog.LevelInfo
	var pe *provider.Error
	if errors.As(err, &pe) {
		level = slog.LevelDebug
	}
	c.cfg.Log.Log(ctx, level, "pool reconcile failed; retrying", append(r.logAttrs(), "pool", p.Name, "pool_id", p.ID,
		"err", err, "failures", c.retries.NumRequeues(p.ID), "after", wait)...)
	return nil
}

// prune forgets the pools of the cluster that are no longer stored, and
// counts the rest for the metrics.
func (c *Controller) prune(st *clusterState, pools []*kpool.NodePool) {
	live := make(map[string]bool, len(pools))
	for _, p := range pools {
		live[p.ID] = true
	}
	for id := range st.seen {
		if !live[id] {
			delete(st.seen, id)
		}
	}
	for id := range st.sent {
		if !live[id] {
			delete(st.sent, id)
		}
	}
	for id := range st.short {
		if !live[id] {
			delete(st.short, id)
		}
	}
	for id := range st.retry {
		if !live[id] {
			delete(st.retry, id)
			c.retries.Forget(id)
		}
	}
	names := make(map[string]bool, len(pools))
	for _, p := range pools {
		names[p.ProviderName] = true
	}
	c.mu.Lock()
	st.pools = max(len(st.seen), len(st.retry))
	for name := range st.want {
		if !names[name] {
			delete(st.want, name)
		}
	}
	c.mu.Unlock()
}

// noDriverFor says once per provider that its pools are left to external
// controllers, or, for a platform without pools, that there is nothing to
// reconcile.
func (c *Controller) noDriverFor(t kpool.PlatformType) {
	c.mu.Lock()
	said := c.noDriver[t]
	c.noDriver[t] = true
	c.mu.Unlock()
	switch {
	case said:
	case !c.cfg.Drivers.Profile(t).Capabilities().NodePools:
		c.cfg.Log.Info("this platform has no node pools: its clusters have nothing to reconcile", "platform", t)
	default:
		c.cfg.Log.Info("no driver for this platform in this kpool: its pools wait for an external controller to report", "platform", t)
	}
}

// pools reads every pool of a cluster.
func (c *Controller) pools(ctx context.Context, clusterID string) ([]*kpool.NodePool, error) {
	var out []*kpool.NodePool
	page := kpool.Page{Limit: 100}
	for {
		ps, _, err := c.store.NodePools(ctx, kpool.NodePoolFilter{ClusterID: clusterID, Page: page})
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
		if len(ps) < page.Limit {
			return out, nil
		}
		last := ps[len(ps)-1]
		page.After = &kpool.Cursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
}

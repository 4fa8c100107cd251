package reconcile

import (
	"context"
	"slices"
	"time"
)

// refresh moves the deadlines of the shards the listing says are still
// this process's, loses those it says are not, and releases leases of its
// own it does not hold (left from a shard lost while the store was away).
func (k *keeper) refresh(ctx context.Context, start time.Time, v *view) {
	renew := k.renew()
	k.mu.Lock()
	var lost []*shard
	for n, s := range k.held {
		left, ok := v.mine[n]
		if !ok && s.draining {
			continue // released meanwhile
		}
		if !ok {
			lost = append(lost, s)
			continue
		}
		// The lease was read after start: it ends no sooner than
		// start+left on this clock. Acting stops a renew period before.
		s.until = start.Add(left - renew)
	}
	var orphans []int
	for n := range v.mine {
		if k.held[n] == nil {
			orphans = append(orphans, n)
		}
	}
	k.mu.Unlock()
	for _, s := range lost {
		k.lose(s, "shard taken by another process")
	}
	for _, n := range orphans {
		_ = k.c.store.ReleaseLease(ctx, ShardLease(n), k.c.cfg.Holder)
	}
}

// take acquires the free or expired shards of mine, for half a renew
// period at most from the round's start.
func (k *keeper) take(ctx context.Context, mine []int, v *view, began time.Time) {
	var got []int
	for _, n := range mine {
		if ctx.Err() != nil || k.c.cfg.Clock.Since(began) > k.renew()/2 {
			break // the rest next round: the held ones' renewal comes first
		}
		k.mu.Lock()
		held := k.held[n] != nil
		k.mu.Unlock()
		if _, taken := v.holders[n]; taken || held {
			continue // its holder gives it back when its spread agrees
		}
		at := k.c.cfg.Clock.Now()
		ok, err := k.c.store.AcquireLease(ctx, ShardLease(n), k.c.cfg.Holder, k.c.cfg.LeaseTTL)
		if err != nil || !ok {
			continue
		}
		k.gain(n, at.Add(k.c.cfg.LeaseTTL-k.renew()))
		got = append(got, n)
	}
	if len(got) > 0 {
		k.c.cfg.Log.Info("shards gained", "holder", k.c.cfg.Holder, "shards", got, "held", k.count(), "of", k.n, "clusters", k.clusters())
		k.metrics()
		select {
		case k.wake <- struct{}{}:
		default:
		}
	}
}

// gain starts acting on shard n until until (unless renewed).
func (k *keeper) gain(n int, until time.Time) {
	ctx, cancel := context.WithCancel(k.run)
	s := &shard{n: n, ctx: ctx, cancel: cancel, until: until}
	k.mark("", n, true) // before any pass of it can begin
	k.mu.Lock()
	k.held[n] = s
	k.gained[n] = true
	k.mu.Unlock()
	go k.watch(s)
}

// watch loses the shard once its deadline passes unrenewed: its passes
// are cancelled before its lease can expire and pass to another process.
func (k *keeper) watch(s *shard) {
	clock := k.c.cfg.Clock
	for {
		k.mu.Lock()
		wait := s.until.Sub(clock.Now())
		k.mu.Unlock()
		if wait <= 0 {
			k.lose(s, "shard lease could not be renewed in time")
			return
		}
		t := clock.NewTimer(wait)
		select {
		case <-s.ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
	}
}

// lose stops acting on a shard at once: its passes are cancelled, and
// what is kept of its clusters dropped once they have ended.
func (k *keeper) lose(s *shard, why string) {
	cur := k.remove(s)
	s.cancel()
	if !cur {
		return
	}
	if k.run.Err() == nil {
		k.c.cfg.Log.Warn(why, "holder", k.c.cfg.Holder, "shard", s.n)
	}
	go func() {
		s.passes.Wait()
		k.mark("", s.n, false)
		k.drop(s.n)
	}()
}

// remove stops holding s, and reports whether it was held (not lost or
// given back meanwhile).
func (k *keeper) remove(s *shard) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.held[s.n] != s {
		return false
	}
	delete(k.held, s.n)
	delete(k.gained, s.n)
	return true
}

// giveBack gives back the shards held that are not mine: none of their
// passes starts any more, and each lease is released once its passes in
// flight have ended.
func (k *keeper) giveBack(ctx context.Context, mine []int) {
	k.mu.Lock()
	var ns []int
	var back []*shard
	for n, s := range k.held {
		if !s.draining && !slices.Contains(mine, n) {
			s.draining = true
			ns, back = append(ns, n), append(back, s)
		}
	}
	k.mu.Unlock()
	if len(back) == 0 {
		return
	}
	slices.Sort(ns)
	k.c.cfg.Log.Info("shards given back", "holder", k.c.cfg.Holder, "shards", ns, "held", k.count(), "of", k.n, "clusters", k.clusters())
	for _, s := range back {
		go k.release(ctx, s)
	}
}

// release gives a shard's lease up once its passes have ended.
func (k *keeper) release(ctx context.Context, s *shard) {
	s.passes.Wait()
	cur := k.remove(s)
	if !cur {
		return // lost meanwhile
	}
	s.cancel()
	k.mark("", s.n, false)
	if err := k.c.store.ReleaseLease(ctx, ShardLease(s.n), k.c.cfg.Holder); err != nil && ctx.Err() == nil {
		// It expires instead: not acting on it is all that matters.
		k.c.cfg.Log.Warn("shard lease not released", "holder", k.c.cfg.Holder, "shard", s.n, "err", err)
	}
	k.drop(s.n)
}

// drop forgets what the controllers keep of a shard's clusters.
func (k *keeper) drop(n int) {
	k.mu.Lock()
	again := k.held[n] != nil
	k.mu.Unlock()
	if again {
		return // taken again meanwhile: its clusters are this process's
	}
	k.c.mu.Lock()
	var ids []string
	for id := range k.c.clusters {
		if ShardOf(id, k.n) == n {
			ids = append(ids, id)
		}
	}
	k.c.mu.Unlock()
	k.mu.Lock()
	for id, sn := range k.known {
		if sn == n {
			ids = append(ids, id)
		}
	}
	k.mu.Unlock()
	for _, id := range ids {
		k.c.forget(id)
	}
	k.metrics()
}

// releaseAll gives up every lease of this process once its passes have
// ended, as it stops: the others need not wait for them to expire.
func (k *keeper) releaseAll() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	k.mu.Lock()
	held := k.held
	k.held = map[int]*shard{}
	k.mu.Unlock()
	for n, s := range held {
		s.passes.Wait()
		s.cancel()
		k.mark("", n, false)
		_ = k.c.store.ReleaseLease(ctx, ShardLease(n), k.c.cfg.Holder)
	}
	_ = k.c.store.ReleaseLease(ctx, k.member, k.c.cfg.Holder)
	if len(held) > 0 {
		k.c.cfg.Log.Info("shards given back: stopping", "holder", k.c.cfg.Holder, "shards", len(held))
	}
	k.metrics()
}

// mark tells Config.OnHandling.
func (k *keeper) mark(cluster string, n int, begin bool) {
	if f := k.c.cfg.OnHandling; f != nil {
		f(Handling{Holder: k.c.cfg.Holder, Cluster: cluster, Shard: n, Begin: begin})
	}
}

// clusters is how many clusters the shards held and not being given back
// have, as last listed.
func (k *keeper) clusters() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := 0
	for i, s := range k.held {
		if !s.draining {
			n += k.weighs[i]
		}
	}
	return n
}

// metrics sets the shard gauges.
func (k *keeper) metrics() {
	k.mu.Lock()
	shards := len(k.held)
	k.mu.Unlock()
	clusters := k.clusters()
	m := k.c.cfg.Metrics
	m.Shards.Set(float64(shards))
	m.Clusters.Set(float64(clusters))
	m.Leader.Set(float64(min(shards, 1)))
}

// due is how long until the next round must renew the held shards: half
// the time to the soonest deadline.
func (k *keeper) due() time.Duration {
	k.mu.Lock()
	defer k.mu.Unlock()
	now, d := k.c.cfg.Clock.Now(), k.renew()
	for _, s := range k.held {
		d = min(d, s.until.Sub(now)/2)
	}
	return max(d, k.renew()/20)
}

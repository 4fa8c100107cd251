package reconcile

import "context"

// begin says whether a pass over a cluster may start: its shard is held,
// not being given back, and within its deadline. The pass runs in the
// shard's context, which ends when the shard is lost; end must follow.
func (k *keeper) begin(ctx context.Context, id string) (*shard, context.Context, bool) {
	if k == nil {
		return nil, ctx, true
	}
	n := ShardOf(id, k.n)
	k.mu.Lock()
	s := k.held[n]
	ok := s != nil && !s.draining && s.ctx.Err() == nil && k.c.cfg.Clock.Now().Before(s.until)
	if ok {
		s.passes.Add(1)
		k.known[id] = n
	}
	k.mu.Unlock()
	if !ok {
		return nil, nil, false
	}
	k.mark(id, n, true)
	return s, s.ctx, true
}

// end ends a pass begin started.
func (k *keeper) end(s *shard, id string) {
	if s == nil {
		return
	}
	k.mark(id, s.n, false)
	s.passes.Done()
	k.metrics()
}

// holds says whether a cluster's shard is this process's, to act on its
// events; a cluster it holds is counted as known.
func (k *keeper) holds(id string) bool {
	if k == nil {
		return true
	}
	n := ShardOf(id, k.n)
	k.mu.Lock()
	s := k.held[n]
	ok := s != nil && !s.draining
	if ok {
		k.known[id] = n
	}
	k.mu.Unlock()
	return ok
}

// forget drops a cluster from the known ones.
func (k *keeper) forget(id string) {
	if k == nil {
		return
	}
	k.mu.Lock()
	delete(k.known, id)
	k.mu.Unlock()
}

// takeGained returns the shards gained whose clusters are to be queued
// (nil: none), and a filter of their clusters.
func (k *keeper) takeGained() func(id string) bool {
	k.mu.Lock()
	gained := k.gained
	k.gained = map[int]bool{}
	k.mu.Unlock()
	if len(gained) == 0 {
		return nil
	}
	return func(id string) bool { return gained[ShardOf(id, k.n)] && k.holds(id) }
}

// wakes is the channel that says shards were gained (nil without a keeper).
func (k *keeper) wakes() <-chan struct{} {
	if k == nil {
		return nil
	}
	return k.wake
}

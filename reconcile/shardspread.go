package reconcile

import (
	"cmp"
	"context"
	"slices"
)

// spread says which member is to hold each shard, so that each holds
// about as many clusters as the others: clusters hash unevenly into
// shards, and an even count of shards left one process of three with 23
// clusters of 51. weights[n] is how many clusters shard n holds; holders
// is who holds which now. Every process computes it from the same
// listing, so they agree without asking.
//
// A shard stays with its holder while the holder stays within its part of
// the clusters (the total over the members, the members holding most now
// taking the remainder), so a cluster created or a member come or gone
// moves few shards; the rest go, largest first, to the member holding
// fewest clusters. Shards without clusters are spread by count the same
// way, so that new clusters land evenly.
func spread(members []string, weights []int, holders map[int]string) map[int]string {
	out := map[int]string{}
	if len(members) == 0 {
		return out
	}
	var full, empty []int
	for n, w := range weights {
		if w > 0 {
			full = append(full, n)
		} else {
			empty = append(empty, n)
		}
	}
	one := func(int) int { return 1 }
	pack(out, members, full, func(n int) int { return weights[n] }, holders)
	pack(out, members, empty, one, holders)
	return out
}

// pack assigns shards to members by weight into out (see spread).
func pack(out map[int]string, members []string, shards []int, weight func(int) int, holders map[int]string) {
	m := len(members)
	held, total := map[string]int{}, 0
	for _, n := range shards {
		total += weight(n)
		if h, ok := holders[n]; ok && slices.Contains(members, h) {
			held[h] += weight(n)
		}
	}
	// Each member's part: the total over the members, one more for the
	// members holding most now while the remainder lasts.
	order := slices.Clone(members)
	slices.SortStableFunc(order, func(a, b string) int { return cmp.Or(cmp.Compare(held[b], held[a]), cmp.Compare(a, b)) })
	part := map[string]int{}
	for i, h := range order {
		part[h] = total / m
		if i < total%m {
			part[h]++
		}
	}
	slices.SortStableFunc(shards, func(a, b int) int { return cmp.Or(cmp.Compare(weight(b), weight(a)), cmp.Compare(a, b)) })
	load, count := map[string]int{}, map[string]int{}
	var rest []int
	for _, n := range shards {
		h, ok := holders[n]
		// A shard larger than a part stays too, as its holder's only one.
		if ok && part[h] > 0 && load[h]+weight(n) <= max(part[h], weight(n)) {
			out[n], load[h], count[h] = h, load[h]+weight(n), count[h]+1
			continue
		}
		rest = append(rest, n)
	}
	for _, n := range rest {
		// Of the members holding fewest, its holder keeps it.
		mine := func(h string) int {
			if holders[n] == h {
				return 0
			}
			return 1
		}
		to := slices.MinFunc(members, func(a, b string) int {
			return cmp.Or(cmp.Compare(load[a], load[b]), cmp.Compare(mine(a), mine(b)), cmp.Compare(count[a], count[b]), cmp.Compare(a, b))
		})
		out[n], load[to], count[to] = to, load[to]+weight(n), count[to]+1
	}
}

// share is the shards this process is to hold: its part of the spread of
// the clusters, as the store lists them now (as last listed if it cannot).
func (k *keeper) share(ctx context.Context, v *view) []int {
	ws := make([]int, k.n)
	ids, err := k.c.store.ClusterIDs(ctx)
	for _, id := range ids {
		ws[ShardOf(id, k.n)]++
	}
	k.mu.Lock()
	if err == nil {
		k.weighs = ws
	}
	ws = k.weighs
	k.mu.Unlock()
	if err != nil && ctx.Err() == nil {
		k.c.cfg.Log.Warn("clusters not listed to spread them", "holder", k.c.cfg.Holder, "err", err)
	}
	to := spread(v.members, ws, v.holders)
	var mine []int
	for n := range k.n {
		if to[n] == k.c.cfg.Holder {
			mine = append(mine, n)
		}
	}
	return mine
}

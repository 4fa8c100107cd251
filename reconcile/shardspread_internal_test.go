package reconcile

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// loads sums the weights each member is given.
func loads(members []string, weights []int, to map[int]string) map[string]int {
	out := map[string]int{}
	for _, h := range members {
		out[h] = 0
	}
	for n, h := range to {
		out[h] += weights[n]
	}
	return out
}

// TestSpreadEven: whatever the weights and holders, every shard goes to a
// member, and the most clusters a member gets is within the largest shard
// of the fewest; shards without clusters are spread by count.
func TestSpreadEven(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		n, m := 1+r.IntN(64), 1+r.IntN(6)
		members := make([]string, m)
		for j := range members {
			members[j] = fmt.Sprintf("p%d", j)
		}
		weights, holders := make([]int, n), map[int]string{}
		for s := range weights {
			weights[s] = r.IntN(4) * r.IntN(3)
			if r.IntN(3) > 0 {
				holders[s] = fmt.Sprintf("p%d", r.IntN(m+1)) // p<m> is gone
			}
		}
		to := spread(members, weights, holders)
		if len(to) != n {
			t.Fatalf("case %d: %d of %d shards assigned", i, len(to), n)
		}
		for s, h := range to {
			if !slices.Contains(members, h) {
				t.Fatalf("case %d: shard %d to %q, not a member", i, s, h)
			}
		}
		l := slices.Collect(maps.Values(loads(members, weights, to)))
		if top, most := slices.Max(l)-slices.Min(l), max(1, slices.Max(weights)); top > most {
			t.Fatalf("case %d: loads %v differ by %d, more than the largest shard (%d); weights %v holders %v", i, l, top, most, weights, holders)
		}
		empty, zeros := map[string]int{}, 0
		for _, h := range members {
			empty[h] = 0
		}
		for s, h := range to {
			if weights[s] == 0 {
				empty[h]++
				zeros++
			}
		}
		if c := slices.Collect(maps.Values(empty)); zeros > 0 && slices.Max(c)-slices.Min(c) > 1 {
			t.Fatalf("case %d: shards without clusters by member %v", i, empty)
		}
	}
}

// TestSpreadSticky: once settled a spread stays put; a cluster created
// moves one shard of clusters, seldom two; a member that joins takes its part
// with few other moves, and one that goes only gives its own.
func TestSpreadSticky(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	moved := func(a, b map[int]string) (out []int) {
		for s, h := range a {
			if b[s] != h {
				out = append(out, s)
			}
		}
		return out
	}
	for i := range 3000 {
		n, m := 1+r.IntN(64), 1+r.IntN(5)
		var members []string
		for j := range m {
			members = append(members, fmt.Sprintf("p%d", j))
		}
		weights := make([]int, n)
		for range r.IntN(3 * n) {
			weights[r.IntN(n)]++
		}
		settled := spread(members, weights, spread(members, weights, nil))
		if again := spread(members, weights, settled); !maps.Equal(again, settled) {
			t.Fatalf("case %d: a settled spread moved %v", i, moved(settled, again))
		}

		grown := slices.Clone(weights)
		grown[r.IntN(n)]++
		// Moving a shard without clusters interrupts nothing. One moves
		// at most, two (3 cases in 100,000) when the new parts let a
		// spread within the largest shard even out.
		full := slices.DeleteFunc(moved(settled, spread(members, grown, settled)), func(s int) bool { return grown[s] == 0 })
		if len(full) > 2 {
			t.Fatalf("case %d: a cluster created moved shards %v: weights %v grown %v settled %v", i, full, weights, grown, settled)
		}

		// A member that joins takes its part; to even out, the others may
		// pass a few among themselves, never a reshuffle: the clusters
		// moved are at most twice the newcomer's.
		joined := append(slices.Clone(members), "p9")
		after := spread(joined, weights, settled)
		shifted := 0
		for _, s := range moved(settled, after) {
			shifted += weights[s]
		}
		if got := loads(joined, weights, after)["p9"]; shifted > 2*got {
			t.Fatalf("case %d: with p9 joining, %d clusters moved, p9 has %d: weights %v settled %v after %v", i, shifted, got, weights, settled, after)
		}

		gone := members[r.IntN(m)]
		if m == 1 {
			continue
		}
		left := slices.DeleteFunc(slices.Clone(members), func(h string) bool { return h == gone })
		for _, s := range moved(settled, spread(left, weights, settled)) {
			if settled[s] != gone {
				t.Fatalf("case %d: with %s gone shard %d moved from %s", i, gone, s, settled[s])
			}
		}
	}
}

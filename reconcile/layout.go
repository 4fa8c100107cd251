package reconcile

import (
	"cmp"
	"slices"
	"time"

	"github.com/kpool/kpool"
)

// A logical pool's layout: how many nodes each of its offerings gets. The
// template's offerings share the count evenly; an offering that ran out
// keeps the nodes it has and the rest go to the other offerings that have
// capacity, the template's first (least loaded first), then each
// fallback's in order. An offering that ran out is left alone for a while
// (unavailableFor, doubling each time it runs out again), then asked for
// its share again, no sooner than minMoveInterval after the last move.
// Nodes leave an offering only while the logical pool keeps at least its
// count of Ready nodes without them: moves never drop capacity.

// cell is one offering of a logical pool and what its member pool has.
type cell struct {
	kpool.Offering
	rank   int
	member *kpool.NodePool // nil: none made
	count  int             // the member's spec count
	ready  int             // its Ready nodes
	short  *kpool.Shortage // the member's shortage at its current spec
	gone   bool            // its member is being deleted: nothing is placed on it
	want   int             // what the layout asks of it
	target int             // what it is asked for now (want, as far as moves allow)
}

// layout is one pass's decision for a logical pool.
type layout struct {
	total       int
	cells       []*cell
	unavailable map[kpool.Offering]kpool.UnavailableOffering
	unplaced    int  // nodes no offering with capacity can take
	away, back  bool // nodes moved away from an offering that ran out; back to one that returned
}

// plan decides the layout of total nodes over cells (in rank order), given
// the offerings known to have run out (prev) and the policy.
func plan(total int, cells []*cell, prev []kpool.UnavailableOffering, lastMove *time.Time, pol *kpool.CapacityPolicy, now time.Time) *layout {
	unavailableFor, minMove := pol.Durations()
	l := &layout{total: total, cells: cells, unavailable: markShort(cells, prev, unavailableFor, now)}
	mayReturn := lastMove == nil || now.Sub(*lastMove) >= minMove
	blocked := func(c *cell) bool {
		u, ok := l.unavailable[c.Offering]
		return c.gone || ok && (now.Before(u.Until) || !mayReturn || c.short != nil)
	}
	var preferred []*cell
	for _, c := range cells {
		if c.rank == 0 {
			preferred = append(preferred, c)
		}
	}
	for i, c := range preferred {
		c.want = total / len(preferred)
		if i < total%len(preferred) {
			c.want++
		}
	}
	shortfall := 0
	for _, c := range preferred {
		if blocked(c) {
			keep := min(c.want, c.ready)
			shortfall += c.want - keep
			c.want = keep
		}
	}
	l.place(shortfall, blocked)
	l.limitMoves()
	for _, c := range cells {
		// Asked again once its wait was over, and it has its share.
		if _, ok := l.unavailable[c.Offering]; ok && !blocked(c) && c.short == nil && c.count >= c.want && c.ready >= c.want {
			delete(l.unavailable, c.Offering)
		}
	}
	return l
}

// place gives the nodes an offering that ran out cannot take to the others
// with capacity, one at a time: lowest rank, then least loaded, then order.
func (l *layout) place(n int, blocked func(*cell) bool) {
	var open []*cell
	for _, c := range l.cells {
		if !blocked(c) {
			open = append(open, c)
		}
	}
	for ; n > 0; n-- {
		if len(open) == 0 {
			l.unplaced = n
			return
		}
		best := slices.MinFunc(open, func(a, b *cell) int {
			return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.want, b.want))
		})
		best.want++
	}
}

// limitMoves sets each cell's target: increases at once; cuts only of
// nodes that are not Ready, or as far as the pool keeps its count of Ready
// nodes without the ones cut, fallbacks first.
func (l *layout) limitMoves() {
	ready := 0
	for _, c := range l.cells {
		ready += c.ready
		c.target = c.want
	}
	budget := max(ready-l.total, 0)
	byRank := slices.Clone(l.cells)
	slices.SortStableFunc(byRank, func(a, b *cell) int { return cmp.Compare(b.rank, a.rank) })
	for _, c := range byRank {
		if c.want >= c.count {
			if c.want > c.count && c.short == nil && l.wasShort(c) {
				l.back = true
			}
			continue
		}
		free := max(c.count-max(c.ready, c.want), 0) // nodes it never got
		real := min(c.count-c.want-free, budget)
		budget -= real
		c.target = c.count - free - real
		if free > 0 && c.short != nil {
			l.away = true
		}
		if real > 0 && c.rank > 0 {
			l.back = true
		}
	}
}

// wasShort reports whether c's offering is one that ran out.
func (l *layout) wasShort(c *cell) bool {
	_, ok := l.unavailable[c.Offering]
	return ok
}

// markShort updates the offerings known to have run out: a member short at
// its current spec marks its offering (again: the wait doubles, up to
// MaxUnavailableFor).
func markShort(cells []*cell, prev []kpool.UnavailableOffering, base time.Duration, now time.Time) map[kpool.Offering]kpool.UnavailableOffering {
	out := map[kpool.Offering]kpool.UnavailableOffering{}
	known := map[kpool.Offering]bool{}
	for _, c := range cells {
		known[c.Offering] = true
	}
	for _, u := range prev {
		if known[u.Offering] {
			out[u.Offering] = u
		}
	}
	for _, c := range cells {
		u, was := out[c.Offering]
		switch {
		case c.short != nil && (!was || !now.Before(u.Until)):
			if !was {
				u = kpool.UnavailableOffering{Offering: c.Offering, Since: c.short.Since}
			}
			u.Times++
			u.Until = now.Add(min(base<<min(u.Times-1, 10), kpool.MaxUnavailableFor))
			u.Code, u.Message = c.short.Code, c.short.Message
			out[c.Offering] = u
		}
	}
	return out
}

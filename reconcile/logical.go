package reconcile

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
)

// logicalPools keeps each logical pool of the cluster at its count: it
// reads its members as this pass left them, plans the layout, and has the
// service write the members and the status in one transaction. It returns
// when to look again (0: at the cluster's own pace).
func (r *clusterRun) logicalPools(ctx context.Context) time.Duration {
	if r.cl.Deleting() {
		return 0 // its pools go with it; no member is made or moved
	}
	ictx := kpool.WithIdentity(ctx, Identity)
	list, err := r.c.cfg.Service.LogicalPools(ictx, service.ListOptions{ClusterID: r.cl.ID, Limit: kpool.MaxLimit})
	if err != nil || len(list.Items) == 0 {
		if err != nil {
			r.c.cfg.Log.Warn("listing logical pools", append(r.logAttrs(), "err", err)...)
		}
		return 0
	}
	pools, err := r.c.pools(ctx, r.cl.ID) // this pass's reports included
	if err != nil {
		r.c.cfg.Log.Warn("reading pools for logical pools", append(r.logAttrs(), "err", err)...)
		return r.c.cfg.ResyncFast
	}
	var next time.Duration
	for _, lp := range list.Items {
		if lp.DeletionTimestamp != nil {
			continue
		}
		if d := r.logicalPool(ictx, lp, pools); d > 0 && (next == 0 || d < next) {
			next = d
		}
	}
	return next
}

// logicalPool plans one logical pool and writes what changed.
func (r *clusterRun) logicalPool(ctx context.Context, lp *kpool.LogicalPool, pools []*kpool.NodePool) time.Duration {
	now := r.c.cfg.Clock.Now()
	cells, joined := r.cellsOf(lp, pools)
	total, spare := lpCount(&lp.Spec)
	l := plan(total, cells, lp.Status.Unavailable, lp.Status.LastMoveAt, lp.Spec.Capacity, now)
	st := l.status(lp, joined, now)
	in := service.LogicalLayout{Generation: lp.Generation, Status: st}
	spread := spares(cells, spare)
	changed := false
	for i, c := range cells {
		if c.member == nil && c.target == 0 {
			continue
		}
		m := service.LayoutMember{Offering: c.Offering, Alternative: c.rank, Count: c.target, Delete: c.target == 0}
		if lp.Spec.Autoscaling.On() {
			m.MaxCount = c.target + spread[i]
		}
		changed = changed || c.member == nil || c.count != m.Count || m.Delete
		in.Members = append(in.Members, m)
	}
	if l.away || l.back {
		in.Moved = l.moved()
		dir := "away"
		if !l.away {
			dir = "back"
		}
		r.c.cfg.Metrics.LogicalMoves.WithLabelValues(string(r.cl.Spec.Platform.Type), dir).Inc()
	}
	if changed || !sameLogicalStatus(&lp.Status, &st) {
		if _, err := r.c.cfg.Service.ApplyLogicalLayout(ctx, lp.ID, in); err != nil {
			r.c.cfg.Log.Warn("logical pool layout", append(r.logAttrs(), "logical_pool", lp.Name, "err", err)...)
			return r.c.cfg.ResyncFast
		}
		if in.Moved != "" {
			r.c.cfg.Log.Info("logical pool moves nodes", append(r.logAttrs(), "logical_pool", lp.Name, "move", in.Moved)...)
		}
	}
	return l.recheck(now, r.c.cfg.ResyncFast)
}

// lpCount is the nodes a logical pool's layout places (its count, or its
// autoscaling minimum) and, with autoscaling, how many more it may grow.
func lpCount(s *kpool.LogicalPoolSpec) (total, spare int) {
	if a := s.Autoscaling; a.On() {
		lo, hi := 0, 0
		if a.MinNodes != nil {
			lo = *a.MinNodes
		}
		if a.MaxNodes != nil {
			hi = *a.MaxNodes
		}
		return lo, max(hi-lo, 0)
	}
	if s.NodeCount == nil {
		return 0, 0
	}
	return *s.NodeCount, 0
}

// spares splits an autoscaling logical pool's room to grow over the cells
// that hold nodes, evenly.
func spares(cells []*cell, spare int) []int {
	out := make([]int, len(cells))
	var holding []int
	for i, c := range cells {
		if c.target > 0 {
			holding = append(holding, i)
		}
	}
	for k, i := range holding {
		out[i] = spare / len(holding)
		if k < spare%len(holding) {
			out[i]++
		}
	}
	return out
}

// cellsOf pairs each offering of a logical pool with the member made for
// it, and lists the pools that joined it by spec.placementPool. A made
// member whose offering the spec no longer lists is a cell of its own that
// wants nothing (so it drains away).
func (r *clusterRun) cellsOf(lp *kpool.LogicalPool, pools []*kpool.NodePool) (cells []*cell, joined []*kpool.NodePool) {
	byName := map[string]*kpool.NodePool{}
	for _, p := range pools {
		if p.LogicalPool() == lp.Name {
			byName[p.Name] = p
		}
	}
	seen := map[kpool.Offering]bool{}
	used := map[string]bool{}
	for _, a := range lp.Spec.Alternatives(r.c.cfg.Service.Platforms, r.cl) {
		for _, o := range a.Offerings {
			if seen[o] {
				continue
			}
			seen[o] = true
			name := lp.MemberName(o.Zone, a.Rank)
			c := &cell{Offering: o, rank: a.Rank}
			if p := byName[name]; p != nil {
				used[name] = true
				c.fill(p)
			}
			cells = append(cells, c)
		}
	}
	for name, p := range byName {
		if used[name] {
			continue
		}
		if zone, rank, ok := memberOf(lp.Name, name); ok {
			c := &cell{Offering: r.c.cfg.Service.Platforms.Offering(r.cl, &p.Spec), rank: rank}
			c.Zone = zone
			c.fill(p)
			cells = append(cells, c)
			continue
		}
		joined = append(joined, p)
	}
	return cells, joined
}

// fill records what a member pool has: its count, its Ready nodes, and
// its shortage when it is about its current spec.
func (c *cell) fill(p *kpool.NodePool) {
	c.member, c.count = p, p.Spec.Count()
	if a := p.Spec.Autoscaling; a.On() && a.MinNodes != nil {
		c.count = *a.MinNodes
	}
	c.ready = readyOf(p)
	switch sh := p.Status.Shortage; {
	case p.Deleting():
		c.gone = true // what it lacked no longer counts: it is going
	case sh != nil && p.Status.ObservedGeneration >= p.Generation:
		c.short = sh
	}
}

// readyOf is a member's Ready nodes: as Kubernetes says, else as the
// cloud's last count says.
func readyOf(p *kpool.NodePool) int {
	switch {
	case p.Deleting():
		return 0
	case p.Status.Nodes != nil:
		return p.Status.Nodes.Ready
	case p.Status.Shortage != nil:
		return p.Status.Shortage.Nodes
	case p.Status.Phase == kpool.PhaseReady:
		return p.Spec.Count()
	}
	return 0
}

// memberOf parses a made member's name, NAME-ZONE[-fK] or NAME-fK.
func memberOf(lp, name string) (zone string, rank int, ok bool) {
	rest, ok := strings.CutPrefix(name, lp+"-")
	if !ok {
		return "", 0, false
	}
	if i := strings.LastIndex(rest, "-f"); i >= 0 || strings.HasPrefix(rest, "f") {
		k := rest[i+2:]
		if i < 0 {
			k, i = rest[1:], 0
		}
		n, err := strconv.Atoi(k)
		if err != nil || n < 1 {
			return "", 0, false
		}
		rank, rest = n, rest[:max(i, 0)]
	}
	if rest != "" && !kpool.IsLogicalZone(rest) {
		return "", 0, false
	}
	return rest, rank, true
}

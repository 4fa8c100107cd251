package reconcile

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kpool/kpool"
)

// Reasons of a logical pool's Ready condition.
const (
	ReasonLogicalReady   = "NodesReady"      // its count of nodes is Ready
	ReasonLogicalScaling = "Scaling"         // nodes are being added or moved
	ReasonLogicalShort   = "CapacityShort"   // some nodes have no offering with capacity
	ReasonLogicalEmpty   = "NoOfferingsLeft" // every offering ran out
)

// status is the logical pool's status after this pass's decision.
func (l *layout) status(lp *kpool.LogicalPool, joined []*kpool.NodePool, now time.Time) kpool.LogicalPoolStatus {
	st := kpool.LogicalPoolStatus{ObservedGeneration: lp.Generation, NodeCount: l.total, LastMoveAt: lp.Status.LastMoveAt,
		LastUpdateTime: now}
	if l.away || l.back {
		st.LastMoveAt = &now
	}
	for _, c := range l.cells {
		st.ReadyNodes += c.ready
		if c.member == nil && c.target == 0 {
			continue
		}
		m := kpool.LogicalMember{Name: lp.MemberName(c.Zone, c.rank), Offering: c.Offering, Made: true,
			Alternative: c.rank, NodeCount: c.target, ReadyNodes: c.ready, Phase: kpool.PhasePending}
		if c.member != nil {
			m.ID, m.Name, m.Phase = c.member.ID, c.member.Name, c.member.Status.Phase
		}
		st.Members = append(st.Members, m)
	}
	for _, p := range joined {
		r := readyOf(p)
		st.ReadyNodes += r
		st.Members = append(st.Members, kpool.LogicalMember{ID: p.ID, Name: p.Name, NodeCount: p.Spec.Count(), ReadyNodes: r, Phase: p.Status.Phase})
	}
	for _, u := range l.unavailable {
		st.Unavailable = append(st.Unavailable, u)
	}
	slices.SortFunc(st.Unavailable, func(a, b kpool.UnavailableOffering) int {
		return cmp.Or(cmp.Compare(a.Zone, b.Zone), cmp.Compare(a.MachineType, b.MachineType))
	})
	st.Message = l.message()
	st.Conditions = []kpool.Condition{kpool.StampTransition(lp.Status.Conditions, l.ready(st.ReadyNodes), now)}
	return st
}

// ready is the logical pool's Ready condition.
func (l *layout) ready(readyNodes int) kpool.Condition {
	c := kpool.Condition{Type: kpool.ConditionReady, Status: kpool.ConditionFalse}
	switch {
	case l.unplaced > 0 && l.unplaced == l.total:
		c.Reason, c.Message = ReasonLogicalEmpty, "every offering ran out of capacity"
	case l.unplaced > 0:
		c.Reason, c.Message = ReasonLogicalShort, fmt.Sprintf("%d of %d nodes have no offering with capacity", l.unplaced, l.total)
	case readyNodes >= l.total:
		c.Status, c.Reason = kpool.ConditionTrue, ReasonLogicalReady
		c.Message = fmt.Sprintf("%d of %d nodes Ready", readyNodes, l.total)
	default:
		c.Reason, c.Message = ReasonLogicalScaling, fmt.Sprintf("%d of %d nodes Ready", readyNodes, l.total)
	}
	return c
}

// message says what ran out, since when, and where the nodes run instead:
// "zone 2 Standard_D8s_v5 out of capacity since 10:32 (ZonalAllocationFailed);
// 1 more node in zone 3 Standard_D8s_v5"; empty when the preferred layout holds.
func (l *layout) message() string {
	var parts []string
	for _, c := range l.cells {
		if u, ok := l.unavailable[c.Offering]; ok {
			w := fmt.Sprintf("%s out of capacity since %s", c.Offering, u.Since.UTC().Format("15:04"))
			if u.Code != "" {
				w += " (" + u.Code + ")"
			}
			parts = append(parts, w)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	share := preferredShare(l.cells, l.total)
	for i, c := range l.cells {
		if extra := c.target - share[i]; extra > 0 {
			parts = append(parts, fmt.Sprintf("%d %s in %s instead", extra, nodes(extra), c.Offering))
		}
	}
	if l.unplaced > 0 {
		parts = append(parts, fmt.Sprintf("%d %s with no offering that has capacity", l.unplaced, nodes(l.unplaced)))
	}
	return strings.Join(parts, "; ")
}

// moved says what this pass moves, for the event and the log.
func (l *layout) moved() string {
	var parts []string
	for _, c := range l.cells {
		if c.target != c.count {
			parts = append(parts, fmt.Sprintf("%s %d→%d", c.Offering, c.count, c.target))
		}
	}
	why := "back to offerings that have capacity again"
	if l.away {
		why = "away from offerings that ran out of capacity"
	}
	return why + ": " + strings.Join(parts, ", ")
}

// recheck is when to look at the logical pool again: soon while nodes are
// on their way or moving, else when the next unavailable offering's wait
// ends (0: at the cluster's own pace).
func (l *layout) recheck(now time.Time, fast time.Duration) time.Duration {
	next := time.Duration(0)
	for _, c := range l.cells {
		if c.target != c.ready || c.target != c.count {
			next = fast
		}
	}
	for _, u := range l.unavailable {
		if d := u.Until.Sub(now); d > 0 && (next == 0 || d < next) {
			next = d
		} else if d <= 0 {
			next = fast
		}
	}
	return next
}

// preferredShare is each cell's share of the count in the preferred
// layout: the template's offerings, evenly.
func preferredShare(cells []*cell, total int) []int {
	out := make([]int, len(cells))
	n := 0
	for _, c := range cells {
		if c.rank == 0 {
			n++
		}
	}
	k := 0
	for i, c := range cells {
		if c.rank == 0 && n > 0 {
			out[i] = total / n
			if k < total%n {
				out[i]++
			}
			k++
		}
	}
	return out
}

func nodes(n int) string {
	if n == 1 {
		return "node"
	}
	return "nodes"
}

// sameLogicalStatus reports whether two statuses say the same, their
// times of update aside.
func sameLogicalStatus(a, b *kpool.LogicalPoolStatus) bool {
	x, y := *a, *b
	x.LastUpdateTime, y.LastUpdateTime = time.Time{}, time.Time{}
	jx, err1 := json.Marshal(x)
	jy, err2 := json.Marshal(y)
	return err1 == nil && err2 == nil && string(jx) == string(jy)
}

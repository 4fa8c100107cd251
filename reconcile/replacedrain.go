package reconcile

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/drain"
	"github.com/kpool/kpool/provider"
)

// drainInFlight bounds the pods a replacement's drain evicts at once; the
// budgets bound them further.
const drainInFlight = 16

// drainSteps is how many drain steps one pass takes while they make
// progress: an eviction whose replacement is Ready at once lets the next
// go in the same pass.
const drainSteps = 4

// drainOld cordons every old node (no pod lands there again) and drains
// them in batches of the strategy's surge (or maxUnavailable, when more),
// under the workloads' budgets; once all are empty the successor soaks.
func (s *poolScope) drainOld(ctx context.Context, rp *kpool.Replacement) (bool, error) {
	if s.watch == nil || s.watch.cs == nil || !s.nodesKnown {
		return true, s.record(ctx, rp, ReasonReplacing, "waiting for the cluster's Kubernetes API, to drain the old nodes")
	}
	old := s.nodeNames(rp.From)
	for _, n := range s.nodes[rp.From] {
		if !n.Spec.Unschedulable {
			if err := drain.Cordon(ctx, s.watch.cs, n.Name); err != nil {
				return true, s.record(ctx, rp, ReasonReplacing, fmt.Sprintf("cordoning %s: %v", n.Name, err))
			}
		}
	}
	u := s.p.Spec.UpdateStrategy
	batch := max(u.SurgeOf(s.p.Spec.Count()), u.UnavailableOf(len(old)+len(rp.Drained)))
	inflight := s.nextBatch(rp, old, batch)
	rp.OldNodes, rp.NewNodes = s.readyNodes(rp.From), s.readyNodes(rp.To)
	if len(inflight) == 0 {
		rp.Step, rp.Blocking = kpool.StepSoaking, nil
		until := s.c.cfg.Clock.Now().UTC().Add(u.SoakFor())
		rp.SoakUntil = &until
		s.logPool(ctx, slog.LevelInfo, "replacement: the old nodes are drained", "from", rp.From, "soak", u.SoakFor().String())
		return s.soak(ctx, rp)
	}
	// The batch is stored before its first eviction: its drain's timeout
	// counts from then, across restarts.
	if err := s.record(ctx, rp, ReasonReplacing, "draining "+strings.Join(inflight, ", ")); err != nil {
		return true, err
	}
	prog, err := s.drainSome(ctx, inflight, earliest(rp.Draining, inflight), drainer(u))
	s.noteDrained(rp, prog)
	if prog.Stopped {
		return s.stop(ctx, rp, fmt.Sprintf("%s not drained within %s: %s", strings.Join(inflight, ", "), u.Drain(), strings.Join(rp.Blocking, "; ")))
	}
	msg := fmt.Sprintf("draining %s (%d of %d old nodes drained)", strings.Join(inflight, ", "), len(rp.Drained), len(old)+countGone(rp.Drained, old))
	if err != nil {
		msg += ": " + err.Error()
	}
	return true, s.record(ctx, rp, ReasonReplacing, msg)
}

// nextBatch returns the nodes being drained; when none is, it starts the
// next batch of old nodes not drained yet (none: all are).
func (s *poolScope) nextBatch(rp *kpool.Replacement, old []string, batch int) []string {
	var inflight []string
	for _, n := range slices.Sorted(maps.Keys(rp.Draining)) {
		if !slices.Contains(rp.Drained, n) {
			inflight = append(inflight, n)
		}
	}
	if len(inflight) > 0 {
		return inflight
	}
	now := s.c.cfg.Clock.Now().UTC()
	for _, n := range old {
		if len(inflight) == batch {
			break
		}
		if !slices.Contains(rp.Drained, n) {
			if rp.Draining == nil {
				rp.Draining = map[string]time.Time{}
			}
			rp.Draining[n] = now
			inflight = append(inflight, n)
		}
	}
	return inflight
}

// drainSome takes up to drainSteps steps of a drain while each evicts.
func (s *poolScope) drainSome(ctx context.Context, nodes []string, started time.Time, d drain.Drainer) (drain.Progress, error) {
	var prog drain.Progress
	var err error
	for range drainSteps {
		prog, err = d.Step(ctx, s.watch.cs, nodes, started, s.c.cfg.Clock.Now())
		if err != nil || prog.Done || prog.Stopped || len(prog.Evicted)+len(prog.Deleted) == 0 {
			break
		}
	}
	return prog, err
}

// noteDrained records the nodes a step emptied and what holds the rest.
func (s *poolScope) noteDrained(rp *kpool.Replacement, prog drain.Progress) {
	rp.Blocking = nil
	for _, n := range prog.Nodes {
		if len(n.Left) == 0 || n.Gone {
			rp.Drained = appendOnce(rp.Drained, n.Name)
			continue
		}
		for _, pod := range n.Left {
			switch pod.State {
			case drain.Blocked:
				rp.Blocking = append(rp.Blocking, fmt.Sprintf("pod %s/%s on %s: PodDisruptionBudget %s allows no disruption now", pod.Namespace, pod.Name, n.Name, orText(pod.PDB, "(unnamed)")))
			case drain.Stuck:
				rp.Blocking = append(rp.Blocking, fmt.Sprintf("pod %s/%s on %s will not be evicted: %s", pod.Namespace, pod.Name, n.Name, pod.Message))
			}
		}
	}
	sort.Strings(rp.Blocking)
}

// rollBack undoes a replacement: the old nodes are uncordoned, the
// successor's nodes drained (under the same budgets) and the successor
// deleted; then the old pool serves as before.
func (s *poolScope) rollBack(ctx context.Context, rp *kpool.Replacement) (bool, error) {
	if s.watch != nil && s.watch.cs != nil {
		for _, n := range s.nodes[rp.From] {
			if n.Spec.Unschedulable {
				if err := drain.Uncordon(ctx, s.watch.cs, n.Name); err != nil {
					return true, s.record(ctx, rp, ReasonRollingBack, fmt.Sprintf("uncordoning %s: %v", n.Name, err))
				}
			}
		}
	}
	rp.OldNodes, rp.NewNodes = s.readyNodes(rp.From), s.readyNodes(rp.To)
	succ := s.observed[rp.To]
	if succ == nil {
		now := s.c.cfg.Clock.Now().UTC()
		rp.Step, rp.FinishedAt, rp.Blocking, rp.Draining, rp.Drained = kpool.StepRolledBack, &now, nil, nil, nil
		s.logPool(ctx, slog.LevelInfo, "replacement rolled back: the successor is gone", "from", rp.From, "to", rp.To)
		return false, s.record(ctx, rp, ReasonRolledBack, fmt.Sprintf("the successor %s is removed; %s serves with its earlier configuration; change the spec to go on", rp.To, rp.From))
	}
	if unread(succ) || succ.State == provider.StateDeleting {
		return true, s.record(ctx, rp, ReasonRollingBack, "deleting the successor "+rp.To)
	}
	if nodes := s.nodeNames(rp.To); len(nodes) > 0 && s.watch != nil && s.watch.cs != nil {
		if rp.Draining == nil {
			rp.Draining = map[string]time.Time{}
			for _, n := range nodes {
				rp.Draining[n] = s.c.cfg.Clock.Now().UTC()
			}
		}
		if err := s.record(ctx, rp, ReasonRollingBack, "draining the successor "+rp.To); err != nil {
			return true, err
		}
		prog, _ := s.drainSome(ctx, nodes, earliest(rp.Draining, nodes), drainer(s.p.Spec.UpdateStrategy))
		s.noteDrained(rp, prog)
		if !prog.Done && !prog.Stopped {
			return true, s.record(ctx, rp, ReasonRollingBack, "draining the successor "+rp.To)
		}
	}
	if err := s.record(ctx, rp, ReasonRollingBack, "deleting the successor "+rp.To); err != nil {
		return true, err
	}
	start := s.c.cfg.Clock.Now()
	err := s.d.NodePoolDelete(ctx, s.cl, rp.To)
	s.called(ctx, "delete", "rollback: the successor", start, err)
	if err != nil && !provider.IsNotFound(err) {
		return s.retry(ctx, err)
	}
	return true, nil
}

// drainer is the drain a strategy asks for.
func drainer(u *kpool.UpdateStrategy) drain.Drainer {
	d := drain.Drainer{Skip: drain.SkipKubectl, Timeout: u.Drain(), MaxInFlight: drainInFlight, ForgetAfter: u.Drain()}
	switch u.Stuck() {
	case kpool.OnStuckForce:
		d.OnStuck = drain.Force
	case kpool.OnStuckWait:
		d.OnStuck = drain.Wait
	default:
		d.OnStuck = drain.Stop
	}
	return d
}

// nodeNames are a provider pool's nodes in Kubernetes, by name.
func (s *poolScope) nodeNames(providerName string) []string {
	var out []string
	for _, n := range s.nodes[providerName] {
		out = append(out, n.Name)
	}
	sort.Strings(out)
	return out
}

// earliest is when the first of nodes began to drain.
func earliest(started map[string]time.Time, nodes []string) time.Time {
	var t time.Time
	for _, n := range nodes {
		if at, ok := started[n]; ok && (t.IsZero() || at.Before(t)) {
			t = at
		}
	}
	return t
}

// countGone counts the drained nodes no longer among old.
func countGone(drained, old []string) int {
	n := 0
	for _, d := range drained {
		if !slices.Contains(old, d) {
			n++
		}
	}
	return n
}

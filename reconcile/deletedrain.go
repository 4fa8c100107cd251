package reconcile

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/drain"
)

// drainFirst drains a pool's nodes before its delete is sent, so that
// their pods move to other pools under their PodDisruptionBudgets rather
// than die with the nodes: it reports whether the delete is to wait. Once
// the strategy's drain timeout has passed, the delete goes ahead with
// what is left (the pool was asked to go), and the log says what. A pool
// whose nodes kpool does not see in Kubernetes is deleted at once.
func (s *poolScope) drainFirst(ctx context.Context) bool {
	nodes := s.nodeNames(s.p.ProviderName)
	if s.watch == nil || s.watch.cs == nil || !s.nodesKnown || len(nodes) == 0 {
		return false
	}
	now := s.c.cfg.Clock.Now().UTC()
	started := now
	if s.prev != nil {
		if at := s.last().DrainStartedAt; at != nil {
			started = *at
		}
	}
	s.rp.meta.DrainStartedAt = &started
	u := s.p.Spec.UpdateStrategy
	s.rp.set(kpool.ConditionDeleted, kpool.ConditionFalse, ReasonDeleting, fmt.Sprintf("draining %d nodes before the delete", len(nodes)))
	s.rp.set(kpool.ConditionProgressing, kpool.ConditionTrue, ReasonDeleting, "")
	claim := s.rp.clone()
	if err := s.post(ctx, &claim); err != nil {
		return true // the drain's start must be stored before it acts
	}
	d := drainer(u)
	prog, err := s.drainSome(ctx, nodes, started, d)
	if prog.Done {
		s.logPool(ctx, slog.LevelInfo, "nodes drained before the delete", "nodes", len(nodes))
		return false
	}
	if prog.Stopped || (err == nil && d.OnStuck == drain.Wait && now.Sub(started) > u.Drain()) {
		rp := &kpool.Replacement{}
		s.noteDrained(rp, prog)
		s.logPool(ctx, slog.LevelWarn, "drain timeout before the delete: deleting with pods left", "timeout", u.Drain().String(), "left", strings.Join(rp.Blocking, "; "))
		return false
	}
	rp := &kpool.Replacement{}
	s.noteDrained(rp, prog)
	msg := fmt.Sprintf("draining %d nodes before the delete", len(nodes))
	if len(rp.Blocking) > 0 {
		msg += ": " + strings.Join(rp.Blocking, "; ")
	}
	s.rp.set(kpool.ConditionDeleted, kpool.ConditionFalse, ReasonDeleting, msg)
	s.send(ctx)
	return true
}

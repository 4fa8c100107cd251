package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// ReasonInsufficientCapacity is Ready=False of a pool the cloud could not
// give all its nodes for want of capacity: asked again slowly (ResyncSlow),
// and a logical pool moves the missing nodes elsewhere meanwhile.
const ReasonInsufficientCapacity = "InsufficientCapacity"

// noteShortage records the cloud's shortage in the report, keeping when it
// was first seen and when the missing nodes were last asked for again.
func (s *poolScope) noteShortage() {
	obs := s.obs
	if obs == nil || obs.Shortage == nil {
		s.rp.meta.Shortage = nil
		return
	}
	now := s.c.cfg.Clock.Now()
	sh := &kpool.Shortage{Code: obs.Shortage.Code, Message: obs.Shortage.Message, Zones: obs.Shortage.Zones,
		Since: now, Nodes: s.rp.activeNodes(), Wanted: s.desired.Count}
	if last := s.last().Shortage; last != nil {
		sh.Since, sh.TriedAt = last.Since, last.TriedAt
	} else {
		sh.TriedAt = &now // the operation that fell short was the ask
	}
	s.rp.meta.Shortage = sh
}

// activeNodes is the report's count of ready nodes at the provider.
func (rp *report) activeNodes() int {
	if rp.meta.ActiveNodes == nil {
		return 0
	}
	return *rp.meta.ActiveNodes
}

// short handles a pool the cloud left short of capacity with nothing else
// to change: it says so, and asks the cloud again for the missing nodes
// (the repair of a failed pool) no more often than ResyncSlow.
func (s *poolScope) short(ctx context.Context, ch changes, failed bool) (bool, error) {
	sh := s.rp.meta.Shortage
	now := s.c.cfg.Clock.Now()
	msg := fmt.Sprintf("%d of %d nodes: the cloud has no capacity for the rest: %s", sh.Nodes, sh.Wanted, shortWords(sh))
	if s.last().Shortage == nil {
		s.logPool(ctx, slog.LevelWarn, "the cloud has no capacity for the pool's nodes", "code", sh.Code,
			"nodes", sh.Nodes, "wanted", sh.Wanted, "message", sh.Message)
	}
	if failed && (sh.TriedAt == nil || s.c.cfg.Clock.Since(*sh.TriedAt) >= s.c.cfg.ResyncSlow) {
		sh.TriedAt = &now
		_, err := s.apply(ctx, ch, failed)
		s.rp.meta.Shortage = sh
		s.rp.set(kpool.ConditionReady, kpool.ConditionFalse, ReasonInsufficientCapacity, msg+"; asked again")
		s.send(ctx)
		return true, s.slowly(err)
	}
	s.rp.gen = s.p.Generation
	s.rp.set(kpool.ConditionReady, kpool.ConditionFalse, ReasonInsufficientCapacity, msg)
	s.rp.set(kpool.ConditionProgressing, kpool.ConditionFalse, ReasonInsufficientCapacity, "")
	s.send(ctx)
	return true, s.slowly(nil)
}

// slowly is the error that has the pool looked at again in ResyncSlow (or
// what the provider asked, if longer), whatever the call's own error was.
func (s *poolScope) slowly(err error) error {
	e := &provider.Error{Kind: provider.KindCapacity, Provider: s.cl.Spec.Platform.Type, Reason: "waiting for capacity", Err: err}
	if after, ok := provider.RetryAfter(err); ok && after > s.c.cfg.ResyncSlow {
		e.RetryAfter = after
	} else {
		e.RetryAfter = s.c.cfg.ResyncSlow
	}
	return e
}

func shortWords(sh *kpool.Shortage) string {
	w := sh.Code
	if sh.Message != "" {
		w += ": " + sh.Message
	}
	return w
}

// refusedCapacity records a call the cloud refused at once for want of
// capacity as the pool's shortage.
func (s *poolScope) refusedCapacity(err error) {
	sh := &kpool.Shortage{Message: provider.FirstLine(err.Error()), Since: s.c.cfg.Clock.Now(),
		Nodes: s.rp.activeNodes(), Wanted: s.desired.Count}
	var e *provider.Error
	if errors.As(err, &e) {
		sh.Code = e.Code
	}
	if last := s.last().Shortage; last != nil {
		sh.Since = last.Since
	}
	s.rp.meta.Shortage = sh
}

package kpool

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Aggregate computes a pool's status from its controllers' reports. prev is
// the status stored before this write; it keeps condition transition times
// and the last ready generation. driven says whether a controller in this
// kpool acts on the pool's platform: a pool without one, that no external
// controller has reported on either, is Pending with reason NoController.
func Aggregate(p *NodePool, reports []ControllerStatus, prev NodePoolStatus, now time.Time, driven bool) NodePoolStatus {
	sorted := append([]ControllerStatus(nil), reports...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ControllerName < sorted[j].ControllerName })

	st := NodePoolStatus{LastReadyGeneration: prev.LastReadyGeneration, LastUpdateTime: now}
	for i, r := range sorted {
		if i == 0 || r.ObservedGeneration < st.ObservedGeneration {
			st.ObservedGeneration = r.ObservedGeneration
		}
	}
	t := tallyReports(sorted, p.Generation)
	reason := st.phase(p, sorted, t, driven)
	st.Health = HealthOf(st.Phase)
	st.PlacementLabels = prev.PlacementLabels
	for _, r := range sorted {
		if l := r.Meta().NodeLabels; l != nil {
			st.PlacementLabels = l
			break
		}
	}
	for _, r := range sorted {
		if n := r.Meta().KubeNodes; n != nil {
			st.Nodes = n
			break
		}
	}
	st.Replacement = replacementOf(sorted, prev.Replacement)
	for _, r := range sorted {
		if sh := r.Meta().Shortage; sh != nil {
			st.Shortage = sh
			break
		}
	}
	st.conditions(prev.Conditions, reason, t, sorted, driven, now)
	return st
}

// replacementOf is the replacement the reports show, with a rollback
// asked for (prev, set by the service) kept while it has not ended.
func replacementOf(sorted []ControllerStatus, prev *Replacement) *Replacement {
	for _, r := range sorted {
		if rp := r.Meta().Replacement; rp != nil {
			if prev != nil && prev.RollbackRequestedAt != nil && rp.RollbackRequestedAt == nil && rp.Active() && prev.Generation == rp.Generation {
				rp.RollbackRequestedAt = prev.RollbackRequestedAt
			}
			return rp
		}
	}
	return prev
}

// tally is what the reports say, sorted by what it means for the phase:
// each entry is a controller's name and its message.
type tally struct {
	// behind are the reports of an older generation than the pool's.
	behind []ControllerStatus
	// failed … stale are of the reports at the pool's generation.
	failed, degraded, notReady, drifted, unsupported, stale []string
	// waiting are the reports, of any generation, whose controller cannot
	// reach the pool's cluster (Ready Unknown, ReasonClusterUnreachable).
	waiting []string
	// nodesCurrent: a controller reports NodesCurrent.
	nodesCurrent bool
}

func tallyReports(sorted []ControllerStatus, generation int64) *tally {
	t := &tally{}
	for _, r := range sorted {
		if msg, ok := r.ClusterUnreachable(); ok {
			t.waiting = append(t.waiting, label(r.ControllerName, msg))
		}
		if r.ObservedGeneration < generation {
			t.behind = append(t.behind, r)
			continue
		}
		if c := r.Condition(ConditionNodesCurrent); c != "" {
			t.nodesCurrent = true
			if c == ConditionFalse {
				t.stale = append(t.stale, label(r.ControllerName, r.message(ConditionNodesCurrent)))
			}
		}
		if ok, msg := r.failed(); ok {
			t.failed = append(t.failed, label(r.ControllerName, msg))
		}
		if r.Condition(ConditionDegraded) == ConditionTrue {
			t.degraded = append(t.degraded, label(r.ControllerName, r.message(ConditionDegraded)))
		}
		if r.Condition(ConditionReady) != ConditionTrue {
			t.notReady = append(t.notReady, label(r.ControllerName, r.message(ConditionReady)))
		}
		if r.Condition(ConditionDrifted) == ConditionTrue {
			t.drifted = append(t.drifted, label(r.ControllerName, r.message(ConditionDrifted)))
		}
		if r.Condition(ConditionSupported) == ConditionFalse {
			t.unsupported = append(t.unsupported, label(r.ControllerName, r.message(ConditionSupported)))
		}
	}
	return t
}

// phase sets the status's phase and message from the tally, and returns
// the reason of its Ready condition. A pool whose cluster cannot be
// reached waits for it: Pending until it has been Ready once, Degraded
// after (kpool can no longer see or change it).
func (st *NodePoolStatus) phase(p *NodePool, sorted []ControllerStatus, t *tally, driven bool) string {
	switch {
	case p.Deleting():
		var waiting []string
		for _, r := range sorted {
			if r.Condition(ConditionDeleted) != ConditionTrue {
				waiting = append(waiting, label(r.ControllerName, r.message(ConditionDeleted)))
			}
		}
		st.Phase, st.Message = PhaseDeleting, "waiting for the pool to be deleted by "+strings.Join(waiting, "; ")
		return "DeletionRequested"
	case len(sorted) == 0 && !driven:
		st.Phase, st.Message = PhasePending, NoControllerMessage(p.Spec.Platform.Type)
		return ReasonNoController
	case len(sorted) == 0:
		st.Phase, st.Message = PhasePending, "no controller has reported on this pool yet"
		return "NoControllers"
	case len(t.waiting) > 0:
		st.Phase, st.Message = PhaseDegraded, strings.Join(t.waiting, "; ")
		if st.LastReadyGeneration == 0 {
			st.Phase = PhasePending
		}
		return ReasonClusterUnreachable
	case len(t.failed) > 0:
		st.Phase, st.Message = PhaseFailed, strings.Join(t.failed, "; ")
		return "ControllerFailed"
	case len(t.degraded) > 0:
		st.Phase, st.Message = PhaseDegraded, strings.Join(t.degraded, "; ")
		return "ControllerDegraded"
	case len(t.behind) == 0 && len(t.notReady) == 0:
		st.Phase = PhaseReady
		st.Message = fmt.Sprintf("%d of %d controllers ready at generation %d", len(sorted), len(sorted), p.Generation)
		st.LastReadyGeneration = p.Generation
		return "AllControllersReady"
	}
	reason := "Reconciling"
	st.Phase = PhaseUpdating
	if st.LastReadyGeneration == 0 {
		st.Phase, reason = PhaseProvisioning, "Provisioning"
	}
	var waiting []string
	for _, r := range t.behind {
		// What holds it back, when it says (a pool busy at the provider,
		// an error it retries).
		at := fmt.Sprintf("%s (at generation %d", r.ControllerName, r.ObservedGeneration)
		if msg := r.message(ConditionReady); msg != "" && r.Condition(ConditionReady) != ConditionTrue {
			at += ": " + msg
		}
		waiting = append(waiting, at+")")
	}
	waiting = append(waiting, t.notReady...)
	st.Message = fmt.Sprintf("waiting for generation %d: %s", p.Generation, strings.Join(waiting, "; "))
	return reason
}

// conditions sets the status's conditions, keeping prev's transition
// times where a status holds.
func (st *NodePoolStatus) conditions(prev []Condition, reason string, t *tally, sorted []ControllerStatus, driven bool, now time.Time) {
	set := func(typ string, on bool, why, msg string) {
		status := ConditionFalse
		if on {
			status = ConditionTrue
		}
		st.Conditions = append(st.Conditions, StampTransition(prev, Condition{Type: typ, Status: status, Reason: why, Message: msg}, now))
	}
	progressing := st.Phase == PhaseProvisioning || st.Phase == PhaseUpdating || st.Phase == PhaseDeleting
	set(ConditionReady, st.Phase == PhaseReady, reason, st.Message)
	set(ConditionProgressing, progressing, reason, "")
	set(ConditionDegraded, len(t.degraded) > 0 || st.Phase == PhaseFailed || (st.Phase == PhaseDegraded && len(t.waiting) > 0),
		reason, strings.Join(append(append(t.degraded, t.failed...), t.waiting...), "; "))
	set(ConditionDrifted, len(t.drifted) > 0, "", strings.Join(t.drifted, "; "))
	set(ConditionSupported, len(t.unsupported) == 0, "", strings.Join(t.unsupported, "; "))
	if t.nodesCurrent {
		why := "AllNodesCurrent"
		if len(t.stale) > 0 {
			why = "NewNodesOnly"
		}
		set(ConditionNodesCurrent, len(t.stale) == 0, why, strings.Join(t.stale, "; "))
	}
	ctl := Condition{Type: ConditionController, Status: ConditionTrue, Reason: "Reporting", Message: "reported on by " + names(sorted)}
	switch {
	case len(sorted) == 0 && !driven:
		ctl.Status, ctl.Reason, ctl.Message = ConditionFalse, ReasonNoController, st.Message
	case len(sorted) == 0:
		ctl.Status, ctl.Reason, ctl.Message = ConditionUnknown, "AwaitingReport", "this kpool's controller has not reported on the pool yet"
	}
	st.Conditions = append(st.Conditions, StampTransition(prev, ctl, now))
}

func names(reports []ControllerStatus) string {
	n := make([]string, len(reports))
	for i, r := range reports {
		n[i] = r.ControllerName
	}
	return strings.Join(n, ", ")
}

func label(controller, msg string) string {
	if msg == "" {
		return controller
	}
	return controller + ": " + msg
}

// StampTransition stamps c with now when its status differs from the same type in
// prev, and keeps prev's time otherwise.
func StampTransition(prev []Condition, c Condition, now time.Time) Condition {
	c.LastTransitionTime = now
	for _, p := range prev {
		if p.Type == c.Type && p.Status == c.Status && !p.LastTransitionTime.IsZero() {
			c.LastTransitionTime = p.LastTransitionTime
		}
	}
	return c
}

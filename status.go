package kpool

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Phase is the aggregated lifecycle phase of a node pool.
type Phase string

const (
	PhasePending      Phase = "Pending"
	PhaseProvisioning Phase = "Provisioning"
	PhaseReady        Phase = "Ready"
	PhaseUpdating     Phase = "Updating"
	PhaseDegraded     Phase = "Degraded"
	PhaseFailed       Phase = "Failed"
	PhaseDeleting     Phase = "Deleting"
)

// Phases lists every phase, in lifecycle order.
var Phases = []Phase{PhasePending, PhaseProvisioning, PhaseReady, PhaseUpdating, PhaseDegraded, PhaseFailed, PhaseDeleting}

// Health is the coarse health a list can be filtered by.
type Health string

const (
	HealthHealthy   Health = "healthy"
	HealthUnhealthy Health = "unhealthy"
	HealthUnknown   Health = "unknown"
)

// Healths lists every health value.
var Healths = []Health{HealthHealthy, HealthUnhealthy, HealthUnknown}

// HealthOf maps a phase to a health: Ready is healthy, Degraded and Failed
// are unhealthy, anything still in motion is unknown.
func HealthOf(p Phase) Health {
	switch p {
	case PhaseReady:
		return HealthHealthy
	case PhaseDegraded, PhaseFailed:
		return HealthUnhealthy
	}
	return HealthUnknown
}

// Condition statuses.
const (
	ConditionTrue    = "True"
	ConditionFalse   = "False"
	ConditionUnknown = "Unknown"
)

// Condition types that kpool gives meaning to. Controllers may report others.
const (
	ConditionReady       = "Ready"
	ConditionProgressing = "Progressing"
	ConditionDegraded    = "Degraded"
	ConditionDrifted     = "Drifted"
	ConditionSupported   = "Supported"
	// ConditionNodesCurrent=False says some nodes still run an earlier
	// configuration, on a provider that applies changes to new nodes only
	// (OKE); cycling the pool replaces them. Reported by such providers only.
	ConditionNodesCurrent = "NodesCurrent"
	// ConditionDeleted=True says the controller has removed the pool at its
	// provider; once every reporting controller says so the record goes.
	ConditionDeleted = "Deleted"
	// ConditionController says whether a controller acts on the pool: True
	// once one has reported, Unknown while this kpool's own controller has
	// not yet, False (ReasonNoController) when no controller in this kpool
	// acts on the pool's platform and none has reported, so that only an
	// external controller's report will move the pool out of Pending.
	ConditionController = "Controller"
)

// ReasonNoController is the reason of Controller=False and of the Ready
// condition of a pool that no controller in this kpool acts on.
const ReasonNoController = "NoController"

// NoControllerMessage says that no controller in this kpool acts on pools
// of platform t.
func NoControllerMessage(t PlatformType) string {
	return fmt.Sprintf("no controller in this kpool acts on %s pools; an external controller must report status", t)
}

// Condition is one observation, in the Kubernetes condition shape.
type Condition struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	LastTransitionTime time.Time `json:"lastTransitionTime"`
	Reason             string    `json:"reason,omitempty"`
	Message            string    `json:"message,omitempty"`
}

// NodePoolStatus is the pool's status aggregated from every controller's
// report. It is computed when a report or a spec change is written, so reads
// never write.
type NodePoolStatus struct {
	Phase  Phase  `json:"phase"`
	Health Health `json:"health"`
	// ObservedGeneration is the generation that every reporting controller
	// has reached (the lowest of their observed generations).
	ObservedGeneration int64 `json:"observedGeneration"`
	// LastReadyGeneration is the last generation at which the pool was Ready.
	LastReadyGeneration int64       `json:"lastReadyGeneration,omitempty"`
	Conditions          []Condition `json:"conditions"`
	Message             string      `json:"message,omitempty"`
	LastUpdateTime      time.Time   `json:"lastUpdateTime"`
	// PlacementLabels are the kompox.dev labels the pool's nodes carry, as
	// a controller last saw them at the provider (ReportMeta.NodeLabels); nil
	// until one has said. Placement selects a pool by what its nodes really
	// carry: labels never change after a pool is created.
	PlacementLabels *map[string]string `json:"placementLabels,omitempty"`
}

// ControllerStatus is one controller's latest report on one pool.
type ControllerStatus struct {
	ControllerName     string          `json:"controller_name"`
	ObservedGeneration int64           `json:"observed_generation"`
	Conditions         []Condition     `json:"conditions"`
	Metadata           json.RawMessage `json:"metadata"`
	UpdatedAt          time.Time       `json:"updated_at"`
}

// Condition returns the status of the condition of type t, or "" if absent.
func (cs *ControllerStatus) Condition(t string) string {
	for _, c := range cs.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

// Absent reports whether the controller says the pool does not exist at its
// provider (ReportMeta.Exists false). A report without the key says
// nothing about it: not absent.
func (cs *ControllerStatus) Absent() bool {
	e := cs.Meta().Exists
	return e != nil && !*e
}

// ClusterUnreachable returns why the controller cannot reach the pool's
// cluster, when its report says it waits for it (Ready Unknown with
// ReasonClusterUnreachable); ok is false otherwise.
func (cs *ControllerStatus) ClusterUnreachable() (msg string, ok bool) {
	if cs.Condition(ConditionReady) != ConditionUnknown || cs.reason(ConditionReady) != ReasonClusterUnreachable {
		return "", false
	}
	return cs.message(ConditionReady), true
}

// reason returns the reason of the condition of type t ("" if absent).
func (cs *ControllerStatus) reason(t string) string {
	for _, c := range cs.Conditions {
		if c.Type == t {
			return c.Reason
		}
	}
	return ""
}

func (cs *ControllerStatus) message(t string) string {
	for _, c := range cs.Conditions {
		if c.Type == t {
			if c.Message != "" {
				return c.Message
			}
			return c.Reason
		}
	}
	return ""
}

// failed reports whether a controller says it cannot make progress: the
// provider lacks the capability (Supported=False), or the pool is neither
// ready nor progressing nor merely degraded.
func (cs *ControllerStatus) failed() (bool, string) {
	if cs.Condition(ConditionSupported) == ConditionFalse {
		return true, cs.message(ConditionSupported)
	}
	if cs.Condition(ConditionReady) == ConditionFalse &&
		cs.Condition(ConditionProgressing) == ConditionFalse &&
		cs.Condition(ConditionDegraded) != ConditionTrue {
		return true, cs.message(ConditionReady)
	}
	return false, ""
}

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
	st.conditions(prev.Conditions, reason, t, sorted, driven, now)
	return st
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

// NoController reports whether a status says that no controller will act on
// the pool until an external one reports.
func (st *NodePoolStatus) NoController() bool {
	for _, c := range st.Conditions {
		if c.Type == ConditionController {
			return c.Status == ConditionFalse && c.Reason == ReasonNoController
		}
	}
	return false
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

package kpool

import (
	"encoding/json"
	"fmt"
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
	// ConditionNodeLabels says whether the pool's nodes carry the
	// placement labels in the cluster's Kubernetes API (True), and when the
	// controller put back ones a node had lost (reason LabelsRepaired).
	// Reported where kpool watches the cluster's nodes.
	ConditionNodeLabels = "NodeLabels"
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
	// Nodes is what the cluster's Kubernetes API says of the pool's nodes,
	// as kpool's controller last saw it (nil until it has); the cloud's
	// own count is its report's active_nodes.
	Nodes *NodeCounts `json:"nodes,omitempty"`
	// Replacement is the pool's replacement by a successor pool (spec
	// updateStrategy replacement: Surge) while it runs, and after it ends
	// until the next one: its step, old and new nodes, what blocks it.
	Replacement *Replacement `json:"replacement,omitempty"`
	// Shortage is set while the cloud says it lacks capacity for the
	// pool's nodes: what, since when, how many it has of how many.
	Shortage *Shortage `json:"shortage,omitempty"`
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
	if cs.Condition(ConditionReady) != ConditionUnknown || cs.Reason(ConditionReady) != ReasonClusterUnreachable {
		return "", false
	}
	return cs.message(ConditionReady), true
}

// Reason returns the reason of the condition of type t ("" if absent).
func (cs *ControllerStatus) Reason(t string) string {
	for _, c := range cs.Conditions {
		if c.Type == t {
			return c.Reason
		}
	}
	return ""
}

// Message returns the message of the condition of type t, as reported
// ("" if absent or empty).
func (cs *ControllerStatus) Message(t string) string {
	for _, c := range cs.Conditions {
		if c.Type == t {
			return c.Message
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

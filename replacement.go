package kpool

import "time"

// Replacement is a pool's move onto a successor pool at its provider, for
// a change the provider cannot make in place (spec.updateStrategy
// replacement: Surge): the successor is created under a new provider
// name in the same logical pool, its nodes come up Ready, the old nodes
// are cordoned and drained under the workloads' PodDisruptionBudgets, the
// new ones soak, and the old pool is deleted; the kpool pool keeps its id
// and name. Its controller reports it step by step (ReportMeta.Replacement)
// before each action, so that a restart resumes where it was and never
// creates a second successor; the pool's status shows it.
type Replacement struct {
	// Generation is the pool generation the replacement carries out.
	Generation int64           `json:"generation"`
	Step       ReplacementStep `json:"step"`
	// From is the provider name of the pool being replaced, To its
	// successor's.
	From      string    `json:"from"`
	To        string    `json:"to"`
	StartedAt time.Time `json:"startedAt"`
	// CreateSentAt is when the successor's create was sent (nil: not yet).
	CreateSentAt *time.Time `json:"createSentAt,omitempty"`
	// Draining holds when each node's drain began, by node name: what a
	// drain's timeout counts from, across restarts.
	Draining map[string]time.Time `json:"draining,omitempty"`
	// Drained are the nodes whose drain is over.
	Drained []string `json:"drained,omitempty"`
	// SoakUntil is when the successor's soak ends.
	SoakUntil *time.Time `json:"soakUntil,omitempty"`
	// OldNodes and NewNodes are the Ready nodes of the old pool and of the
	// successor, as the cluster's Kubernetes API says.
	OldNodes int `json:"oldNodes"`
	NewNodes int `json:"newNodes"`
	// Blocking says what holds the step up: a pod's disruption budget, a
	// node that will not drain, a successor that failed.
	Blocking []string `json:"blocking,omitempty"`
	Message  string   `json:"message,omitempty"`
	// RollbackRequestedAt is when someone asked for the replacement to be
	// undone (`kpool nodepool rollback`): the successor is drained and
	// removed and the old pool kept. Set by the service, not reported.
	RollbackRequestedAt *time.Time `json:"rollbackRequestedAt,omitempty"`
	// FinishedAt is when it ended (step Done or RolledBack).
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
}

// ReplacementStep is where a replacement is.
type ReplacementStep string

const (
	// StepSurging: the successor is being created; its nodes are awaited
	// Ready in Kubernetes.
	StepSurging ReplacementStep = "Surging"
	// StepDraining: the old nodes are cordoned and drained.
	StepDraining ReplacementStep = "Draining"
	// StepSoaking: the old nodes are empty; the successor runs alone for
	// the strategy's soak.
	StepSoaking ReplacementStep = "Soaking"
	// StepRetiring: the old pool is being deleted.
	StepRetiring ReplacementStep = "Retiring"
	// StepDone: the successor is the pool.
	StepDone ReplacementStep = "Done"
	// StepStopped: the replacement stopped (the successor failed, a node
	// would not drain): the old pool serves, and the pool says why.
	// Rollback removes the successor; a new spec starts over.
	StepStopped ReplacementStep = "Stopped"
	// StepRollingBack: the old nodes are uncordoned, the successor drained
	// and deleted.
	StepRollingBack ReplacementStep = "RollingBack"
	// StepRolledBack: the successor is gone; the old pool serves. The
	// generation is not tried again until the spec changes.
	StepRolledBack ReplacementStep = "RolledBack"
)

// Active reports whether the replacement still has work to do: two pools
// may exist at the provider.
func (r *Replacement) Active() bool {
	return r != nil && r.Step != StepDone && r.Step != StepRolledBack
}

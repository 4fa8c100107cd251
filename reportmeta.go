package kpool

import (
	"encoding/json"
	"time"
)

// ReportMeta is the metadata of a controller report as kpool's own
// controllers write it and as kpool's readers (status, wait, dashboard,
// audit) read it. The wire stays free-form for external controllers: keys
// they do not send are absent here, keys this type does not know are kept
// as sent in ControllerStatus.Metadata.
type ReportMeta struct {
	Platform     string `json:"platform,omitempty"`
	ProviderName string `json:"provider_name,omitempty"`
	// ProvisioningState is the provider's own word for the pool's state
	// ("NotFound" while the provider lists none).
	ProvisioningState string `json:"provisioning_state,omitempty"`
	// Exists says whether the pool exists at its provider: true once the
	// provider lists it, false while it does not (not created yet, or its
	// create failed), absent while that is not known. A pool that every
	// reporting controller says does not exist (or that none has reported
	// on) has no in-place limits: any change is checked as a create is.
	Exists *bool `json:"exists,omitempty"`
	// ActiveNodes and DesiredNodes are the ready nodes and the target the
	// controller saw (the autoscaler's when autoscaling is on).
	ActiveNodes  *int           `json:"active_nodes,omitempty"`
	DesiredNodes *int           `json:"desired_nodes,omitempty"`
	NodesByZone  map[string]int `json:"nodes_by_zone,omitempty"`
	// StaleNodes counts nodes that still run an earlier configuration, on
	// a provider that changes new nodes only.
	StaleNodes int `json:"stale_nodes,omitempty"`
	// NodeLabels are the kompox.dev labels the provider reports on the
	// pool's nodes: nil when not read, empty when they carry none. They
	// become the pool's status.placementLabels.
	NodeLabels *map[string]string `json:"node_labels,omitempty"`
	// KubeNodes is what the cluster's Kubernetes API says of the pool's
	// nodes (nil: not watched, or not reached).
	KubeNodes *NodeCounts `json:"kube_nodes,omitempty"`
	// LabelProblems lists breaches of the placement label contract.
	LabelProblems   []string `json:"label_problems,omitempty"`
	ProviderMessage string   `json:"provider_message,omitempty"`
	LastError       string   `json:"last_error,omitempty"`
	// FailedGeneration is the generation the provider refused for good: it
	// is not sent again until the spec changes.
	FailedGeneration int64 `json:"failed_generation,omitempty"`
	// CreateSentAt is when a create was last sent, so that a pool deleted
	// meanwhile waits for it to settle before it is known gone.
	CreateSentAt *time.Time `json:"create_sent_at,omitempty"`
	// Owner is the owner's mark found on a foreign pool at the provider.
	Owner *ReportOwner `json:"owner,omitempty"`
	// DriftFields, DriftCorrections and DriftCorrectedAt count the
	// corrections sent in a row, at this generation, for drift in the same
	// fields, each soon after the last: past a few the provider is taken to
	// keep changing them, and no more are sent.
	DriftFields      string     `json:"drift_fields,omitempty"`
	DriftCorrections int        `json:"drift_corrections,omitempty"`
	DriftCorrectedAt *time.Time `json:"drift_corrected_at,omitempty"`
	// Replacement is the pool's replacement by a successor pool, when one
	// runs or last ran: written before each of its steps acts.
	Replacement *Replacement `json:"replacement,omitempty"`
	// CycledGeneration is the generation whose nodes the provider was last
	// asked to cycle (replace those that run an earlier configuration):
	// asked once a generation.
	CycledGeneration int64 `json:"cycled_generation,omitempty"`
	// DrainStartedAt is when the nodes of a pool being deleted began to be
	// drained before the delete: its timeout counts from then.
	DrainStartedAt *time.Time `json:"drain_started_at,omitempty"`
	// ScaleDown is a scale-down that drains the nodes it removes, on a
	// provider that removes chosen nodes (provider.NodeRemover).
	ScaleDown *ScaleDown `json:"scale_down,omitempty"`
	// Shortage is the cloud's word that it lacks capacity for the pool's
	// nodes, while it says so.
	Shortage *Shortage `json:"shortage,omitempty"`
}

// ScaleDown is the nodes a scale-down removes, chosen and stored before
// they are cordoned: a restart drains and removes the same ones.
type ScaleDown struct {
	Generation int64     `json:"generation"`
	From       int       `json:"from"` // the provider's count when it began
	To         int       `json:"to"`
	Nodes      []string  `json:"nodes"`
	StartedAt  time.Time `json:"startedAt"`
	// RemoveSentAt is when the removal was sent (nil: not yet).
	RemoveSentAt *time.Time `json:"removeSentAt,omitempty"`
	Blocking     []string   `json:"blocking,omitempty"`
}

// ReportOwner is an owner's mark as a report shows it.
type ReportOwner struct {
	Installation string `json:"installation"`
	Pool         string `json:"pool"`
}

// Meta decodes the report's metadata. It never fails: a key of another
// type than kpool writes (an external controller's) is skipped and the
// others read; metadata that is not an object reads as none.
func (cs *ControllerStatus) Meta() ReportMeta {
	var m ReportMeta
	if len(cs.Metadata) == 0 || json.Unmarshal(cs.Metadata, &m) == nil {
		return m
	}
	// A key of the wrong type may leave a value behind (a *bool set by a
	// "false" string): read each key alone, and keep those that decode.
	var raw map[string]json.RawMessage
	m = ReportMeta{}
	if json.Unmarshal(cs.Metadata, &raw) != nil {
		return m
	}
	for k, v := range raw {
		one, _ := json.Marshal(map[string]json.RawMessage{k: v})
		if json.Unmarshal(one, new(ReportMeta)) == nil {
			_ = json.Unmarshal(one, &m)
		}
	}
	return m
}

// Encode returns the metadata as a report carries it.
func (m ReportMeta) Encode() json.RawMessage {
	b, _ := json.Marshal(m)
	return b
}

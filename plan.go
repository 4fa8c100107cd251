package kpool

import "strings"

// UpdateClass says what changing a field does at a provider.
type UpdateClass string

const (
	// InPlace changes the pool without touching its nodes.
	InPlace UpdateClass = "in_place"
	// RollsNodes is accepted in place, and the provider replaces the nodes.
	RollsNodes UpdateClass = "rolls_nodes"
	// NewNodesOnly applies to nodes created afterwards; existing nodes keep
	// the old setting until they are cycled.
	NewNodesOnly UpdateClass = "new_nodes_only"
	// Replace needs a new pool: the provider refuses the change in place.
	Replace UpdateClass = "replace"
	// NotImplemented: the provider cannot do this at all.
	NotImplemented UpdateClass = "not_implemented"
)

// Change is one field of an update and its class at the provider.
type Change struct {
	Field  string      `json:"field"`
	Class  UpdateClass `json:"class"`
	From   any         `json:"from,omitempty"`
	To     any         `json:"to,omitempty"`
	Reason string      `json:"reason,omitempty"`
}

// Plan is what a write would do at the pool's provider.
type Plan struct {
	Provider string `json:"provider"`
	// ProviderName is the pool's name at the provider.
	ProviderName string   `json:"provider_name,omitempty"`
	Changes      []Change `json:"changes"`
}

// Planner knows what each provider can do with a pool spec. The service asks
// it before any pool write, so that a change the provider would refuse is
// refused by the API, not discovered by a controller later.
type Planner interface {
	// CheckCreate refuses a spec asking for what the provider lacks
	// (NOT_IMPLEMENTED) or cannot map (VALIDATION_ERROR).
	CheckCreate(c *Cluster, s *NodePoolSpec) error
	// Plan classifies every field that differs between old and next.
	Plan(c *Cluster, old, next *NodePoolSpec) (Plan, error)
	// ProviderNames returns the names the pool may have at the provider,
	// derived from its kpool name, the preferred first (n > 0: the first n
	// only). The service takes the first that no other pool of the cluster
	// has.
	ProviderNames(c *Cluster, pool string, n int) ([]string, error)
}

// Refusal turns a plan's replace and not-implemented changes into the
// error the API answers with: NOT_IMPLEMENTED when the provider cannot do a
// field at all, otherwise VALIDATION_ERROR naming each field and why.
func (p Plan) Refusal() error {
	var fe FieldErrors
	var ni []string
	for _, c := range p.Changes {
		switch c.Class {
		case NotImplemented:
			ni = append(ni, c.Field+": "+c.Reason)
		case Replace:
			fe.Add(c.Field, "cannot be changed in place on %s: %s; create a new pool with the new value and delete this one", p.Provider, c.Reason)
		}
	}
	if len(ni) > 0 {
		details := strings.Join(ni, "; ")
		for _, f := range fe {
			details += "; " + f.Field + ": " + f.Reason
		}
		return &Error{Code: CodeNotImplemented, Message: "Not implemented by " + p.Provider, Details: details}
	}
	return fe.Err()
}

package kpool

import "strings"

// UpdateClass says what changing a field does at a provider.
type UpdateClass string

const (
	// UpdateInPlace changes the pool without touching its nodes.
	UpdateInPlace UpdateClass = "in_place"
	// UpdateRollsNodes is accepted in place, and the provider replaces the nodes.
	UpdateRollsNodes UpdateClass = "rolls_nodes"
	// UpdateNewNodesOnly applies to nodes created afterwards; existing nodes keep
	// the old setting until they are cycled.
	UpdateNewNodesOnly UpdateClass = "new_nodes_only"
	// UpdateReplace needs a new pool: the provider refuses the change in place.
	UpdateReplace UpdateClass = "replace"
	// UpdateNotImplemented: the provider cannot do this at all.
	UpdateNotImplemented UpdateClass = "not_implemented"
	// UpdateAdvisory is stored and shown but applied by no provider to the
	// pool (such as autoscaler targets, which clouds take cluster-wide if
	// at all); the write is answered with a Warning naming the field.
	UpdateAdvisory UpdateClass = "advisory"
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
	// Warnings name each field the write sets that the provider does not
	// apply (class advisory), and why; the API sends each as a Warning
	// header.
	Warnings []string `json:"warnings,omitempty"`
	// Replacement, when the plan has replace changes and the pool's
	// updateStrategy carries them out (replacement: Surge), says how:
	// "surge 1, drain 30m0s". Such a plan is not refused.
	Replacement string `json:"replacement,omitempty"`
}

// Replaces reports whether the plan has a change that needs a new pool.
func (p Plan) Replaces() bool {
	for _, c := range p.Changes {
		if c.Class == UpdateReplace {
			return true
		}
	}
	return false
}

// Refusal turns a plan's replace and not-implemented changes into the
// error the API answers with: NOT_IMPLEMENTED when the provider cannot do a
// field at all, otherwise VALIDATION_ERROR naming each field and why.
func (p Plan) Refusal() error {
	var fe FieldErrors
	var ni []string
	for _, c := range p.Changes {
		switch c.Class {
		case UpdateNotImplemented:
			ni = append(ni, c.Field+": "+c.Reason)
		case UpdateReplace:
			if p.Replacement == "" {
				fe.Add(c.Field, "cannot be changed in place on %s: %s; set spec.updateStrategy.replacement to Surge (kpool --replacement Surge) to have kpool replace the pool without downtime, or create a new pool with the new value and delete this one", p.Provider, c.Reason)
			}
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

// Warning is the warning of a field stored but not applied.
func (c Change) Warning() string {
	return c.Field + " is stored but not applied to the pool: " + c.Reason
}

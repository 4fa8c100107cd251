package kpool

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// Selector picks pools by their spec.labels, as kubectl's -l picks objects:
// every requirement must hold. The empty selector picks every pool.
type Selector []Requirement

// Requirement is one term of a selector: "team=web", "tier in (a,b)", "!gpu".
type Requirement struct {
	Key string     `json:"key"`
	Op  SelectorOp `json:"op"`
	// Values holds the value of Equals and NotEquals, the set of In and
	// NotIn, nothing for Exists and DoesNotExist.
	Values []string `json:"values,omitempty"`
}

// SelectorOp is how a requirement tests its key.
type SelectorOp string

// The selector operators: kubectl's, without the Gt and Lt of node
// selectors.
const (
	OpEquals       SelectorOp = "="
	OpNotEquals    SelectorOp = "!="
	OpIn           SelectorOp = "in"
	OpNotIn        SelectorOp = "notin"
	OpExists       SelectorOp = "exists"
	OpDoesNotExist SelectorOp = "!"
)

// ParseSelector reads a selector in kubectl's syntax ("team=web,tier!=db",
// "env in (prod,staging)", "gpu", "!spot"), the grammar and key and value
// rules of Kubernetes' own parser. field names the input in an error.
func ParseSelector(field, s string) (Selector, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	parsed, err := labels.Parse(s)
	if err != nil {
		// The parser also offers node selectors' gt and lt, which pool
		// labels do not take.
		why := strings.ReplaceAll(err.Error(), ", gt, lt", "")
		return nil, Invalid(field, "%q is not a label selector: %s (kubectl's syntax: team=web,tier!=db or env in (prod,staging) or gpu or !spot)", s, why)
	}
	reqs, _ := parsed.Requirements()
	out := make(Selector, 0, len(reqs))
	for _, r := range reqs {
		q := Requirement{Key: r.Key(), Values: r.ValuesUnsorted()}
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals:
			q.Op = OpEquals
		case selection.NotEquals:
			q.Op = OpNotEquals
		case selection.In:
			q.Op = OpIn
		case selection.NotIn:
			q.Op = OpNotIn
		case selection.Exists:
			q.Op, q.Values = OpExists, nil
		case selection.DoesNotExist:
			q.Op, q.Values = OpDoesNotExist, nil
		default:
			return nil, Invalid(field, "%q: operator %s is not supported on pool labels (use =, !=, in, notin, KEY or !KEY)", s, r.Operator())
		}
		slices.Sort(q.Values)
		out = append(out, q)
	}
	return out, nil
}

// Matches reports whether labels meet every requirement. As in Kubernetes,
// != and notin hold for a label that is absent.
func (s Selector) Matches(labels map[string]string) bool {
	for _, r := range s {
		v, ok := labels[r.Key]
		var hold bool
		switch r.Op {
		case OpEquals, OpIn:
			hold = ok && slices.Contains(r.Values, v)
		case OpNotEquals, OpNotIn:
			hold = !ok || !slices.Contains(r.Values, v)
		case OpExists:
			hold = ok
		case OpDoesNotExist:
			hold = !ok
		}
		if !hold {
			return false
		}
	}
	return true
}

// String is the selector in kubectl's syntax, terms sorted by key (as
// Kubernetes' parser sorts them);
// ParseSelector reads it back to the same selector.
func (s Selector) String() string {
	terms := make([]string, len(s))
	for i, r := range s {
		switch r.Op {
		case OpEquals, OpNotEquals:
			terms[i] = r.Key + string(r.Op) + strings.Join(r.Values, "")
		case OpIn, OpNotIn:
			terms[i] = r.Key + " " + string(r.Op) + " (" + strings.Join(r.Values, ",") + ")"
		case OpExists:
			terms[i] = r.Key
		case OpDoesNotExist:
			terms[i] = "!" + r.Key
		}
	}
	return strings.Join(terms, ",")
}

package placement

import (
	"fmt"

	"github.com/kpool/kpool"
)

// podSpec is a pod spec being placed, with its field path for messages.
type podSpec struct {
	spec map[string]any
	at   string // "document 1, Deployment web: spec.template.spec."
}

// Paths in a pod spec.
var (
	requiredPath = []string{"affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"}
	requiredAt   = "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
)

// valid records the scheduling fields that are not of their Kubernetes
// types: nothing can be merged into them.
func (p *podSpec) valid(fe *kpool.FieldErrors) bool {
	n := len(*fe)
	if v, ok := p.spec["nodeSelector"]; ok && v != nil {
		if m, isMap := v.(map[string]any); !isMap {
			fe.Add(p.at+"nodeSelector", "is not an object")
		} else {
			for k, x := range m {
				if _, isString := x.(string); !isString {
					fe.Add(p.at+"nodeSelector["+k+"]", "is not a string")
				}
			}
		}
	}
	if _, ok := path(p.spec, requiredPath, false); !ok {
		fe.Add(p.at+"affinity.nodeAffinity", "is not an object")
	} else if terms, ok := p.terms(); !ok {
		fe.Add(p.at+requiredAt, "is not a list of node selector terms")
	} else {
		for i, t := range terms {
			for j, e := range expressions(t) {
				if e == nil {
					fe.Add(fmt.Sprintf("%s%s[%d].matchExpressions[%d]", p.at, requiredAt, i, j), "is not a node selector requirement")
				}
			}
		}
	}
	if v, ok := p.spec["tolerations"]; ok && v != nil {
		if _, isList := v.([]any); !isList {
			fe.Add(p.at+"tolerations", "is not a list")
		}
	}
	return len(*fe) == n
}

// nodeSelector returns the pod's nodeSelector, made when create is set.
func (p *podSpec) nodeSelector(create bool) map[string]any {
	m, _ := p.spec["nodeSelector"].(map[string]any)
	if m == nil && create {
		m = map[string]any{}
		p.spec["nodeSelector"] = m
	}
	return m
}

// terms returns the required node affinity's terms; ok is false when they
// are not a list of objects.
func (p *podSpec) terms() ([]map[string]any, bool) {
	req, _ := path(p.spec, requiredPath, false)
	if req == nil || req["nodeSelectorTerms"] == nil {
		return nil, true
	}
	list, ok := req["nodeSelectorTerms"].([]any)
	if !ok {
		return nil, false
	}
	var out []map[string]any
	for _, t := range list {
		m, ok := t.(map[string]any)
		if !ok {
			return nil, false
		}
		out = append(out, m)
	}
	return out, true
}

// expr is a node selector requirement of a term.
type expr struct {
	key, operator string
	values        []string
}

// expressions returns a term's matchExpressions; an entry that is not a
// requirement is nil.
func expressions(term map[string]any) []*expr {
	list, _ := term["matchExpressions"].([]any)
	out := make([]*expr, len(list))
	for i, x := range list {
		m, ok := x.(map[string]any)
		if !ok {
			continue
		}
		e := &expr{}
		e.key, _ = m["key"].(string)
		e.operator, _ = m["operator"].(string)
		vs, _ := m["values"].([]any)
		for _, v := range vs {
			s, _ := v.(string)
			e.values = append(e.values, s)
		}
		out[i] = e
	}
	return out
}

// selects reports whether the pod already constrains label key.
func (p *podSpec) selects(key string) bool {
	if _, ok := p.nodeSelector(false)[key]; ok {
		return true
	}
	terms, _ := p.terms()
	for _, t := range terms {
		for _, e := range expressions(t) {
			if e != nil && e.key == key {
				return true
			}
		}
	}
	return false
}

// setTerms replaces the required node-affinity terms.
func (p *podSpec) setTerms(terms []any) {
	req, _ := path(p.spec, requiredPath, true)
	req["nodeSelectorTerms"] = terms
}

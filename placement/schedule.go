package placement

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kpool/kpool"
)

// requirement is one node label a workload's pods must have: one of values
// for key. what names the source that asked for it, noun what it is.
type requirement struct {
	key    string
	values []string
	what   string
	noun   string // "pool" or "zone"
}

func (r requirement) wants() string {
	return fmt.Sprintf("the %s wanted (%s) is %s", r.noun, r.what, quoted(r.values))
}

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

// require merges the requirements into the pod's scheduling: a single
// value goes into nodeSelector, several into one required node-affinity
// term (ANDed into every term the pod already has). A requirement the
// pod's own nodeSelector or affinity contradicts is an error naming both.
func (p *podSpec) require(fe *kpool.FieldErrors, reqs []requirement) bool {
	changed := false
	var multi []requirement
	for _, r := range reqs {
		sel := p.nodeSelector(false)
		if v, ok := sel[r.key].(string); ok {
			if !slices.Contains(r.values, v) {
				fe.Add(p.at+"nodeSelector["+r.key+"]", "is %q, but %s", v, r.wants())
			}
			continue // the nodeSelector is as narrow or narrower
		}
		if !p.compatible(fe, r) {
			continue
		}
		if len(r.values) == 1 {
			p.nodeSelector(true)[r.key] = r.values[0]
			changed = true
			continue
		}
		multi = append(multi, r)
	}
	if len(multi) == 0 {
		return changed
	}
	terms, _ := p.terms()
	if len(terms) == 0 {
		req, _ := path(p.spec, requiredPath, true)
		req["nodeSelectorTerms"] = []any{map[string]any{}}
		terms, _ = p.terms()
	}
	for _, t := range terms {
		for _, r := range multi {
			if implied(t, r) {
				continue
			}
			list, _ := t["matchExpressions"].([]any)
			values := make([]any, len(r.values))
			for i, v := range r.values {
				values[i] = v
			}
			t["matchExpressions"] = append(list, map[string]any{"key": r.key, "operator": "In", "values": values})
			changed = true
		}
	}
	return changed
}

// compatible records each required node-affinity term that no node could
// satisfy together with r.
func (p *podSpec) compatible(fe *kpool.FieldErrors, r requirement) bool {
	terms, _ := p.terms()
	ok := true
	for i, t := range terms {
		for j, e := range expressions(t) {
			if e == nil || e.key != r.key {
				continue
			}
			field := fmt.Sprintf("%s%s[%d].matchExpressions[%d]", p.at, requiredAt, i, j)
			switch e.operator {
			case "In":
				if !overlaps(e.values, r.values) {
					fe.Add(field, "requires %s In %s, but %s", r.key, strings.Join(e.values, ","), r.wants())
					ok = false
				}
			case "NotIn":
				if subset(r.values, e.values) {
					fe.Add(field, "requires %s NotIn %s, but %s", r.key, strings.Join(e.values, ","), r.wants())
					ok = false
				}
			case "DoesNotExist":
				fe.Add(field, "requires nodes without %s, but %s", r.key, r.wants())
				ok = false
			}
		}
	}
	return ok
}

// implied reports whether term already asks for r or something narrower.
func implied(term map[string]any, r requirement) bool {
	for _, e := range expressions(term) {
		if e != nil && e.key == r.key && e.operator == "In" && subset(e.values, r.values) {
			return true
		}
	}
	return false
}

func overlaps(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// subset reports whether every one of a is in b.
func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return len(a) > 0
}

// tolerate adds a toleration for each taint that none of the pod's
// tolerations tolerates yet.
func (p *podSpec) tolerate(taints []kpool.Taint) bool {
	list, _ := p.spec["tolerations"].([]any)
	changed := false
	for _, t := range taints {
		if tolerated(list, t) {
			continue
		}
		tol := map[string]any{"key": t.Key, "operator": "Equal", "value": t.Value, "effect": t.Effect}
		if t.Value == "" {
			tol = map[string]any{"key": t.Key, "operator": "Exists", "effect": t.Effect}
		}
		list = append(list, tol)
		changed = true
	}
	if changed {
		p.spec["tolerations"] = list
	}
	return changed
}

// tolerated applies Kubernetes' rule: a toleration matches a taint when the
// effects match (or the toleration names none) and either it has no key
// and operator Exists, or the keys match and it is Exists or the values
// are Equal.
func tolerated(list []any, t kpool.Taint) bool {
	for _, x := range list {
		m, ok := x.(map[string]any)
		if !ok {
			continue
		}
		key, _ := m["key"].(string)
		op, _ := m["operator"].(string)
		value, _ := m["value"].(string)
		effect, _ := m["effect"].(string)
		if op == "" {
			op = "Equal"
		}
		if effect != "" && effect != t.Effect {
			continue
		}
		switch {
		case key == "" && op == "Exists":
			return true
		case key != t.Key:
		case op == "Exists":
			return true
		case op == "Equal" && value == t.Value:
			return true
		}
	}
	return false
}

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
	// logical are a zone requirement's logical zones, whatever its key:
	// what a zone pinned under another key is compared with.
	logical []string
	what    string
	noun    string // "pool" or "zone"
}

// zoneKeys are the node labels that mean a zone.
var zoneKeys = []string{"kompox.dev/node-zone", "topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"}

// zoneReader maps a zone label's value to its logical zone; nil when
// placing without a cluster (only the same key compares then).
type zoneReader func(key, value string) (string, bool)

// conflict is one field of the pod that rules a term out, and why.
type conflict struct{ field, reason string }

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

// require merges terms (ORed, each ANDing its requirements) into the
// pod's scheduling. The pod's own nodeSelector and required node-affinity
// terms stay: a term of ours that its nodeSelector contradicts is dropped,
// and so is an existing affinity term that cannot hold with any of ours
// (the pod could never use it); when nothing is left, that is an error
// naming the pod's fields at fault. One term of ours puts its single values
// in nodeSelector and ANDs the rest into every affinity term; several become
// affinity terms, each existing term crossed with each of ours. It returns
// whether the pod changed and the existing terms dropped.
func (p *podSpec) require(fe *kpool.FieldErrors, terms [][]requirement, zones zoneReader) (bool, []int) {
	if len(terms) == 0 {
		return false, nil
	}
	// The nodeSelector first: it ANDs with everything.
	var live [][]requirement
	var ruled []conflict
	for _, t := range terms {
		rest, why := p.bySelector(t, zones)
		if len(why) > 0 {
			if ruled == nil {
				ruled = why
			}
			continue
		}
		live = append(live, rest)
	}
	if len(live) == 0 {
		for _, c := range ruled {
			fe.Add(c.field, "%s", c.reason)
		}
		return false, nil
	}

	// Then the affinity terms: each pair of an existing term and one of
	// ours that can hold together.
	existing, _ := p.terms()
	type pair struct{ e, t int }
	var pairs []pair
	var firstWhy []conflict
	usedE := map[int]bool{}
	for j, t := range live {
		if len(existing) == 0 {
			pairs = append(pairs, pair{-1, j})
			continue
		}
		for i, e := range existing {
			why := p.against(i, e, t, zones)
			if len(why) > 0 {
				if j == 0 {
					firstWhy = append(firstWhy, why...)
				}
				continue
			}
			pairs = append(pairs, pair{i, j})
			usedE[i] = true
		}
	}
	if len(pairs) == 0 {
		for _, c := range firstWhy {
			fe.Add(c.field, "%s", c.reason)
		}
		return false, nil
	}
	var dropped []int
	for i := range existing {
		if !usedE[i] {
			dropped = append(dropped, i)
		}
	}

	changed := len(dropped) > 0
	if len(live) == 1 {
		// Single values go to nodeSelector; several, into each term kept.
		var multi []requirement
		for _, r := range live[0] {
			if len(r.values) == 1 {
				p.nodeSelector(true)[r.key] = r.values[0]
				changed = true
				continue
			}
			multi = append(multi, r)
		}
		var kept []any
		for _, pr := range pairs {
			if pr.e >= 0 {
				kept = append(kept, existing[pr.e])
			}
		}
		if len(multi) == 0 {
			if changed && len(existing) > 0 {
				p.setTerms(kept)
			}
			return changed, dropped
		}
		if len(kept) == 0 {
			kept = []any{map[string]any{}}
		}
		for _, t := range kept {
			if addExpressions(t.(map[string]any), multi) {
				changed = true
			}
		}
		p.setTerms(kept)
		return changed, dropped
	}
	// Several terms of ours: every value goes into affinity terms.
	var out []any
	for _, pr := range pairs {
		t := map[string]any{}
		if pr.e >= 0 {
			t = copyTerm(existing[pr.e])
		}
		addExpressions(t, live[pr.t])
		out = append(out, t)
	}
	p.setTerms(out)
	return true, dropped
}

// bySelector checks a term against the pod's nodeSelector: the
// requirements it does not already settle, or what rules the term out.
func (p *podSpec) bySelector(t []requirement, zones zoneReader) ([]requirement, []conflict) {
	sel := p.nodeSelector(false)
	var rest []requirement
	var why []conflict
	for _, r := range t {
		if v, ok := sel[r.key].(string); ok {
			if !slices.Contains(r.values, v) {
				why = append(why, conflict{p.at + "nodeSelector[" + r.key + "]", fmt.Sprintf("is %q, but %s", v, r.wants())})
			}
			continue // the nodeSelector is as narrow or narrower
		}
		if r.noun == "zone" && zones != nil {
			for _, k := range zoneKeys {
				v, ok := sel[k].(string)
				if !ok || k == r.key {
					continue
				}
				if l, ok := zones(k, v); ok && !slices.Contains(r.logical, l) {
					why = append(why, conflict{p.at + "nodeSelector[" + k + "]", fmt.Sprintf("is %q (zone %s), but %s", v, l, r.wants())})
				}
			}
		}
		rest = append(rest, r)
	}
	return rest, why
}

// against reports what in the pod's i-th affinity term rules out our term
// t: no node could satisfy both.
func (p *podSpec) against(i int, term map[string]any, t []requirement, zones zoneReader) []conflict {
	var why []conflict
	for j, e := range expressions(term) {
		if e == nil {
			continue
		}
		field := fmt.Sprintf("%s%s[%d].matchExpressions[%d]", p.at, requiredAt, i, j)
		for _, r := range t {
			switch {
			case e.key == r.key:
				switch e.operator {
				case "In":
					if !overlaps(e.values, r.values) {
						why = append(why, conflict{field, fmt.Sprintf("requires %s In %s, but %s", r.key, strings.Join(e.values, ","), r.wants())})
					}
				case "NotIn":
					if subset(r.values, e.values) {
						why = append(why, conflict{field, fmt.Sprintf("requires %s NotIn %s, but %s", r.key, strings.Join(e.values, ","), r.wants())})
					}
				case "DoesNotExist":
					why = append(why, conflict{field, fmt.Sprintf("requires nodes without %s, but %s", r.key, r.wants())})
				}
			case r.noun == "zone" && zones != nil && slices.Contains(zoneKeys, e.key) && e.operator == "In":
				var ls []string
				for _, v := range e.values {
					if l, ok := zones(e.key, v); ok {
						ls = append(ls, l)
					}
				}
				if len(ls) == len(e.values) && !overlaps(ls, r.logical) {
					why = append(why, conflict{field, fmt.Sprintf("requires %s In %s (zones %s), but %s", e.key, strings.Join(e.values, ","), strings.Join(ls, ","), r.wants())})
				}
			}
		}
	}
	return why
}

// addExpressions ANDs reqs into a term, skipping those it already implies.
func addExpressions(t map[string]any, reqs []requirement) bool {
	changed := false
	for _, r := range reqs {
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
	return changed
}

// setTerms replaces the required node-affinity terms.
func (p *podSpec) setTerms(terms []any) {
	req, _ := path(p.spec, requiredPath, true)
	req["nodeSelectorTerms"] = terms
}

// copyTerm copies a term deeply enough to change its expressions.
func copyTerm(t map[string]any) map[string]any {
	out := make(map[string]any, len(t))
	for k, v := range t {
		out[k] = v
	}
	if list, ok := t["matchExpressions"].([]any); ok {
		out["matchExpressions"] = slices.Clone(list)
	}
	return out
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

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
	live, ruled := p.bySelectorAll(terms, zones)
	if len(live) == 0 {
		addConflicts(fe, ruled)
		return false, nil
	}

	// Then the affinity terms: each pair of an existing term and one of
	// ours that can hold together.
	m := &affinityMerge{pod: p, live: live}
	m.existing, _ = p.terms()
	firstWhy := m.pair(zones)
	if len(m.pairs) == 0 {
		addConflicts(fe, firstWhy)
		return false, nil
	}
	dropped := m.unpaired()

	changed := len(dropped) > 0
	if len(live) == 1 {
		return m.mergeOne(changed), dropped
	}
	m.mergeSeveral()
	return true, dropped
}

// bySelectorAll checks each of our terms against the pod's nodeSelector:
// the terms it leaves live, with the requirements it does not settle, and
// what rules out the first term ruled out (the error when none is left).
func (p *podSpec) bySelectorAll(terms [][]requirement, zones zoneReader) ([][]requirement, []conflict) {
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
	return live, ruled
}

// addConflicts records each conflict as an error on its field.
func addConflicts(fe *kpool.FieldErrors, why []conflict) {
	for _, c := range why {
		fe.Add(c.field, "%s", c.reason)
	}
}

// affinityMerge is one require's merge of our live terms with the pod's
// existing affinity terms: which pairs of them can hold together.
type affinityMerge struct {
	pod      *podSpec
	live     [][]requirement  // our terms the nodeSelector leaves
	existing []map[string]any // the pod's required node-affinity terms
	pairs    []termPair
}

// termPair is an existing term (e, -1 for none) and one of ours (t) that
// can hold together: indexes into existing and live.
type termPair struct{ e, t int }

// pair finds every pair of an existing term and one of ours that can hold
// together. It returns what rules out our first term with the existing
// terms, the error when no pair is left.
func (m *affinityMerge) pair(zones zoneReader) []conflict {
	var firstWhy []conflict
	for j, t := range m.live {
		if len(m.existing) == 0 {
			m.pairs = append(m.pairs, termPair{-1, j})
			continue
		}
		for i, e := range m.existing {
			why := m.pod.against(i, e, t, zones)
			if len(why) > 0 {
				if j == 0 {
					firstWhy = append(firstWhy, why...)
				}
				continue
			}
			m.pairs = append(m.pairs, termPair{i, j})
		}
	}
	return firstWhy
}

// unpaired returns the existing terms in no pair: none of ours can hold
// with them, so they are dropped.
func (m *affinityMerge) unpaired() []int {
	used := map[int]bool{}
	for _, pr := range m.pairs {
		if pr.e >= 0 {
			used[pr.e] = true
		}
	}
	var dropped []int
	for i := range m.existing {
		if !used[i] {
			dropped = append(dropped, i)
		}
	}
	return dropped
}

// mergeOne merges our one live term: single values go to nodeSelector;
// several, into each existing term kept (or a new one). changed says
// whether the pod has changed already; it returns whether it has now.
func (m *affinityMerge) mergeOne(changed bool) bool {
	p := m.pod
	var multi []requirement
	for _, r := range m.live[0] {
		if len(r.values) == 1 {
			p.nodeSelector(true)[r.key] = r.values[0]
			changed = true
			continue
		}
		multi = append(multi, r)
	}
	var kept []any
	for _, pr := range m.pairs {
		if pr.e >= 0 {
			kept = append(kept, m.existing[pr.e])
		}
	}
	if len(multi) == 0 {
		if changed && len(m.existing) > 0 {
			p.setTerms(kept)
		}
		return changed
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
	return changed
}

// mergeSeveral merges several live terms of ours: every value goes into
// affinity terms, one per pair, each a copy of its existing term (if any)
// with our term ANDed in.
func (m *affinityMerge) mergeSeveral() {
	var out []any
	for _, pr := range m.pairs {
		t := map[string]any{}
		if pr.e >= 0 {
			t = copyTerm(m.existing[pr.e])
		}
		addExpressions(t, m.live[pr.t])
		out = append(out, t)
	}
	m.pod.setTerms(out)
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

// overlaps reports whether a and b have a value in common.
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

package placement

import "github.com/kpool/kpool"

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

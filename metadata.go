package kpool

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
)

// LabelDomains are the label key domains kpool and Kubernetes own; users may
// not set labels there (nor in the providers' own domains, which each
// provider's profile lists).
var LabelDomains = []string{"kompox.dev", "kubernetes.io", "k8s.io"}

// labelDomainAllowed lists exceptions inside the reserved domains.
var labelDomainAllowed = []string{"node-restriction.kubernetes.io"}

// ValidateBlockMetadata checks the labels and taints a platform block adds
// (at their JSON paths): their syntax, that none contradicts spec.labels or
// spec.taints, and the number of taints in all.
func ValidateBlockMetadata(fe *FieldErrors, s *NodePoolSpec, domains []string, labels map[string]string, labelsPath string, taints []Taint, taintsPath string) {
	if labelsPath != "" {
		ValidateLabels(fe, labelsPath, labels, domains)
		for _, k := range SortedKeys(labels) {
			if v, ok := s.Labels[k]; ok && v != labels[k] {
				fe.Add(labelsPath+"."+k, "conflicts with spec.labels.%s (%q vs %q)", k, labels[k], v)
			}
		}
	}
	if labelsPath != "" && len(labels) > 0 {
		labelsFit(fe, "spec.labels", " in all (with "+labelsPath+")", s.Labels, labels)
	}
	all := len(s.Taints)
	if taintsPath != "" {
		ValidateTaints(fe, taintsPath, taints)
		type keyEffect struct{ key, effect string }
		neutral := map[keyEffect]string{}
		seen := map[Taint]bool{}
		for _, t := range s.Taints {
			neutral[keyEffect{t.Key, t.Effect}] = t.Value
			seen[t] = true
		}
		for i, t := range taints {
			if v, ok := neutral[keyEffect{t.Key, t.Effect}]; ok && v != t.Value {
				fe.Add(fmt.Sprintf("%s[%d]", taintsPath, i), "conflicts with spec.taints: %s:%s has value %q there and %q here", t.Key, t.Effect, v, t.Value)
			}
			if !seen[t] {
				seen[t] = true
				all++
			}
		}
	}
	if all > MaxTaints {
		fe.Add("spec.taints", "at most %d taints in all, got %d", MaxTaints, all)
	}
}

// ValidateLabels checks node labels: Kubernetes syntax, and no key in one of
// domains (those kpool, Kubernetes or a provider own).
func ValidateLabels(fe *FieldErrors, field string, m map[string]string, domains []string) {
	if !labelsFit(fe, field, "", m, nil) {
		return // each label's own faults would only make a huge answer
	}
	for _, k := range SortedKeys(m) {
		f := field + "." + k
		if errs := content.IsLabelKey(k); len(errs) > 0 {
			fe.Add(f, "%q is not a valid label key: %s", k, strings.Join(errs, "; "))
			continue
		}
		if d := ReservedDomain(k, domains); d != "" {
			fe.Add(f, "label domain %q is reserved for kpool or the provider", d)
		}
		if errs := content.IsLabelValue(m[k]); len(errs) > 0 {
			fe.Add(f, "%q is not a valid label value: %s", m[k], strings.Join(errs, "; "))
		}
	}
}

// labelsFit checks that the labels of a and b together (a key in both
// counts once) stay within MaxLabels and MaxLabelBytes, reporting at field.
func labelsFit(fe *FieldErrors, field, inAll string, a, b map[string]string) bool {
	n, size := len(a), 0
	for k, v := range a {
		size += len(k) + len(v)
	}
	for k, v := range b {
		if w, ok := a[k]; ok {
			size += len(v) - len(w)
			continue
		}
		n++
		size += len(k) + len(v)
	}
	switch {
	case n > MaxLabels:
		fe.Add(field, "at most %d labels%s, got %d", MaxLabels, inAll, n)
	case size > MaxLabelBytes:
		fe.Add(field, "at most %d bytes of label keys and values%s, got %d", MaxLabelBytes, inAll, size)
	default:
		return true
	}
	return false
}

// ReservedDomain returns the domain of domains that a label key falls in,
// or "".
func ReservedDomain(key string, domains []string) string {
	prefix, _, ok := strings.Cut(key, "/")
	if !ok {
		return ""
	}
	for _, a := range labelDomainAllowed {
		if prefix == a || strings.HasSuffix(prefix, "."+a) {
			return ""
		}
	}
	for _, d := range domains {
		if prefix == d || strings.HasSuffix(prefix, "."+d) {
			return d
		}
	}
	return ""
}

// ValidateTaints checks node taints: key, value and effect, none twice,
// and no key in a domain Kubernetes or kpool own (LabelDomains): the node
// lifecycle controller sets node.kubernetes.io/not-ready and the like
// itself, and a pool's taint there would fight it or fake its state.
func ValidateTaints(fe *FieldErrors, field string, ts []Taint) {
	type keyEffect struct{ key, effect string }
	seen := map[keyEffect]bool{}
	for i, t := range ts {
		f := fmt.Sprintf("%s[%d]", field, i)
		if t.Key == "" {
			fe.Add(f+".key", "required")
		} else if errs := content.IsLabelKey(t.Key); len(errs) > 0 {
			fe.Add(f+".key", "%q is not a valid taint key: %s", t.Key, strings.Join(errs, "; "))
		} else if d := ReservedDomain(t.Key, LabelDomains); d != "" {
			fe.Add(f+".key", "%q is in taint domain %q, which Kubernetes or kpool reserve (node.kubernetes.io/*, node-role.kubernetes.io/*…): use a key of your own, such as example.com/dedicated", t.Key, d)
		}
		if errs := content.IsLabelValue(t.Value); len(errs) > 0 {
			fe.Add(f+".value", "%q is not a valid taint value: %s", t.Value, strings.Join(errs, "; "))
		}
		switch t.Effect {
		case EffectNoSchedule, EffectPreferNoSchedule, EffectNoExecute:
		case "":
			fe.Add(f+".effect", "required: NoSchedule, PreferNoSchedule or NoExecute")
		default:
			fe.Add(f+".effect", "must be NoSchedule, PreferNoSchedule or NoExecute, got %q", t.Effect)
		}
		ke := keyEffect{t.Key, t.Effect}
		if seen[ke] {
			fe.Add(f, "duplicate taint %s:%s", t.Key, t.Effect)
		}
		seen[ke] = true
	}
}

func validateTags(fe *FieldErrors, tags map[string]string) {
	if len(tags) > MaxTags {
		fe.Add("spec.tags", "at most %d tags, got %d", MaxTags, len(tags))
	}
	for _, k := range SortedKeys(tags) {
		f := "spec.tags." + k
		switch {
		case k == "" || len(k) > 128:
			fe.Add(f, "tag keys must have 1-128 characters")
		case strings.TrimSpace(k) != k:
			fe.Add(f, "tag keys must not start or end with white space")
		}
		if len(tags[k]) > 256 {
			fe.Add(f, "tag values must have at most 256 characters, got %d", len(tags[k]))
		}
	}
}

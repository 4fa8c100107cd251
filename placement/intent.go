package placement

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kpool/kpool"
)

// source is one place intent can come from, with how to name its fields.
type source struct {
	intent Intent
	// field names one of its fields ("pool", "pools", "zone", "zones") in
	// errors; what names it for a person in conflict messages.
	field func(which string) string
	what  func(which string) string
}

func requestSource(i Intent) source {
	return source{intent: i,
		field: func(w string) string { return w },
		what:  func(w string) string { return "the " + w + " parameter" }}
}

func appSource(i Intent, name string) source {
	prefix := appField(name)
	return source{intent: i,
		field: func(w string) string { return prefix + w },
		what: func(w string) string {
			return strings.TrimSuffix(prefix, ": spec.deployment.") + "'s spec.deployment." + w
		}}
}

// annotationSource is the intent of the annotations of the metadata at
// meta ("metadata." or, for a pod template, "spec.template.metadata.").
func annotationSource(i Intent, meta string) source {
	key := func(w string) string { return "kompox.dev/" + w }
	return source{intent: i,
		field: func(w string) string { return meta + "annotations[" + key(w) + "]" },
		what: func(w string) string {
			if meta == "metadata." {
				return "annotation " + key(w)
			}
			return "pod template annotation " + key(w)
		}}
}

// check records what is wrong with a source's intent on its own: a value
// and a list of the same kind, or values that cannot be label values. at
// prefixes the fields (the document, for annotations).
func check(fe *kpool.FieldErrors, at string, s source) {
	i := s.intent
	if i.Pool != "" && len(i.Pools) > 0 {
		fe.Add(at+s.field("pools"), "give pool %q or pools %s, not both", i.Pool, strings.Join(i.Pools, ","))
	}
	if i.Zone != "" && len(i.Zones) > 0 {
		fe.Add(at+s.field("zones"), "give zone %q or zones %s, not both", i.Zone, strings.Join(i.Zones, ","))
	}
	for _, w := range []struct {
		which string
		vs    []string
	}{{"pool", one(i.Pool)}, {"pools", i.Pools}, {"zone", one(i.Zone)}, {"zones", i.Zones}} {
		checkValues(fe, at+s.field(w.which), w.vs)
	}
}

func one(v string) []string {
	if v == "" {
		return nil
	}
	return []string{v}
}

// checkValues records values that a node label cannot have.
func checkValues(fe *kpool.FieldErrors, field string, vs []string) {
	for _, v := range vs {
		if v == "" {
			fe.Add(field, "an empty name")
			continue
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			fe.Add(field, "%q cannot be a node label's value: %s", v, strings.Join(errs, "; "))
		}
	}
}

// list splits a comma-separated annotation, dropping blanks and repeats.
func list(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// annotationIntent reads a workload's intent annotations; a plural one that
// names nothing is an error.
func annotationIntent(fe *kpool.FieldErrors, at string, ann map[string]any) Intent {
	get := func(key string) (string, bool) {
		v, ok := ann[key]
		if !ok {
			return "", false
		}
		s, isString := v.(string)
		if !isString {
			fe.Add(at+"annotations["+key+"]", "an annotation's value is a string, not %v", v)
			return "", false
		}
		return s, true
	}
	var i Intent
	if v, ok := get(AnnotationPool); ok {
		i.Pool = strings.TrimSpace(v)
		if i.Pool == "" {
			fe.Add(at+"annotations["+AnnotationPool+"]", "names no pool")
		}
	}
	if v, ok := get(AnnotationZone); ok {
		i.Zone = strings.TrimSpace(v)
		if i.Zone == "" {
			fe.Add(at+"annotations["+AnnotationZone+"]", "names no zone")
		}
	}
	if v, ok := get(AnnotationPools); ok {
		if i.Pools = list(v); len(i.Pools) == 0 {
			fe.Add(at+"annotations["+AnnotationPools+"]", "names no pools: give them comma-separated")
		}
	}
	if v, ok := get(AnnotationZones); ok {
		if i.Zones = list(v); len(i.Zones) == 0 {
			fe.Add(at+"annotations["+AnnotationZones+"]", "names no zones: give them comma-separated")
		}
	}
	return i
}

// wanted is a workload's intent once its sources are weighed. No pools
// means any pool; no zones, any zone.
type wanted struct {
	pools, zones choice
	defaultPool  bool // pools is the default pool
}

// choice is one side of an intent (its pools or its zones) with the field
// it came from (for errors) and a description of that (for conflicts).
type choice struct {
	values      []string
	field, what string
}

// weigh picks, for pools and for zones apart, the first source that names
// any: the request, then the annotations, then the app file.
func weigh(sources ...source) wanted {
	var w wanted
	for _, s := range sources {
		w.pools.pick(s, s.intent.Pool, s.intent.Pools, "pool")
		w.zones.pick(s, s.intent.Zone, s.intent.Zones, "zone")
	}
	return w
}

// pick takes one or many from s, unless a source before it gave some.
func (c *choice) pick(s source, one string, many []string, noun string) {
	switch {
	case c.values != nil:
	case one != "":
		*c = choice{[]string{one}, s.field(noun), s.what(noun)}
	case len(many) > 0:
		*c = choice{dedupe(many), s.field(noun + "s"), s.what(noun + "s")}
	}
}

func dedupe(vs []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range vs {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// quoted lists values for a message: "a", or one of "a", "b".
func quoted(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = fmt.Sprintf("%q", v)
	}
	if len(q) == 1 {
		return q[0]
	}
	return "one of " + strings.Join(q, ", ")
}

package placement

import (
	"fmt"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// placeObject places one object if it is a workload, and reports whether it
// changed it. item is the object's path in a List ("items[2].").
func placeObject(o Options, fe *kpool.FieldErrors, res *Result, n int, item string, obj map[string]any) bool {
	gk, name := kindOf(obj)
	wl, ok := workloads[gk]
	if !ok {
		return false
	}
	res.Placed++
	at := fmt.Sprintf("document %d, %s: %s", n, name, item)
	warn := func(format string, args ...any) {
		res.Warnings = append(res.Warnings, Warning{Document: n, Object: name, Message: fmt.Sprintf(format, args...)})
	}

	meta, ok := path(obj, []string{"metadata"}, false)
	if !ok {
		fe.Add(at+"metadata", "is not an object")
		return false
	}
	// The workload's annotations, then its pod template's.
	ann, _ := meta["annotations"].(map[string]any)
	annSrc := annotationSource(annotationIntent(fe, at+"metadata.", ann), "metadata.")
	check(fe, at, annSrc)
	var tmplSrc source
	if n := len(wl.podSpec); n > 1 {
		tmplPath := append(append([]string(nil), wl.podSpec[:n-1]...), "metadata")
		meta := strings.Join(tmplPath, ".") + "."
		tmeta, _ := path(obj, tmplPath, false)
		tann, _ := tmeta["annotations"].(map[string]any)
		tmplSrc = annotationSource(annotationIntent(fe, at+meta, tann), meta)
		check(fe, at, tmplSrc)
	}

	specPath := strings.Join(wl.podSpec, ".") + "."
	spec, ok := path(obj, wl.podSpec, false)
	if !ok || spec == nil {
		fe.Add(at+strings.TrimSuffix(specPath, "."), "a %s needs its pod spec here", gk[strings.IndexByte(gk, '/')+1:])
		return false
	}
	pod := &podSpec{spec: spec, at: at + specPath}
	if !pod.valid(fe) {
		return false
	}

	w := weigh(requestSource(o.Intent), annSrc, tmplSrc, appSource(o.App, o.AppName))
	if w.pools.values == nil && o.DefaultPool != "" && !pod.selects(provider.LabelPool) {
		w.pools, w.defaultPool = choice{[]string{o.DefaultPool}, "default_pool", "the default pool"}, true
	}

	var terms [][]requirement
	var taints []kpool.Taint
	var zones zoneReader
	if o.Cluster != nil {
		count, hasCount := 0, false
		if wl.replicas != nil {
			count, hasCount = replicas(obj, wl.replicas)
		}
		var warns []string
		terms, taints, warns = o.Cluster.resolve(fe, at, w, count, hasCount)
		for _, m := range warns {
			warn("%s", m)
		}
		zones = o.Cluster.zoneOf
	} else {
		var t []requirement
		if w.pools.values != nil {
			t = append(t, requirement{key: provider.LabelPool, values: w.pools.values, what: w.pools.what, noun: "pool"})
		}
		if w.zones.values != nil {
			t = append(t, requirement{key: provider.LabelZone, values: w.zones.values, logical: w.zones.values, what: w.zones.what, noun: "zone"})
			// Without the cluster, kpool cannot see which pools its nodes
			// carry kompox.dev/node-zone on: only those created in one zone.
			warn("zone %s is written as %s, which only nodes of pools created in that one zone carry: pods wanting a pool in several zones will not schedule; with --cluster kpool checks the pools and uses %s where needed",
				strings.Join(w.zones.values, ","), provider.LabelZone, provider.LabelTopologyZone)
		}
		if t != nil {
			terms = [][]requirement{t}
		}
	}
	changed, dropped := pod.require(fe, terms, zones)
	for _, i := range dropped {
		warn("%s%s[%d] can match none of the nodes wanted: dropped (the pod's other terms still apply)", specPath, requiredAt, i)
	}
	if !o.NoTolerations && pod.tolerate(taints) {
		changed = true
	}
	return changed
}

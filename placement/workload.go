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
	pl := &placing{o: o, fe: fe, res: res, n: n, name: name, at: fmt.Sprintf("document %d, %s: %s", n, name, item), gk: gk, wl: wl, obj: obj}

	annSrc, tmplSrc, ok := pl.annotations()
	if !ok {
		return false
	}
	pod, specPath, ok := pl.pod()
	if !ok {
		return false
	}

	w := weigh(requestSource(o.Intent), annSrc, tmplSrc, appSource(o.App, o.AppName))
	if w.pools.values == nil && o.DefaultPool != "" && !pod.selects(provider.LabelPool) {
		w.pools, w.defaultPool = choice{[]string{o.DefaultPool}, "default_pool", "the default pool"}, true
	}

	terms, taints, zones := pl.requirements(w)
	changed, dropped := pod.require(fe, terms, zones)
	for _, i := range dropped {
		pl.warn("%s%s[%d] can match none of the nodes wanted: dropped (the pod's other terms still apply)", specPath, requiredAt, i)
	}
	if !o.NoTolerations && pod.tolerate(taints) {
		changed = true
	}
	return changed
}

// placing is one workload object being placed: the options, what collects
// its errors and warnings, and where it is for their messages.
type placing struct {
	o    Options
	fe   *kpool.FieldErrors
	res  *Result
	n    int    // the document's number
	name string // the object's kind and name, as kindOf gives them
	at   string // its fields' prefix: "document 1, Deployment web: "
	gk   string // its group and kind
	wl   workload
	obj  map[string]any
}

// warn records a warning about the object.
func (pl *placing) warn(format string, args ...any) {
	pl.res.Warnings = append(pl.res.Warnings, Warning{Document: pl.n, Object: pl.name, Message: fmt.Sprintf(format, args...)})
}

// annotations reads and checks the intent of the workload's annotations,
// then its pod template's. ok is false when its metadata is not an object.
func (pl *placing) annotations() (annSrc, tmplSrc source, ok bool) {
	fe, at, wl, obj := pl.fe, pl.at, pl.wl, pl.obj
	meta, ok := path(obj, []string{"metadata"}, false)
	if !ok {
		fe.Add(at+"metadata", "is not an object")
		return source{}, source{}, false
	}
	// The workload's annotations, then its pod template's.
	ann, _ := meta["annotations"].(map[string]any)
	annSrc = annotationSource(annotationIntent(fe, at+"metadata.", ann), "metadata.")
	check(fe, at, annSrc)
	if n := len(wl.podSpec); n > 1 {
		tmplPath := append(append([]string(nil), wl.podSpec[:n-1]...), "metadata")
		meta := strings.Join(tmplPath, ".") + "."
		tmeta, _ := path(obj, tmplPath, false)
		tann, _ := tmeta["annotations"].(map[string]any)
		tmplSrc = annotationSource(annotationIntent(fe, at+meta, tann), meta)
		check(fe, at, tmplSrc)
	}
	return annSrc, tmplSrc, true
}

// pod returns the workload's pod spec and its path ("spec.template.spec.");
// ok is false when it is missing or its scheduling fields are not valid.
func (pl *placing) pod() (*podSpec, string, bool) {
	fe, at, gk := pl.fe, pl.at, pl.gk
	specPath := strings.Join(pl.wl.podSpec, ".") + "."
	spec, ok := path(pl.obj, pl.wl.podSpec, false)
	if !ok || spec == nil {
		fe.Add(at+strings.TrimSuffix(specPath, "."), "a %s needs its pod spec here", gk[strings.IndexByte(gk, '/')+1:])
		return nil, "", false
	}
	pod := &podSpec{spec: spec, at: at + specPath}
	if !pod.valid(fe) {
		return nil, "", false
	}
	return pod, specPath, true
}

// requirements returns the node selector terms the wanted pools and zones
// ask of the pods, the taints to tolerate, and how to read zone labels:
// checked against the cluster when there is one, else as written.
func (pl *placing) requirements(w wanted) ([][]requirement, []kpool.Taint, zoneReader) {
	c := pl.o.Cluster
	if c == nil {
		return pl.unchecked(w), nil, nil
	}
	count, hasCount := 0, false
	if pl.wl.replicas != nil {
		count, hasCount = replicas(pl.obj, pl.wl.replicas)
	}
	terms, taints, warns := c.resolve(pl.fe, pl.at, w, count, hasCount)
	for _, m := range warns {
		pl.warn("%s", m)
	}
	return terms, taints, c.zoneOf
}

// unchecked returns the one term the wanted pools and zones make without
// a cluster to check them against (none when nothing is wanted).
func (pl *placing) unchecked(w wanted) [][]requirement {
	var t []requirement
	if w.pools.values != nil {
		t = append(t, requirement{key: provider.LabelPool, values: w.pools.values, what: w.pools.what, noun: "pool"})
	}
	if w.zones.values != nil {
		t = append(t, requirement{key: provider.LabelZone, values: w.zones.values, logical: w.zones.values, what: w.zones.what, noun: "zone"})
		// Without the cluster, kpool cannot see which pools its nodes
		// carry kompox.dev/node-zone on: only those created in one zone.
		pl.warn("zone %s is written as %s, which only nodes of pools created in that one zone carry: pods wanting a pool in several zones will not schedule; with --cluster kpool checks the pools and uses %s where needed",
			strings.Join(w.zones.values, ","), provider.LabelZone, provider.LabelTopologyZone)
	}
	if t != nil {
		return [][]requirement{t}
	}
	return nil
}

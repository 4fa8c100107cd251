package apply

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/kpool/kpool/internal/jsondoc"
)

// Fields returns v's leaves (objects are recursed into, by dotted path
// under prefix; lists and scalars are leaves) as compact JSON, leaving out
// nulls and empty objects: the fields of a spec as a plan or a diff shows
// them.
func Fields(prefix string, v any) map[string]string {
	b, err := json.Marshal(v)
	if err != nil {
		return map[string]string{prefix: fmt.Sprint(v)}
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		return map[string]string{prefix: string(b)}
	}
	out := map[string]string{}
	var walk func(path string, x any)
	walk = func(path string, x any) {
		switch t := x.(type) {
		case nil:
		case map[string]any:
			for k, v := range t {
				walk(path+"."+k, v)
			}
		default:
			out[path] = jsondoc.Compact(t)
		}
	}
	walk(prefix, x)
	return out
}

// A Difference is a spec field whose value the apply changes: Live is its
// value on the live pool, File after the apply, each as compact JSON and
// "" where the field is absent (no JSON value is "").
type Difference struct {
	Field, Live, File string
}

// Differences returns the fields of the pool's spec that differ between
// the live pool and the pool after the apply (as a dry run gives it), by
// their paths in order: every field of a pool to be created.
func (r Result) Differences() []Difference {
	var live, file map[string]string
	if r.Live != nil {
		live = Fields("spec", r.Live.Spec)
	}
	if r.NodePool != nil {
		file = Fields("spec", r.NodePool.Spec)
	}
	paths := slices.AppendSeq(slices.Collect(maps.Keys(live)), maps.Keys(file))
	slices.Sort(paths)
	var out []Difference
	for _, k := range slices.Compact(paths) {
		if live[k] != file[k] {
			out = append(out, Difference{Field: k, Live: live[k], File: file[k]})
		}
	}
	return out
}

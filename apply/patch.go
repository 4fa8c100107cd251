package apply

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
)

// MergePatch returns the JSON merge patch (RFC 7386) that turns live into
// desired: it sets each field desired gives that live lacks or has
// otherwise, and nulls each field live has and desired leaves out, key by
// key into objects on both sides; arrays and scalars are replaced whole.
// Applied to live, it gives desired exactly: the file as the whole spec.
// An empty patch is "{}". Both must be JSON objects (desired may be empty).
func MergePatch(live, desired []byte) (json.RawMessage, error) {
	l, err := object(live, "the live spec")
	if err != nil {
		return nil, err
	}
	d, err := object(desired, "the spec")
	if err != nil {
		return nil, err
	}
	return json.Marshal(diffObjects(l, d))
}

// object decodes data, a JSON object or nothing, keeping numbers exact.
func object(data []byte, what string) (map[string]any, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%s is not JSON: %v", what, err)
	}
	switch t := v.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return t, nil
	}
	return nil, fmt.Errorf("%s must be an object", what)
}

// diffObjects is the merge patch from live to desired, both objects.
func diffObjects(live, desired map[string]any) map[string]any {
	patch := map[string]any{}
	for k, lv := range live {
		dv, ok := desired[k]
		if !ok || dv == nil {
			if lv != nil {
				patch[k] = nil
			}
			continue
		}
		lm, lok := lv.(map[string]any)
		dm, dok := dv.(map[string]any)
		switch {
		case lok && dok:
			if sub := diffObjects(lm, dm); len(sub) > 0 {
				patch[k] = sub
			}
		case !equal(lv, dv):
			patch[k] = withoutNulls(dv)
		}
	}
	for k, dv := range desired {
		if _, ok := live[k]; !ok && dv != nil {
			patch[k] = withoutNulls(dv)
		}
	}
	return patch
}

// withoutNulls is v with the null members of its objects left out: in a
// patch, a null deletes, and a field that is not there has nothing to
// delete.
func withoutNulls(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		if x != nil {
			out[k] = withoutNulls(x)
		}
	}
	return out
}

// equal compares two decoded JSON values; numbers by their value, so that
// 3 and 3.0 are the same.
func equal(a, b any) bool {
	an, aok := a.(json.Number)
	bn, bok := b.(json.Number)
	if aok && bok {
		if an == bn {
			return true
		}
		x, err1 := an.Float64()
		y, err2 := bn.Float64()
		return err1 == nil && err2 == nil && x == y
	}
	switch at := a.(type) {
	case []any:
		bt, ok := b.([]any)
		if !ok || len(at) != len(bt) {
			return false
		}
		for i := range at {
			if !equal(at[i], bt[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		bt, ok := b.(map[string]any)
		if !ok || len(at) != len(bt) {
			return false
		}
		for k, v := range at {
			if w, ok := bt[k]; !ok || !equal(v, w) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

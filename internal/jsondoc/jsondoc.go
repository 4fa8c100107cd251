// Package jsondoc reads the API's JSON documents: Decode strictly, naming the
// full path of every unknown field and mistyped value, and Merge one document
// into another (PUT's rules, or RFC 7386 merge patch). It reports problems
// to a callback, so that the caller builds its own errors.
package jsondoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Report receives one problem: the field's path and the reason.
type Report func(field, reason string)

// Decode decodes the JSON in data into v (a pointer to a struct), reporting
// unknown fields and values of the wrong type by the full path of each (path
// is the path of data itself, e.g. "spec"; "" for a whole body), and
// reports whether v was decoded. Field names match exactly: "MachineType" is
// not "machineType".
func Decode(data []byte, v any, path string, report Report) bool {
	raw, err := parse(data)
	if err != nil {
		report(orBody(path), err.Error())
		return false
	}
	ok := true
	checkShape(func(field, reason string) { ok = false; report(field, reason) }, raw, reflect.TypeOf(v).Elem(), path)
	if !ok {
		return false
	}
	if err := json.Unmarshal(data, v); err != nil {
		report(orBody(path), err.Error())
		return false
	}
	return true
}

func orBody(path string) string {
	if path == "" {
		return "body"
	}
	return path
}

// parse decodes one JSON value, keeping numbers exact.
func parse(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %v", err)
	}
	if d.More() {
		return nil, fmt.Errorf("invalid JSON: more than one value")
	}
	return v, nil
}

var (
	rawMessageType = reflect.TypeOf(json.RawMessage(nil))
	timeType       = reflect.TypeOf(time.Time{})
)

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// checkShape walks a decoded JSON value alongside the Go type it will be
// decoded into and records every unknown field and mistyped value.
func checkShape(report Report, v any, t reflect.Type, path string) {
	if v == nil {
		return // null leaves the field at its zero value
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == rawMessageType:
		return
	case t == timeType:
		checkTime(report, v, path)
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		fields := jsonFields(t)
		checkObject(report, v, path, func(k string, fv any) {
			if f, ok := fields[k]; ok {
				checkShape(report, fv, f.Type, join(path, k))
			} else {
				report(join(path, k), "unknown field")
			}
		})
	case reflect.Map:
		checkObject(report, v, path, func(k string, fv any) {
			if fv == nil {
				report(join(path, k), "must not be null")
			} else {
				checkShape(report, fv, t.Elem(), join(path, k))
			}
		})
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			report(orBody(path), fmt.Sprintf("must be an array, got %s", jsonKind(v)))
			return
		}
		for i, ev := range arr {
			checkShape(report, ev, t.Elem(), fmt.Sprintf("%s[%d]", orBody(path), i))
		}
	default:
		checkScalar(report, v, t.Kind(), path)
	}
}

// checkTime checks a value decoded into a time.Time.
func checkTime(report Report, v any, path string) {
	if s, ok := v.(string); !ok {
		report(orBody(path), "must be an RFC 3339 time string")
	} else if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
		report(orBody(path), fmt.Sprintf("must be an RFC 3339 time, got %q", s))
	}
}

// checkObject checks that v is an object and hands each of its members to
// member.
func checkObject(report Report, v any, path string, member func(k string, fv any)) {
	obj, ok := v.(map[string]any)
	if !ok {
		report(orBody(path), fmt.Sprintf("must be an object, got %s", jsonKind(v)))
		return
	}
	for k, fv := range obj {
		member(k, fv)
	}
}

// checkScalar checks a value decoded into a string, bool or number of kind k.
func checkScalar(report Report, v any, k reflect.Kind, path string) {
	switch k {
	case reflect.String:
		if _, ok := v.(string); !ok {
			report(orBody(path), fmt.Sprintf("must be a string, got %s", jsonKind(v)))
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			report(orBody(path), fmt.Sprintf("must be true or false, got %s", jsonKind(v)))
		}
	case reflect.Int, reflect.Int32, reflect.Int64:
		n, ok := v.(json.Number)
		if !ok {
			report(orBody(path), fmt.Sprintf("must be an integer, got %s", jsonKind(v)))
			return
		}
		i, err := strconv.ParseInt(n.String(), 10, 64)
		if err != nil {
			report(orBody(path), fmt.Sprintf("must be an integer, got %s", n))
			return
		}
		if k == reflect.Int32 && (i > math.MaxInt32 || i < math.MinInt32) {
			report(orBody(path), fmt.Sprintf("out of range: %s", n))
		}
	case reflect.Float64, reflect.Float32:
		if _, ok := v.(json.Number); !ok {
			report(orBody(path), fmt.Sprintf("must be a number, got %s", jsonKind(v)))
		}
	}
}

// fieldCache holds jsonFields' answers: types do not change, and working
// them out on every request was a tenth of a create's CPU.
var fieldCache sync.Map // reflect.Type -> map[string]reflect.StructField

// jsonFields maps the JSON names of a struct's fields to the fields.
func jsonFields(t reflect.Type) map[string]reflect.StructField {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.StructField)
	}
	m := structFields(t)
	fieldCache.Store(t, m)
	return m
}

func structFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct && f.Tag.Get("json") == "" {
			for k, v := range structFields(f.Type) { // promoted, as encoding/json does
				out[k] = v
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f
	}
	return out
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// Merge merges patch into base and returns the result. Objects merge
// field by field at every depth; any other value (a list, a string, a
// number) replaces the base's. With nullDeletes, a null in patch removes the
// field (RFC 7386 JSON merge patch); without it a null leaves the field as it
// was, so a PUT changes only the fields it carries.
func Merge(base, patch []byte, nullDeletes bool) ([]byte, error) {
	var b any
	if len(bytes.TrimSpace(base)) > 0 {
		var err error
		if b, err = parse(base); err != nil {
			return nil, err
		}
	}
	p, err := parse(patch)
	if err != nil {
		return nil, err
	}
	return json.Marshal(merge(b, p, nullDeletes))
}

func merge(base, patch any, nullDeletes bool) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	out := map[string]any{}
	if bm, ok := base.(map[string]any); ok {
		for k, v := range bm {
			out[k] = v
		}
	}
	for k, v := range pm {
		if v == nil {
			if nullDeletes {
				delete(out, k)
			}
			continue
		}
		out[k] = merge(out[k], v, nullDeletes)
	}
	return out
}

// Carries reports whether the JSON object doc sets the field at path (keys
// joined by dots, such as "autoscaling.minNodes") to a value other than null.
func Carries(doc []byte, path string) bool {
	v, err := parse(doc)
	if err != nil {
		return false
	}
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if v, ok = m[k]; !ok {
			return false
		}
	}
	return v != nil
}

// Compact is v as compact JSON, with <, > and & as they are (what people
// read in a diff or a table); v printed with %v if it does not encode.
func Compact(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSpace(b.String())
}

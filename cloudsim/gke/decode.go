package gke

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/kpool/kpool/cloudsim/sim"
)

// decode reads a request body as Google's front end reads JSON into a
// proto message (the proto3 JSON mapping,
// https://protobuf.dev/programming-guides/json/), then into v, the Go
// client's struct of that message:
//
//   - a field's lowerCamelCase name and its proto name (node_pool) are
//     both accepted ("Parsers accept both");
//   - an enum is its value's name or number ("Parsers accept both enum
//     names and integer values"); an unknown name or number is refused;
//   - an int64 or int32 is a JSON number or a decimal string;
//   - null is the field's default (the field is absent);
//   - a field the message does not have is refused, as Google's front end
//     answers: Invalid JSON payload received. Unknown name "x" at 'y':
//     Cannot find field.
//
// Refusals are INVALID_ARGUMENT with a BadRequest naming the field by its
// proto path (node_pool.config.taints[0].effect), as Google's are.
func decode(req *sim.Request, v any) *sim.Reply {
	if len(bytes.TrimSpace(req.Body)) == 0 {
		return errorReply(codeInvalidArgument, "Invalid JSON payload received. The request body is empty.")
	}
	dec := json.NewDecoder(bytes.NewReader(req.Body))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return errorReply(codeInvalidArgument, "Invalid JSON payload received. %v", err)
	}
	norm, rep := normalize(raw, reflect.TypeOf(v).Elem(), "")
	if rep != nil {
		return rep
	}
	b, err := json.Marshal(norm)
	if err != nil {
		return errorReply(codeInternal, "kpool cloudsim could not re-encode the request: %v", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return errorReply(codeInvalidArgument, "Invalid JSON payload received. %v", err)
	}
	return nil
}

// field is what the decoder knows of a message field.
type field struct {
	json   string // its lowerCamelCase JSON name
	proto  string // its proto name, for paths
	typ    reflect.Type
	asText bool       // an int64 the Go client carries as a string
	enum   *protoEnum // its enum, when it is one
}

// fieldsOf are a message's fields by both their names, made once per Go
// type.
var fieldsOf sync.Map // reflect.Type -> map[string]*field

func messageFields(t reflect.Type) map[string]*field {
	if m, ok := fieldsOf.Load(t); ok {
		return m.(map[string]*field)
	}
	m := map[string]*field{}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		f := &field{json: name, proto: snake(name), typ: sf.Type, asText: strings.Contains(opts, "string")}
		if e, ok := enums[t.Name()+"."+name]; ok {
			f.enum = &e
		}
		m[name], m[f.proto] = f, f
	}
	fieldsOf.Store(t, m)
	return m
}

// snake is a lowerCamelCase JSON name's proto name: diskSizeGb is
// disk_size_gb.
func snake(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsUpper(r) {
			b.WriteByte('_')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// normalize turns a decoded JSON value into what encoding/json decodes
// into t, the Go client's type, applying the mapping's rules; path is the
// value's proto path.
func normalize(v any, t reflect.Type, path string) (any, *sim.Reply) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		return normalizeMessage(v, t, path)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 { // googleapi.RawMessage: any JSON
			return v, nil
		}
		arr, ok := v.([]any)
		if !ok {
			return nil, badValue(path, "a list", v)
		}
		out := make([]any, len(arr))
		for i, e := range arr {
			var rep *sim.Reply
			if out[i], rep = normalize(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); rep != nil {
				return nil, rep
			}
		}
		return out, nil
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, badValue(path, "an object", v)
		}
		out := make(map[string]any, len(obj))
		for k, e := range obj {
			var rep *sim.Reply
			if out[k], rep = normalize(e, t.Elem(), path+"["+strconv.Quote(k)+"]"); rep != nil {
				return nil, rep
			}
		}
		return out, nil
	}
	return scalar(v, t, path, false)
}

// normalizeMessage applies the rules to a message's fields.
func normalizeMessage(v any, t reflect.Type, path string) (any, *sim.Reply) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, badValue(path, "an object ("+t.Name()+")", v)
	}
	fields := messageFields(t)
	out := make(map[string]any, len(obj))
	for k, e := range obj {
		f, ok := fields[k]
		if !ok {
			at := ""
			if path != "" {
				at = fmt.Sprintf(" at '%s'", path)
			}
			msg := fmt.Sprintf("Invalid JSON payload received. Unknown name %q%s: Cannot find field.", k, at)
			return nil, detailed(codeInvalidArgument, []any{badRequest(path, msg)}, "%s", msg)
		}
		if e == nil {
			continue // null: the field's default
		}
		fp := joinPath(path, f.proto)
		var nv any
		var rep *sim.Reply
		switch {
		case f.enum != nil && f.typ.Kind() == reflect.Slice:
			nv, rep = enumList(e, f.enum, t, fp)
		case f.enum != nil:
			nv, rep = enumValueOf(e, f.enum, t, fp)
		case f.typ.Kind() == reflect.Int64 || f.typ.Kind() == reflect.Float64:
			nv, rep = scalar(e, f.typ, fp, f.asText)
		default:
			nv, rep = normalize(e, f.typ, fp)
		}
		if rep != nil {
			return nil, rep
		}
		out[f.json] = nv
	}
	return out, nil
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// scalar checks a string, bool or number; an integer may come as a
// number or a decimal string, and goes on as the Go client's struct
// carries it (a string when asText).
func scalar(v any, t reflect.Type, path string, asText bool) (any, *sim.Reply) {
	switch t.Kind() {
	case reflect.String:
		if s, ok := v.(string); ok {
			return s, nil
		}
		return nil, badValue(path, "TYPE_STRING", v)
	case reflect.Bool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
		return nil, badValue(path, "TYPE_BOOL", v)
	case reflect.Int64, reflect.Int, reflect.Int32:
		var text string
		switch n := v.(type) {
		case json.Number:
			text = n.String()
		case string:
			text = n
		}
		i, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil, badValue(path, "TYPE_INT64", v)
		}
		if asText {
			return strconv.FormatInt(i, 10), nil
		}
		return json.Number(strconv.FormatInt(i, 10)), nil
	case reflect.Float64, reflect.Float32:
		var text string
		switch n := v.(type) {
		case json.Number:
			text = n.String()
		case string:
			text = n
		}
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, badValue(path, "TYPE_DOUBLE", v)
		}
		return f, nil
	case reflect.Interface:
		return v, nil
	}
	return nil, badValue(path, t.Kind().String(), v)
}

// enumValueOf reads an enum given by name or number as its name.
func enumValueOf(v any, e *protoEnum, msg reflect.Type, path string) (any, *sim.Reply) {
	for _, ev := range e.Values {
		switch x := v.(type) {
		case string:
			if x == ev.Name {
				return ev.Name, nil
			}
		case json.Number:
			if x.String() == strconv.Itoa(ev.Number) {
				return ev.Name, nil
			}
		}
	}
	return nil, badValue(path, "type.googleapis.com/google.container.v1."+msg.Name()+"."+e.Type, v)
}

// enumList reads a repeated enum.
func enumList(v any, e *protoEnum, msg reflect.Type, path string) (any, *sim.Reply) {
	arr, ok := v.([]any)
	if !ok {
		return nil, badValue(path, "a list", v)
	}
	out := make([]any, len(arr))
	for i, x := range arr {
		var rep *sim.Reply
		if out[i], rep = enumValueOf(x, e, msg, fmt.Sprintf("%s[%d]", path, i)); rep != nil {
			return nil, rep
		}
	}
	return out, nil
}

// badValue is Google's answer to a value of the wrong type:
// Invalid value at 'node_pool.config.taints[0].effect'
// (type.googleapis.com/google.container.v1.NodeTaint.Effect), "NoSchedule".
func badValue(path, want string, got any) *sim.Reply {
	b, _ := json.Marshal(got)
	msg := fmt.Sprintf("Invalid value at '%s' (%s), %s", path, want, b)
	return detailed(codeInvalidArgument, []any{badRequest(path, msg)}, "Invalid JSON payload received. %s", msg)
}

package jsondoc

import (
	"encoding/json"
	"testing"
)

// fuzzDoc is a struct of every shape Decode checks: nested objects,
// pointers, lists, maps, numbers, strings and booleans.
type fuzzDoc struct {
	Name  string            `json:"name"`
	Count *int              `json:"count"`
	Ratio float64           `json:"ratio"`
	On    bool              `json:"on"`
	Tags  map[string]string `json:"tags"`
	Items []struct {
		Key   string `json:"key"`
		Value *int64 `json:"value"`
	} `json:"items"`
	Inner *struct {
		Zones []string       `json:"zones"`
		Deep  map[string]int `json:"deep"`
	} `json:"inner"`
	Raw json.RawMessage `json:"raw"`
}

var decodeSeeds = []string{
	`{}`, `{"name":"a","count":3,"ratio":1.5,"on":true}`, `{"tags":{"a":"b"},"items":[{"key":"k","value":9}]}`,
	`{"inner":{"zones":["1","2"],"deep":{"x":1}}}`, `{"unknown":1}`, `{"count":"3"}`, `{"count":2.5}`,
	`{"items":[1]}`, `{"inner":null}`, `{"name":"a","name":"b"}`, `[]`, `null`, `{`, `{"raw":{"any":[1,{}]}}`,
	`{"count":1e400}`, `{"count":-9223372036854775809}`, "{\"name\":\"\\ud800\"}", `[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`,
}

// FuzzDecodeShapes: Decode never panics, reports a problem whenever it refuses,
// and what it accepts is JSON that encoding/json decodes the same way.
func FuzzDecodeShapes(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v fuzzDoc
		var reports int
		ok := Decode(data, &v, "spec", func(field, reason string) {
			reports++
			if field == "" || reason == "" {
				t.Fatalf("report without a field or reason: %q %q", field, reason)
			}
		})
		if ok != (reports == 0) {
			t.Fatalf("Decode = %v with %d reports", ok, reports)
		}
		if ok {
			var w fuzzDoc
			if err := json.Unmarshal(data, &w); err != nil {
				t.Fatalf("Decode accepted %q, which encoding/json refuses: %v", data, err)
			}
		}
	})
}

// FuzzMerge: Merge never panics; what it returns is valid JSON; and merging
// a document into an empty base, then the same patch again, changes nothing.
func FuzzMerge(f *testing.F) {
	for _, s := range [][2]string{
		{`{"a":1}`, `{"a":null}`}, {`{"a":{"b":1}}`, `{"a":{"c":2}}`}, {`{"a":[1,2]}`, `{"a":[3]}`},
		{``, `{"a":1}`}, {`{}`, `null`}, {`{"a":1}`, `[]`}, {`{"a":{"b":{"c":{}}}}`, `{"a":{"b":null}}`},
		{`{`, `{}`}, {`{}`, `{"a":1,"a":2}`}, {`"x"`, `{"a":1}`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]), true)
		f.Add([]byte(s[0]), []byte(s[1]), false)
	}
	f.Fuzz(func(t *testing.T, base, patch []byte, nullDeletes bool) {
		out, err := Merge(base, patch, nullDeletes)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("Merge(%q, %q) = %q, not JSON", base, patch, out)
		}
		again, err := Merge(out, patch, nullDeletes)
		if err != nil {
			t.Fatalf("Merge of its own result with the same patch: %v", err)
		}
		var a, b any
		_ = json.Unmarshal(out, &a)
		_ = json.Unmarshal(again, &b)
		if ja, jb := mustMarshal(t, a), mustMarshal(t, b); ja != jb {
			t.Fatalf("Merge is not idempotent: %s then %s", ja, jb)
		}
	})
}

func mustMarshal(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

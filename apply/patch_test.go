package apply

import (
	"encoding/json"
	"testing"

	"github.com/kpool/kpool/internal/jsondoc"
)

// TestMergePatch: the patch from the live spec to the file's sets what the
// file says and nulls what it leaves out, key by key into objects, arrays
// whole; applied to live (RFC 7386) it gives the file.
func TestMergePatch(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, live, file, want string
	}{
		{"the same", `{"nodeCount":3,"labels":{"a":"1"}}`, `{"labels":{"a":"1"},"nodeCount":3}`, `{}`},
		{"numbers by value", `{"nodeCount":3}`, `{"nodeCount":3.0}`, `{}`},
		{"a scalar changed", `{"nodeCount":3}`, `{"nodeCount":4}`, `{"nodeCount":4}`},
		{"a field left out", `{"nodeCount":3,"mode":"user"}`, `{"nodeCount":3}`, `{"mode":null}`},
		{"a label removed, one added, one kept", `{"labels":{"team":"web","tier":"a"}}`, `{"labels":{"tier":"a","env":"prod"}}`,
			`{"labels":{"env":"prod","team":null}}`},
		{"every label removed", `{"labels":{"team":"web"}}`, `{}`, `{"labels":null}`},
		{"nested platform blocks", `{"platform":{"type":"gcp","gcp":{"machineType":"e2-small","spot":true}}}`,
			`{"platform":{"gcp":{"machineType":"e2-medium"}}}`, `{"platform":{"gcp":{"machineType":"e2-medium","spot":null},"type":null}}`},
		{"arrays replaced whole", `{"zones":["1","2"],"taints":[{"key":"a","effect":"NoSchedule"}]}`,
			`{"zones":["2","1"],"taints":[{"key":"a","effect":"NoSchedule"}]}`, `{"zones":["2","1"]}`},
		{"an array shortened", `{"zones":["1","2"]}`, `{"zones":["1"]}`, `{"zones":["1"]}`},
		{"a null in the file clears", `{"tags":{"a":"1"}}`, `{"tags":null}`, `{"tags":null}`},
		{"a null of nothing is nothing", `{}`, `{"tags":null,"labels":{"a":null}}`, `{"labels":{}}`},
		{"an object replacing a scalar", `{"autoscaling":true}`, `{"autoscaling":{"enabled":true,"x":null}}`, `{"autoscaling":{"enabled":true}}`},
		{"unknown fields are sent for the server to name", `{"nodeCount":1}`, `{"nodeCount":1,"nodecount":2}`, `{"nodecount":2}`},
		{"no spec in the file", `{"nodeCount":1}`, ``, `{"nodeCount":null}`},
		{"no live spec", ``, `{"nodeCount":1}`, `{"nodeCount":1}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MergePatch([]byte(tt.live), []byte(tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("patch %s, want %s", got, tt.want)
			}
			// RFC 7386: live with the patch is the file (without its nulls).
			merged, err := jsondoc.Merge([]byte(tt.live), got, true)
			if err != nil {
				t.Fatal(err)
			}
			file := tt.file
			if file == "" {
				file = "{}"
			}
			if want, err := jsondoc.Merge(nil, []byte(file), true); err != nil || !sameJSON(t, merged, want) {
				t.Errorf("live+patch = %s, want %s (%v)", merged, want, err)
			}
		})
	}
	for _, bad := range [][2]string{{`[1]`, `{}`}, {`{}`, `"x"`}, {`{}`, `{`}} {
		if _, err := MergePatch([]byte(bad[0]), []byte(bad[1])); err == nil {
			t.Errorf("MergePatch(%s, %s): no error", bad[0], bad[1])
		}
	}
}

// sameJSON reports whether a and b are the same JSON value, numbers by
// value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return equal(x, y)
}

package jsondoc_test

import (
	"testing"

	"github.com/kpool/kpool"
	. "github.com/kpool/kpool/internal/jsondoc"
)

// decode reads a document into v as the service does, problems becoming a
// VALIDATION_ERROR.
func decode(data []byte, v any, path string) error {
	var fe kpool.FieldErrors
	if !Decode(data, v, path, fe.Report) {
		return fe.Err()
	}
	return nil
}

func TestMerge(t *testing.T) {
	base := `{"nodeCount":3,"platform":{"gcp":{"machineType":"n1","zones":["a","b"],"diskSize":100}},"labels":{"a":"1","b":"2"}}`
	tests := []struct {
		name, patch string
		nullDeletes bool
		want        string
	}{
		{"nested fields kept", `{"platform":{"gcp":{"machineType":"n2"}}}`, false,
			`{"labels":{"a":"1","b":"2"},"nodeCount":3,"platform":{"gcp":{"diskSize":100,"machineType":"n2","zones":["a","b"]}}}`},
		{"lists replace", `{"platform":{"gcp":{"zones":["c"]}}}`, false,
			`{"labels":{"a":"1","b":"2"},"nodeCount":3,"platform":{"gcp":{"diskSize":100,"machineType":"n1","zones":["c"]}}}`},
		{"null kept by PUT", `{"labels":{"a":null},"nodeCount":null}`, false,
			`{"labels":{"a":"1","b":"2"},"nodeCount":3,"platform":{"gcp":{"diskSize":100,"machineType":"n1","zones":["a","b"]}}}`},
		{"null clears in merge patch", `{"labels":{"a":null},"nodeCount":null}`, true,
			`{"labels":{"b":"2"},"platform":{"gcp":{"diskSize":100,"machineType":"n1","zones":["a","b"]}}}`},
		{"scalar replaces object", `{"labels":"x"}`, true,
			`{"labels":"x","nodeCount":3,"platform":{"gcp":{"diskSize":100,"machineType":"n1","zones":["a","b"]}}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Merge([]byte(base), []byte(tc.patch), tc.nullDeletes)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	if _, err := Merge([]byte(base), []byte(`{`), false); err == nil {
		t.Fatal("bad JSON merged")
	}
}

func TestDecodeErrors(t *testing.T) {
	var s kpool.NodePoolSpec
	err := decode([]byte(`{"nodeCount":"x","platform":{"gcp":{"diskSize":1.5,"preemptible":"yes"}},"autoscaling":[]}`), &s, "spec")
	if err == nil {
		t.Fatal("bad spec decoded")
	}
	got := map[string]bool{}
	for _, f := range err.(*kpool.Error).Fields {
		got[f.Field] = true
	}
	for _, want := range []string{"spec.nodeCount", "spec.platform.gcp.diskSize", "spec.platform.gcp.preemptible", "spec.autoscaling"} {
		if !got[want] {
			t.Errorf("no error on %s: %v", want, err)
		}
	}
	if err := decode([]byte(`{} {}`), &s, "spec"); err == nil {
		t.Error("two JSON values accepted")
	}
	if err := decode([]byte(`not json`), &s, ""); err == nil || err.(*kpool.Error).Fields[0].Field != "body" {
		t.Errorf("bad JSON: %v", err)
	}
}

// FuzzDecode checks that no document makes Decode panic, that every
// problem it reports names a field and a reason, and that a document it
// accepts merges with itself.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{}`, `{"nodeCount":3,"platform":{"gcp":{"machineType":"n1"}}}`, `{"labels":{"a":null}}`,
		`{"nodeCount":1e400}`, `[1]`, `null`, `{"taints":[{"key":"a","effect":"NoSchedule"}]}`, `{"zones":["1"]} {}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s kpool.NodePoolSpec
		if !Decode(data, &s, "spec", func(field, reason string) {
			if field == "" || reason == "" {
				t.Fatalf("a problem without a field or reason: %q %q", field, reason)
			}
		}) {
			return
		}
		if _, err := Merge(data, data, true); err != nil {
			t.Fatalf("an accepted document does not merge with itself: %v", err)
		}
	})
}

func TestCarries(t *testing.T) {
	doc := []byte(`{"autoscaling":{"minNodes":1,"scaleUpDelay":null},"labels":{"a":"b"},"zones":["1"]}`)
	tests := []struct {
		path string
		want bool
	}{
		{"autoscaling", true},
		{"autoscaling.minNodes", true},
		{"autoscaling.scaleUpDelay", false}, // null sets nothing
		{"autoscaling.maxNodes", false},
		{"zones", true},
		{"zones.0", false}, // not an object
		{"labels.a", true},
		{"nodeCount", false},
	}
	for _, tc := range tests {
		if got := Carries(doc, tc.path); got != tc.want {
			t.Errorf("Carries(%s) = %v, want %v", tc.path, got, tc.want)
		}
	}
	if Carries([]byte(`not json`), "a") || Carries(nil, "a") {
		t.Error("Carries of a document that is not JSON")
	}
}

package apply

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kpool/kpool"
)

func TestFields(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		v    any
		want map[string]string
	}{
		{"nil", nil, map[string]string{}},
		{"objects by path, lists and scalars whole", map[string]any{
			"nodeCount": 3, "zones": []string{"1", "2"}, "labels": map[string]string{"a": "<b>"},
			"autoscaling": map[string]any{"enabled": true, "maxNodes": nil}, "taints": map[string]any{},
		}, map[string]string{"spec.nodeCount": "3", "spec.zones": `["1","2"]`, "spec.labels.a": `"<b>"`, "spec.autoscaling.enabled": "true"}},
		{"a spec", kpool.NodePoolSpec{NodeCount: new(3), Mode: "user"},
			map[string]string{"spec.nodeCount": "3", "spec.mode": `"user"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Fields("spec", tt.v); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDifferences(t *testing.T) {
	t.Parallel()
	pool := func(spec string) *kpool.NodePool {
		var p kpool.NodePool
		if err := json.Unmarshal([]byte(`{"spec":`+spec+`}`), &p); err != nil {
			t.Fatal(err)
		}
		return &p
	}
	for _, tt := range []struct {
		name       string
		live, file *kpool.NodePool
		want       []Difference
	}{
		{"the same", pool(`{"nodeCount":2}`), pool(`{"nodeCount":2}`), nil},
		{"changed, added, removed", pool(`{"nodeCount":2,"labels":{"a":"1","b":"2"}}`), pool(`{"nodeCount":3,"labels":{"a":"1","c":"3"}}`),
			[]Difference{{"spec.labels.b", `"2"`, ""}, {"spec.labels.c", "", `"3"`}, {"spec.nodeCount", "2", "3"}}},
		{"a create", nil, pool(`{"nodeCount":1}`), []Difference{{"spec.nodeCount", "", "1"}}},
		{"no result", pool(`{"nodeCount":1}`), nil, []Difference{{"spec.nodeCount", "1", ""}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Result{Live: tt.live, NodePool: tt.file}.Differences()
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

package driver

import "testing"

// TestWithEntry: a pool's entry is set, changed or removed in its place;
// every other part, well-formed or not, stays as it was.
func TestWithEntry(t *testing.T) {
	const p = "ocid1.nodepool.oc1..p"
	for _, tc := range []struct {
		nodes string
		b     *bounds
		want  string
	}{
		{"", &bounds{2, 6}, "2:6:" + p},
		{"1:3:ocid1.nodepool.oc1..x", &bounds{2, 6}, "1:3:ocid1.nodepool.oc1..x,2:6:" + p},
		{"1:3:" + p + ", 0:9:ocid1.nodepool.oc1..x", &bounds{2, 6}, "2:6:" + p + ",0:9:ocid1.nodepool.oc1..x"},
		{"0:9:ocid1.nodepool.oc1..x,1:3:" + p + ",odd", nil, "0:9:ocid1.nodepool.oc1..x,odd"},
		{"1:3:" + p + ",1:3:" + p, &bounds{1, 4}, "1:4:" + p},
		{"0:9:ocid1.nodepool.oc1..x", nil, "0:9:ocid1.nodepool.oc1..x"},
	} {
		if got := withEntry(tc.nodes, p, tc.b); got != tc.want {
			t.Errorf("withEntry(%q, %v) = %q, want %q", tc.nodes, tc.b, got, tc.want)
		}
	}
	es := entries("1:3:a, x:1:b,2:5:c:d,bad")
	if len(es) != 2 || es["a"] != (bounds{1, 3}) || es["c:d"] != (bounds{2, 5}) {
		t.Errorf("entries: %v", es)
	}
}

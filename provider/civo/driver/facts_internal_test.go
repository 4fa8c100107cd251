package driver

import "testing"

// TestUpstream: Civo's versions as kpool compares them.
func TestUpstream(t *testing.T) {
	for in, want := range map[string]string{"1.30.5-k3s1": "1.30.5", "v1.29.8-k3s1": "1.29.8", "1.31.2": "1.31.2", "1.30.0+talos": "1.30.0", "": ""} {
		if got := upstream(in); got != want {
			t.Errorf("upstream(%q) = %q, want %q", in, got, want)
		}
	}
}

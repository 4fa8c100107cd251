package provider

import "testing"

// TestMatchesVersion: how an offered version is compared with a spec's.
func TestMatchesVersion(t *testing.T) {
	for _, tc := range []struct {
		offered, want string
		match         bool
	}{
		{"1.31.2", "1.31", true},
		{"1.31.2", "1.31.2", true},
		{"v1.31.2", "1.31", true},
		{"1.31.2-gke.100", "1.31.2", true},
		{"1.31", "1.31.2", true}, // EKS offers minors
		{"1.31", "1.31", true},
		{"1.31.2", "1.3", false},
		{"1.31.2", "1.30", false},
		{"1.31", "1.310.1", false},
		{"1.31.12", "1.31.1", false},
	} {
		if got := MatchesVersion(tc.offered, tc.want); got != tc.match {
			t.Errorf("MatchesVersion(%q, %q) = %v", tc.offered, tc.want, got)
		}
	}
}

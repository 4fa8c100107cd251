package main

import (
	"testing"

	"github.com/kpool/kpool"
)

// TestReachableColumn: kpool cluster list's REACHABLE says yes, no with
// the reason, unknown (never "no") for a controller's Unknown, and -
// while no controller has looked.
func TestReachableColumn(t *testing.T) {
	cond := func(status, reason string) kpool.ClusterStatus {
		return kpool.ClusterStatus{Conditions: []kpool.Condition{{Type: kpool.ConditionReachable, Status: status, Reason: reason, Message: "m"}}}
	}
	tests := []struct {
		name string
		st   kpool.ClusterStatus
		want string
	}{
		{"not looked at", kpool.ClusterStatus{}, "-"},
		{"reachable", cond(kpool.ConditionTrue, "Listed"), "yes"},
		{"refused", cond(kpool.ConditionFalse, kpool.ReasonNoCredential), "no (NoCredential)"},
		{"refused without a reason", cond(kpool.ConditionFalse, ""), "no"},
		{"unknown", cond(kpool.ConditionUnknown, "Checking"), "unknown"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := reachable(tc.st); got != tc.want {
				t.Fatalf("REACHABLE %q, want %q", got, tc.want)
			}
		})
	}
}

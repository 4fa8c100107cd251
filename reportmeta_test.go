package kpool

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// TestReportMeta: what kpool's controllers write reads back as written,
// and an external controller's metadata reads as the keys kpool knows with
// the types it knows, whatever else it carries.
func TestReportMeta(t *testing.T) {
	at := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	full := ReportMeta{Platform: "azure", ProviderName: "web", ProvisioningState: "Succeeded", Exists: ptrTo(true),
		ActiveNodes: ptrTo(2), DesiredNodes: ptrTo(3), NodesByZone: map[string]int{"1": 2}, StaleNodes: 1,
		NodeLabels: &map[string]string{}, LabelProblems: []string{"x"}, ProviderMessage: "m", LastError: "e",
		FailedGeneration: 4, CreateSentAt: &at, Owner: &ReportOwner{Installation: "i", Pool: "p"}}
	back := (&ControllerStatus{Metadata: full.Encode()}).Meta()
	if !reflect.DeepEqual(back, full) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", back, full)
	}
	// An empty label set is said, not dropped: "the nodes carry none".
	if got := string(ReportMeta{NodeLabels: &map[string]string{}}.Encode()); got != `{"node_labels":{}}` {
		t.Fatalf("empty labels encode as %s", got)
	}
	tests := []struct {
		name string
		meta string
		want ReportMeta
	}{
		{"none", ``, ReportMeta{}},
		{"not an object", `[1,2]`, ReportMeta{}},
		{"not JSON", `{`, ReportMeta{}},
		{"unknown keys", `{"region":"us-central1","active_nodes":5}`, ReportMeta{ActiveNodes: ptrTo(5)}},
		{"a string for a boolean", `{"exists":"false","desired_nodes":3}`, ReportMeta{DesiredNodes: ptrTo(3)}},
		{"a number for a string", `{"last_error":7,"active_nodes":1}`, ReportMeta{ActiveNodes: ptrTo(1)}},
		{"a time that is not one", `{"create_sent_at":"yesterday","exists":false}`, ReportMeta{Exists: ptrTo(false)}},
		{"null labels", `{"node_labels":null}`, ReportMeta{}},
	}
	for _, tc := range tests {
		got := (&ControllerStatus{Metadata: json.RawMessage(tc.meta)}).Meta()
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Meta() = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

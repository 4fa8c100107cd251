package service_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/internal/jsondoc"
	"github.com/kpool/kpool/service"
	"github.com/kpool/kpool/store/storetest"
	"github.com/kpool/kpool/store/testdb"
)

var alice, bob = storetest.Ctx(storetest.Alice), storetest.Ctx(storetest.Bob)

func logicalWorld(t *testing.T) (*service.Service, *kpool.Cluster) {
	t.Helper()
	s := service.New(testdb.SQLite(t), storetest.Platforms)
	return s, storetest.NewCluster(t, s, storetest.Alice, "prod")
}

// lpSpec is storetest.GCPLogical with an RFC 7386 patch applied.
func lpSpec(t *testing.T, patch string) json.RawMessage {
	t.Helper()
	if patch == "" {
		return json.RawMessage(storetest.GCPLogical)
	}
	out, err := jsondoc.Merge([]byte(storetest.GCPLogical), []byte(patch), true)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustLogical(t *testing.T, s *service.Service, c *kpool.Cluster, name, patch string) *kpool.LogicalPool {
	t.Helper()
	lp, err := s.CreateLogicalPool(alice, service.LogicalPoolCreate{ClusterID: c.ID, Name: name, Spec: lpSpec(t, patch)})
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	return lp
}

func wantErr(t *testing.T, err error, code, text string) {
	t.Helper()
	if kpool.ErrorCode(err) != code || !strings.Contains(errText(err), text) {
		t.Fatalf("want %s naming %q, got %v", code, text, errText(err))
	}
}

// errText is an error with its fields, as the API answers it.
func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	var b strings.Builder
	b.WriteString(err.Error())
	if e, ok := err.(*kpool.Error); ok {
		for _, f := range e.Fields {
			b.WriteString(" | " + f.Field + ": " + f.Reason)
		}
	}
	return b.String()
}

// TestLogicalPoolValidation: every fault names the logical pool's field
// that causes it, a member's fault its template or fallback field.
func TestLogicalPoolValidation(t *testing.T) {
	s, c := logicalWorld(t)
	for _, tc := range []struct {
		name, lp, patch, field, reason string
	}{
		{"bad name", "Web_1", "", "name", "not a valid name"},
		{"members' names too long", strings.Repeat("w", 59), "", "name", "too long: its member " + strings.Repeat("w", 59) + "-1-f1"},
		{"no count", "web", `{"nodeCount":null}`, "spec.nodeCount", "required"},
		{"negative count", "web", `{"nodeCount":-1}`, "spec.nodeCount", "between 0 and"},
		{"autoscaling bounds crossed", "web", `{"nodeCount":null,"autoscaling":{"enabled":true,"minNodes":5,"maxNodes":2}}`, "spec.autoscaling.minNodes", "must not exceed maxNodes"},
		{"autoscaling and a count", "web", `{"autoscaling":{"enabled":true,"minNodes":1,"maxNodes":2}}`, "spec.nodeCount", "not with autoscaling"},
		{"template count", "web", `{"template":{"nodeCount":3}}`, "spec.template.nodeCount", "set on the logical pool, not its template"},
		{"template autoscaling", "web", `{"template":{"autoscaling":{"enabled":false}}}`, "spec.template.autoscaling", "set on the logical pool"},
		{"template placement", "web", `{"template":{"placementPool":"x"}}`, "spec.template.placementPool", "set on the logical pool"},
		{"template observed", "web", `{"template":{"management":"observe"}}`, "spec.template.management", "managed"},
		{"zones in the block", "web", `{"template":{"platform":{"gcp":{"zones":["us-central1-a"]}}}}`, "spec.template.platform.gcp.zones", "spec.template.zones"},
		{"template zone", "web", `{"template":{"zones":["1","x"]}}`, "spec.template.zones[1]", "not a logical zone"},
		{"template machine type", "web", `{"template":{"platform":{"gcp":{"machineType":"bad type!"}}}}`, "spec.template.platform.gcp.machineType", ""},
		{"fallback as the template", "web", `{"fallbacks":[{"machineType":"n1-standard-4"}]}`, "spec.fallbacks[0]", "the same offerings as the template"},
		{"fallbacks alike", "web", `{"fallbacks":[{"machineType":"n2-standard-4"},{"machineType":"n2-standard-4"}]}`, "spec.fallbacks[1]", "the same offerings as fallback 0"},
		{"fallback machine type", "web", `{"fallbacks":[{"machineType":"bad type!"}]}`, "spec.fallbacks[0].machineType", ""},
		{"fallback zone", "web", `{"fallbacks":[{"zones":["x"]}]}`, "spec.fallbacks[0].zones", "not a logical zone"},
		{"unavailableFor short", "web", `{"capacity":{"unavailableFor":"5s"}}`, "spec.capacity.unavailableFor", "between 10s and 1h0m0s"},
		{"unavailableFor garbage", "web", `{"capacity":{"unavailableFor":"soon"}}`, "spec.capacity.unavailableFor", "not a duration"},
		{"minMoveInterval long", "web", `{"capacity":{"minMoveInterval":"2h"}}`, "spec.capacity.minMoveInterval", "between 0s and 1h0m0s"},
		{"unknown field", "web", `{"replicas":3}`, "spec.replicas", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.CreateLogicalPool(alice, service.LogicalPoolCreate{ClusterID: c.ID, Name: tc.lp, Spec: lpSpec(t, tc.patch)})
			var e *kpool.Error
			if kpool.ErrorCode(err) != kpool.CodeValidation || !asError(err, &e) {
				t.Fatalf("want VALIDATION_ERROR, got %v", errText(err))
			}
			for _, f := range e.Fields {
				if f.Field == tc.field && strings.Contains(f.Reason, tc.reason) {
					return
				}
			}
			t.Fatalf("want field %s (%q), got %s", tc.field, tc.reason, errText(err))
		})
	}
	if l, _ := s.LogicalPools(alice, service.ListOptions{}); l.Total != 0 {
		t.Fatalf("%d logical pools stored by refused creates", l.Total)
	}
}

// events returns the types of the events of object id, oldest first, with
// their actors and details.
func events(t *testing.T, s *service.Service, id string) []kpool.Event {
	t.Helper()
	evs, err := s.Store.Events(context.Background(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []kpool.Event
	for _, e := range evs {
		if e.ObjectID == id {
			out = append(out, e)
		}
	}
	return out
}

// TestMembersShareZoneByOffering: single-zone members of one logical pool
// may share a zone only when their offerings (machine type, spot) differ.
func TestMembersShareZoneByOffering(t *testing.T) {
	s, c := logicalWorld(t)
	member := func(machine string) json.RawMessage {
		return json.RawMessage(`{"platform":{"gcp":{"machineType":"` + machine + `","diskSize":100}},"zones":["1"],"nodeCount":1,"placementPool":"web"}`)
	}
	for _, tc := range []struct {
		name, machine, code string
	}{
		{"web-a", "n1-standard-4", ""},
		{"web-b", "n2-standard-4", ""},
		{"web-c", "n1-standard-4", kpool.CodeValidation},
	} {
		_, err := s.CreateNodePool(alice, service.NodePoolCreate{Name: tc.name, ClusterID: c.ID, Spec: member(tc.machine)})
		if kpool.ErrorCode(err) != tc.code {
			t.Fatalf("%s (%s): want %q, got %v", tc.name, tc.machine, tc.code, errText(err))
		}
		if tc.code != "" && !strings.Contains(errText(err), "pool web-a of logical pool web is in zone 1 already") {
			t.Fatalf("%s: %v", tc.name, errText(err))
		}
	}
}

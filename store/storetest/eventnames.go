package storetest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
)

// testEventNames: every event of a cluster, its pool and its logical pool,
// from create through update to delete, keeps the object's name beside
// its id, as written and as read back (Events and AuditEvents).
func testEventNames(t *testing.T, s *service.Service) {
	ctx := Ctx(Alice)
	c := NewCluster(t, s, Alice, "named")
	ok(s.UpdateCluster(ctx, c.ID, service.Update{Patch: true, Spec: json.RawMessage(`{"importPools":true}`)}))(t)
	p := NewPool(t, s, c, "web")
	ok(s.UpdateNodePool(ctx, p.ID, service.Update{Spec: count(5), Patch: true}))(t)
	if _, _, err := s.DeleteNodePool(ctx, p.ID, service.Delete{}); err != nil {
		t.Fatal(err)
	}
	spec := `{"autoscaling":{"enabled":true,"minNodes":3,"maxNodes":9},"template":{"platform":{"gcp":{"machineType":"n1-standard-4"}},"zones":["1","2","3"]}}`
	lp := ok(s.CreateLogicalPool(ctx, service.LogicalPoolCreate{ClusterID: c.ID, Name: "spread", Spec: json.RawMessage(spec)}))(t)
	ok(s.UpdateLogicalPool(ctx, lp.ID, service.Update{Spec: json.RawMessage(`{"autoscaling":{"maxNodes":12}}`), Patch: true}))(t)
	if err := s.DeleteLogicalPool(ctx, lp.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.DeleteCluster(ctx, c.ID, service.Delete{}); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{c.ID: "named", p.ID: "web", lp.ID: "spread"}
	seen := map[string]bool{}
	outbox := ok(s.Store.Events(context.Background(), 0, 100))(t)
	trail := ok(s.Store.AuditEvents(context.Background(), kpool.EventFilter{ClusterID: c.ID, Limit: 100}))(t)
	if len(outbox) != len(trail) || len(outbox) < 8 {
		t.Fatalf("%d events in the outbox, %d in the trail, want the same 8 or more", len(outbox), len(trail))
	}
	for _, e := range append(outbox, trail...) {
		if want, ok := names[e.ObjectID]; !ok || e.ObjectName != want {
			t.Errorf("%s of %s: object_name %q, want %q", e.Type, e.ObjectID, e.ObjectName, want)
		}
		seen[e.Type] = true
	}
	for _, typ := range []string{kpool.EventClusterCreated, kpool.EventClusterUpdated, kpool.EventClusterDeleted,
		kpool.EventNodePoolCreated, kpool.EventNodePoolUpdated, kpool.EventNodePoolDeleted,
		kpool.EventLogicalPoolCreated, kpool.EventLogicalPoolUpdated, kpool.EventLogicalPoolDeleted} {
		if !seen[typ] {
			t.Errorf("no %s event among %d", typ, len(outbox))
		}
	}
}

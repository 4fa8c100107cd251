package storetest

import (
	"encoding/json"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
)

// testLogicalLayout: the controller's layout write (a logical pool locked,
// members created, scaled and deleted, its status written, in one
// transaction) on the store; the same layout again writes no member, and
// a layout for an older generation writes nothing.
func testLogicalLayout(t *testing.T, s *service.Service) {
	ctx, ctl := Ctx(Alice), Ctx(Controller)
	c := NewCluster(t, s, Alice, "prod")
	spec := `{"autoscaling":{"enabled":true,"minNodes":3,"maxNodes":9},"template":{"platform":{"gcp":{"machineType":"n1-standard-4"}},"zones":["1","2","3"]}}`
	lp := ok(s.CreateLogicalPool(ctx, service.LogicalPoolCreate{ClusterID: c.ID, Name: "web", Spec: json.RawMessage(spec)}))(t)
	l := service.LogicalLayout{Generation: 1, Status: lp.Status}
	for _, m := range lp.Status.Members {
		l.Members = append(l.Members, service.LayoutMember{Offering: m.Offering, Count: m.NodeCount, MaxCount: 3})
	}
	ok(s.ApplyLogicalLayout(ctl, lp.ID, l))(t)
	pools := ok(s.NodePools(ctx, service.ListOptions{ClusterID: c.ID}))(t)
	if len(pools.Items) != 3 {
		t.Fatalf("%d members made, want 3", len(pools.Items))
	}
	for _, p := range pools.Items {
		a := p.Spec.Autoscaling
		if !a.On() || *a.MinNodes != 1 || *a.MaxNodes != 3 || p.Spec.PlacementPool != "web" || len(p.Spec.Zones) != 1 {
			t.Fatalf("member %s: %+v", p.Name, p.Spec)
		}
	}
	last := ok(s.Store.LastEventID(ctx))(t)
	l.Members[0].MaxCount = 4
	l.Members[2].Delete = true
	out := ok(s.ApplyLogicalLayout(ctl, lp.ID, l))(t)
	if n := ok(s.Store.LastEventID(ctx))(t) - last; n != 2 || out.Generation != 1 {
		t.Fatalf("%d events for a scale and a delete, want 2 (generation %d)", n, out.Generation)
	}
	last += 2
	ok(s.ApplyLogicalLayout(ctl, lp.ID, l))(t)
	if n := ok(s.Store.LastEventID(ctx))(t) - last; n != 0 {
		t.Fatalf("the same layout again wrote %d events", n)
	}
	ok(s.UpdateLogicalPool(ctx, lp.ID, service.Update{Spec: json.RawMessage(`{"autoscaling":{"maxNodes":12}}`), Patch: true}))(t)
	l.Members[1].MaxCount = 5
	_, err := s.ApplyLogicalLayout(ctl, lp.ID, l)
	wantCode(t, err, kpool.CodeConflict)
	if p := ok(s.NodePools(ctx, service.ListOptions{ClusterID: c.ID, Name: "web-2"}))(t).Items[0]; *p.Spec.Autoscaling.MaxNodes != 3 {
		t.Fatalf("a stale layout scaled web-2 to %d", *p.Spec.Autoscaling.MaxNodes)
	}
}

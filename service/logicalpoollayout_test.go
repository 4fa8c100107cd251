package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
	"github.com/kpool/kpool/store/storetest"
)

// preferred is the layout of a logical pool's status members.
func preferred(lp *kpool.LogicalPool) service.LogicalLayout {
	l := service.LogicalLayout{Generation: lp.Generation, Status: lp.Status}
	for _, m := range lp.Status.Members {
		l.Members = append(l.Members, service.LayoutMember{Offering: m.Offering, Alternative: m.Alternative, Count: m.NodeCount})
	}
	return l
}

// poolsOf lists a cluster's pools as NAME:COUNT:MACHINE(:PLACEMENT), by name.
func poolsOf(t *testing.T, s *service.Service, c *kpool.Cluster) string {
	t.Helper()
	l, err := s.NodePools(alice, service.ListOptions{ClusterID: c.ID, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range l.Items {
		o := storetest.Platforms.Offering(c, &p.Spec)
		out = append(out, fmt.Sprintf("%s:%d:%s:%s", p.Name, p.Spec.Count(), o.MachineType, p.Spec.PlacementPool))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func poolEventCount(t *testing.T, s *service.Service) int {
	t.Helper()
	evs, err := s.Store.Events(alice, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if strings.HasPrefix(e.Type, "nodepool.") {
			n++
		}
	}
	return n
}

// TestApplyLogicalLayout: a layout makes the members it names through the
// pools' own checks and writes, by the controllers' identity; the same
// layout again writes no member; a fallback member may sit in the zone of
// the short one; a member's name held by a pool outside the logical pool,
// or a layout of an older generation, is a CONFLICT and writes nothing;
// Delete removes a made member; deleting the logical pool deletes the
// members it made and leaves the ones that joined it.
func TestApplyLogicalLayout(t *testing.T) {
	s, c := logicalWorld(t)
	ctl := reconcileCtx()
	lp := mustLogical(t, s, c, "web", "")
	l := preferred(lp)
	out, err := s.ApplyLogicalLayout(ctl, lp.ID, l)
	if err != nil {
		t.Fatal(err)
	}
	const made = "web-1:2:n1-standard-4:web web-2:2:n1-standard-4:web web-3:2:n1-standard-4:web"
	if got := poolsOf(t, s, c); got != made {
		t.Fatalf("members %s", got)
	}
	if out.Generation != 1 || out.ResourceVersion == lp.ResourceVersion || out.Status.LastUpdateTime.IsZero() {
		t.Fatalf("after apply %+v", out)
	}
	p := poolNamed(t, s, c, "web-1")
	if evs := events(t, s, p.ID); len(evs) != 1 || evs[0].Actor != storetest.Controller || evs[0].Detail != "logical pool web" {
		t.Fatalf("member's events %+v", evs)
	}
	before := poolEventCount(t, s)
	if _, err := s.ApplyLogicalLayout(ctl, lp.ID, l); err != nil {
		t.Fatal(err)
	}
	if n := poolEventCount(t, s); n != before {
		t.Fatalf("the same layout again wrote %d pool events", n-before)
	}

	// Zone 1 is short of n1: two nodes there move to its n2 fallback.
	l.Members[0].Count = 0
	l.Members = append(l.Members, service.LayoutMember{Offering: kpool.Offering{Zone: "1", MachineType: "n2-standard-4"}, Alternative: 1, Count: 2})
	l.Members[0].Delete = true
	l.Moved = "zone 1 out of n1-standard-4: 2 nodes to n2-standard-4"
	if _, err := s.ApplyLogicalLayout(ctl, lp.ID, l); err != nil {
		t.Fatal(err)
	}
	const moved = "web-1-f1:2:n2-standard-4:web web-2:2:n1-standard-4:web web-3:2:n1-standard-4:web"
	if got := poolsOf(t, s, c); got != moved {
		t.Fatalf("after the move %s", got)
	}
	if got := eventTypes(events(t, s, lp.ID)); got != "[logicalpool.created logicalpool.moved]" {
		t.Fatalf("logical pool events %s", got)
	}
	checkLayoutScale(t, s, c, lp, l)
	checkLayoutConflicts(t, s, c, lp, l)
	checkLogicalDelete(t, s, c, lp)
}

// checkLayoutScale: a member whose count differs is updated as a pool is.
func checkLayoutScale(t *testing.T, s *service.Service, c *kpool.Cluster, lp *kpool.LogicalPool, l service.LogicalLayout) {
	t.Helper()
	l.Members[1].Count = 3
	l.Moved = ""
	if _, err := s.ApplyLogicalLayout(reconcileCtx(), lp.ID, l); err != nil {
		t.Fatal(err)
	}
	p := poolNamed(t, s, c, "web-2")
	if p.Spec.Count() != 3 || p.Generation != 2 {
		t.Fatalf("scaled member: count %d, generation %d", p.Spec.Count(), p.Generation)
	}
	if evs := events(t, s, p.ID); evs[len(evs)-1].Type != kpool.EventNodePoolUpdated || !strings.Contains(evs[len(evs)-1].Detail, "spec.nodeCount") {
		t.Fatalf("scale event %+v", evs[len(evs)-1])
	}
}

// checkLayoutConflicts: a foreign pool of a member's name and a stale
// generation are CONFLICTs, and nothing of the layout is written.
func checkLayoutConflicts(t *testing.T, s *service.Service, c *kpool.Cluster, lp *kpool.LogicalPool, l service.LogicalLayout) {
	t.Helper()
	storetest.NewPool(t, s, c, "web-2-f1")
	want := poolsOf(t, s, c)
	bad := l
	bad.Members = append([]service.LayoutMember{{Offering: kpool.Offering{Zone: "3", MachineType: "n2-standard-4"}, Alternative: 1, Count: 1}},
		service.LayoutMember{Offering: kpool.Offering{Zone: "2", MachineType: "n2-standard-4"}, Alternative: 1, Count: 1})
	_, err := s.ApplyLogicalLayout(reconcileCtx(), lp.ID, bad)
	wantErr(t, err, kpool.CodeConflict, "web-2-f1")
	if got := poolsOf(t, s, c); got != want {
		t.Fatalf("a refused layout wrote: %s", got)
	}
	if _, err := s.UpdateLogicalPool(alice, lp.ID, service.Update{Spec: json.RawMessage(`{"nodeCount":8}`), Patch: true}); err != nil {
		t.Fatal(err)
	}
	_, err = s.ApplyLogicalLayout(reconcileCtx(), lp.ID, l)
	wantErr(t, err, kpool.CodeConflict, "generation 2")
}

// checkLogicalDelete: the logical pool's delete takes the members it made
// and leaves the pool that joined it and the foreign one.
func checkLogicalDelete(t *testing.T, s *service.Service, c *kpool.Cluster, lp *kpool.LogicalPool) {
	t.Helper()
	joined := `{"platform":{"gcp":{"machineType":"e2-standard-4","diskSize":100}},"zones":["3"],"nodeCount":1,"placementPool":"web","labels":{"tier":"web"}}`
	if _, err := s.CreateNodePool(alice, service.NodePoolCreate{Name: "web-extra", ClusterID: c.ID, Spec: json.RawMessage(joined)}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteLogicalPool(alice, lp.ID); err != nil {
		t.Fatal(err)
	}
	if got := poolsOf(t, s, c); got != "web-2-f1:3:n1-standard-4: web-extra:1:e2-standard-4:web" {
		t.Fatalf("after the logical pool's delete: %s", got)
	}
}

func reconcileCtx() context.Context { return storetest.Ctx(storetest.Controller) }

func poolNamed(t *testing.T, s *service.Service, c *kpool.Cluster, name string) *kpool.NodePool {
	t.Helper()
	l, err := s.NodePools(alice, service.ListOptions{ClusterID: c.ID, Name: name})
	if err != nil || len(l.Items) != 1 {
		t.Fatalf("pool %s: %v", name, err)
	}
	return l.Items[0]
}

// TestLayoutRefused: layouts no logical pool could want are refused before
// anything is read or written.
func TestLayoutRefused(t *testing.T) {
	s, c := logicalWorld(t)
	lp := mustLogical(t, s, c, "web", "")
	z1 := kpool.Offering{Zone: "1", MachineType: "n1-standard-4"}
	for _, tc := range []struct {
		name    string
		members []service.LayoutMember
		field   string
	}{
		{"rank beyond the fallbacks", []service.LayoutMember{{Offering: z1, Alternative: 3, Count: 1}}, "members[0].alternative"},
		{"negative count", []service.LayoutMember{{Offering: z1, Count: -1}}, "members[0].count"},
		{"a member twice", []service.LayoutMember{{Offering: z1, Count: 1}, {Offering: z1, Count: 2}}, "members[1]"},
	} {
		_, err := s.ApplyLogicalLayout(reconcileCtx(), lp.ID, service.LogicalLayout{Generation: 1, Members: tc.members})
		wantErr(t, err, kpool.CodeValidation, tc.field)
	}
	if got := poolsOf(t, s, c); got != "" {
		t.Fatalf("refused layouts made %s", got)
	}
}

// TestLayoutCarriesTemplate: a change of the template that its members can
// take in place (a label) reaches them with the next layout; one that
// needs a new pool (another machine type) leaves them as they are, and
// their counts still follow the layout.
func TestLayoutCarriesTemplate(t *testing.T) {
	s, c := logicalWorld(t)
	alice := storetest.Ctx(storetest.Alice)
	lp := mustLogical(t, s, c, "web", "")
	if _, err := s.ApplyLogicalLayout(reconcileCtx(), lp.ID, preferred(lp)); err != nil {
		t.Fatal(err)
	}
	lp, err := s.UpdateLogicalPool(alice, lp.ID, service.Update{Spec: json.RawMessage(`{"template":{"labels":{"team":"shop"}}}`), Patch: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ApplyLogicalLayout(reconcileCtx(), lp.ID, preferred(lp)); err != nil {
		t.Fatal(err)
	}
	if p := poolNamed(t, s, c, "web-2"); p.Spec.Labels["team"] != "shop" || p.Generation != 2 {
		t.Fatalf("member after a label change: labels %v, generation %d", p.Spec.Labels, p.Generation)
	}
	lp, err = s.UpdateLogicalPool(alice, lp.ID, service.Update{Spec: json.RawMessage(`{"template":{"platform":{"gcp":{"machineType":"n1-standard-8"}}}}`), Patch: true})
	if err != nil {
		t.Fatal(err)
	}
	l := preferred(lp)
	for i := range l.Members {
		l.Members[i].MachineType = "n1-standard-4" // the members as they are
		l.Members[i].Count = 3
	}
	if _, err := s.ApplyLogicalLayout(reconcileCtx(), lp.ID, l); err != nil {
		t.Fatal(err)
	}
	p := poolNamed(t, s, c, "web-2")
	if mt := s.Platforms.Offering(c, &p.Spec).MachineType; mt != "n1-standard-4" || p.Spec.Count() != 3 {
		t.Fatalf("member after a machine type change: %s, count %d", mt, p.Spec.Count())
	}
}

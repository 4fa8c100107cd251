package service_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
	"github.com/kpool/kpool/store/storetest"
)

// TestLogicalPoolLifecycle: a created logical pool shows its preferred
// layout; it is read by id and by name, listed, updated (generation up on a
// change only, resource versions checked, dry runs store nothing) and
// deleted, with an event for each write.
func TestLogicalPoolLifecycle(t *testing.T) {
	s, c := logicalWorld(t)
	dry, err := s.CreateLogicalPool(alice, service.LogicalPoolCreate{ClusterID: c.ID, Name: "web", Spec: lpSpec(t, `{"nodeCount":7}`), DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := layoutOf(dry); got != "web-1:3 web-2:2 web-3:2" {
		t.Fatalf("dry run's layout %s", got)
	}
	if l, _ := s.LogicalPools(alice, service.ListOptions{}); l.Total != 0 {
		t.Fatalf("a dry run stored %d", l.Total)
	}
	lp := mustLogical(t, s, c, "web", "")
	if got := layoutOf(lp); got != "web-1:2 web-2:2 web-3:2" || lp.Status.NodeCount != 6 || lp.Generation != 1 {
		t.Fatalf("created: layout %s, status %+v", got, lp.Status)
	}
	if stored, err := s.LogicalPool(alice, lp.ID); err != nil || layoutOf(stored) != "web-1:2 web-2:2 web-3:2" || stored.Status.Members[0].MachineType != "n1-standard-4" {
		t.Fatalf("read back: %v %+v", err, stored)
	}
	_, err = s.CreateLogicalPool(alice, service.LogicalPoolCreate{ClusterID: c.ID, Name: "web", Spec: lpSpec(t, "")})
	wantErr(t, err, kpool.CodeConflict, "already exists")
	if found, err := s.FindLogicalPool(alice, c.ID, "web"); err != nil || found.ID != lp.ID {
		t.Fatalf("find: %v", err)
	}
	_, err = s.FindLogicalPool(alice, c.ID, "nope")
	wantErr(t, err, kpool.CodeNotFound, "LogicalPool")
	mustLogical(t, s, c, "api", "")
	for _, tc := range []struct {
		o    service.ListOptions
		want string
	}{
		{service.ListOptions{}, "[web api] 2"},
		{service.ListOptions{ClusterID: c.ID, Name: "api"}, "[api] 1"},
		{service.ListOptions{Limit: 1}, "[web] 2 next"},
	} {
		l, err := s.LogicalPools(alice, tc.o)
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprint(lpNames(l.Items), " ", l.Total)
		if l.Next != "" {
			got += " next"
		}
		if got != tc.want {
			t.Errorf("list %+v: %s, want %s", tc.o, got, tc.want)
		}
	}
	checkLogicalUpdates(t, s, lp)
	if err := s.DeleteLogicalPool(alice, lp.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.LogicalPool(alice, lp.ID)
	wantErr(t, err, kpool.CodeNotFound, "LogicalPool")
	if got := eventTypes(events(t, s, lp.ID)); got != "[logicalpool.created logicalpool.updated logicalpool.deleted]" {
		t.Fatalf("events %s", got)
	}
}

func checkLogicalUpdates(t *testing.T, s *service.Service, lp *kpool.LogicalPool) {
	t.Helper()
	same, err := s.UpdateLogicalPool(alice, lp.ID, service.Update{Spec: json.RawMessage(`{"nodeCount":6}`), Patch: true})
	if err != nil || same.Generation != 1 || same.ResourceVersion != lp.ResourceVersion {
		t.Fatalf("no-op update: %v, generation %d", err, same.Generation)
	}
	dry, err := s.UpdateLogicalPool(alice, lp.ID, service.Update{Spec: json.RawMessage(`{"nodeCount":9}`), Patch: true, DryRun: true})
	if err != nil || *dry.Spec.NodeCount != 9 || dry.ResourceVersion != lp.ResourceVersion {
		t.Fatalf("dry-run scale: %v %+v", err, dry)
	}
	_, err = s.UpdateLogicalPool(alice, lp.ID, service.Update{Spec: json.RawMessage(`{"nodeCount":-2}`), Patch: true})
	wantErr(t, err, kpool.CodeValidation, "spec.nodeCount")
	_, err = s.UpdateLogicalPool(alice, lp.ID, service.Update{Spec: json.RawMessage(`{"template":{"nodeCount":2}}`), Patch: true})
	wantErr(t, err, kpool.CodeValidation, "spec.template.nodeCount")
	scaled, err := s.UpdateLogicalPool(alice, lp.ID, service.Update{Spec: json.RawMessage(`{"nodeCount":9}`), Patch: true, ResourceVersion: lp.ResourceVersion})
	if err != nil || *scaled.Spec.NodeCount != 9 || scaled.Generation != 2 || len(scaled.Spec.Fallbacks) != 2 {
		t.Fatalf("scale: %v %+v", err, scaled)
	}
	_, err = s.UpdateLogicalPool(alice, lp.ID, service.Update{Spec: json.RawMessage(`{"nodeCount":4}`), Patch: true, ResourceVersion: lp.ResourceVersion})
	wantErr(t, err, kpool.CodeConflict, "has been modified")
	name := "other"
	_, err = s.UpdateLogicalPool(alice, lp.ID, service.Update{Name: &name})
	wantErr(t, err, kpool.CodeValidation, "immutable")
}

// TestLogicalPoolAccess: another owner's logical pools are NOT_FOUND, as
// pools are; controllers read but do not write them, and only controllers
// apply layouts.
func TestLogicalPoolAccess(t *testing.T) {
	s, c := logicalWorld(t)
	lp := mustLogical(t, s, c, "web", "")
	ctl := storetest.Ctx(storetest.Controller)
	_, err := s.LogicalPool(bob, lp.ID)
	wantErr(t, err, kpool.CodeNotFound, "LogicalPool")
	_, err = s.FindLogicalPool(bob, c.ID, "web")
	wantErr(t, err, kpool.CodeNotFound, "Cluster")
	if l, err := s.LogicalPools(bob, service.ListOptions{}); err != nil || l.Total != 0 {
		t.Fatalf("bob lists %v, %v", l, err)
	}
	_, err = s.CreateLogicalPool(bob, service.LogicalPoolCreate{ClusterID: c.ID, Name: "mine", Spec: lpSpec(t, "")})
	wantErr(t, err, kpool.CodeNotFound, "Cluster")
	_, err = s.UpdateLogicalPool(bob, lp.ID, service.Update{Spec: json.RawMessage(`{"nodeCount":1}`)})
	wantErr(t, err, kpool.CodeNotFound, "LogicalPool")
	wantErr(t, s.DeleteLogicalPool(bob, lp.ID), kpool.CodeNotFound, "LogicalPool")
	if _, err := s.LogicalPool(ctl, lp.ID); err != nil {
		t.Fatalf("a controller reads: %v", err)
	}
	_, err = s.UpdateLogicalPool(ctl, lp.ID, service.Update{Spec: json.RawMessage(`{"nodeCount":1}`)})
	wantErr(t, err, kpool.CodeForbidden, "controller")
	_, err = s.CreateLogicalPool(ctl, service.LogicalPoolCreate{ClusterID: c.ID, Name: "ctl", Spec: lpSpec(t, "")})
	wantErr(t, err, kpool.CodeForbidden, "controller")
	_, err = s.ApplyLogicalLayout(alice, lp.ID, service.LogicalLayout{Generation: 1})
	wantErr(t, err, kpool.CodeForbidden, "only controllers")
}

func layoutOf(lp *kpool.LogicalPool) string {
	var out string
	for i, m := range lp.Status.Members {
		if i > 0 {
			out += " "
		}
		out += fmt.Sprintf("%s:%d", m.Name, m.NodeCount)
	}
	return out
}

func lpNames(lps []*kpool.LogicalPool) []string {
	var out []string
	for _, lp := range lps {
		out = append(out, lp.Name)
	}
	return out
}

func eventTypes(evs []kpool.Event) string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return fmt.Sprint(out)
}

package storetest

import (
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
)

// testClusterFacts: what controllers learn of a cluster is stored whole
// and replaced by the next report; users read it, may not report it; a
// cluster's deletion takes its facts with it; a create is checked against
// them (an unoffered machine type is a VALIDATION_ERROR on the field),
// and stale facts refuse nothing but say so.
func testClusterFacts(t *testing.T, s *service.Service) {
	ctl, user := Ctx(Controller), Ctx(Alice)
	c := NewCluster(t, s, Alice, "facts")
	if f := ok(s.ClusterFacts(user, c.ID))(t); f != nil {
		t.Fatalf("facts before any report: %+v", f)
	}
	now := time.Now().UTC().Truncate(time.Second)
	f := &kpool.ClusterFacts{LearnedAt: now, Version: "1.31.2", PoolVersions: []string{"1.31.2", "1.30.9"}, Zones: []string{"us-central1-a"},
		MachineTypes: []kpool.MachineType{{Name: "n1-standard-4", CPUs: 4, MemoryMiB: 15360}, {Name: "e2-small", CPUs: 2, MemoryMiB: 2048, NoSpot: true}}}
	wantCode(t, s.ReportClusterFacts(user, c.ID, f), kpool.CodeForbidden)
	wantCode(t, s.ReportClusterFacts(ctl, c.ID, &kpool.ClusterFacts{}), kpool.CodeValidation)
	if err := s.ReportClusterFacts(ctl, c.ID, f); err != nil {
		t.Fatal(err)
	}
	got := ok(s.ClusterFacts(user, c.ID))(t)
	if got == nil || !got.LearnedAt.Equal(now) || len(got.MachineTypes) != 2 || got.MachineTypes[0].Name != "e2-small" || !got.MachineTypes[0].NoSpot ||
		got.PoolVersions[0] != "1.30.9" || got.MachineTypes[1].MemoryMiB != 15360 {
		t.Fatalf("stored facts: %+v", got)
	}
	f.MachineTypes = []kpool.MachineType{{Name: "n1-standard-4", CPUs: 4, MemoryMiB: 15360}}
	if err := s.ReportClusterFacts(ctl, c.ID, f); err != nil {
		t.Fatal(err)
	}
	if got := ok(s.ClusterFacts(user, c.ID))(t); len(got.MachineTypes) != 1 {
		t.Fatalf("replaced facts: %+v", got)
	}
	_, err := s.CreateNodePool(user, service.NodePoolCreate{Name: "bogus", ClusterID: c.ID, Spec: []byte(
		`{"platform":{"type":"gcp","gcp":{"machineType":"n1-standard-44"}},"nodeCount":1}`)})
	wantCode(t, err, kpool.CodeValidation)
	if e := err.(*kpool.Error); len(e.Fields) != 1 || e.Fields[0].Field != "spec.platform.gcp.machineType" {
		t.Fatalf("preflight: %+v", e)
	}
	_, plan, err := s.CreateNodePoolPlan(user, service.NodePoolCreate{Name: "web", ClusterID: c.ID, Spec: []byte(
		`{"platform":{"type":"gcp","gcp":{"machineType":"n1-standard-4"}},"nodeCount":1}`)})
	if err != nil || len(plan.Warnings) != 0 {
		t.Fatalf("an offered machine type: %v, warnings %v", err, plan.Warnings)
	}

	if _, _, err := s.DeleteCluster(Ctx(Admin), c.ID, service.Delete{Force: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.ReportClusterFacts(ctl, c.ID, f); err != nil {
		t.Fatalf("a report on a cluster that is gone: %v", err)
	}
}

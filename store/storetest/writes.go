package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
)

func testClusterLifecycle(t *testing.T, s *service.Service) {
	ctx := Ctx(Alice)
	c := NewCluster(t, s, Alice, "prod")
	if c.Generation != 1 || c.ResourceVersion == "" || c.CreatedBy != Alice || c.Status.Phase != kpool.ClusterActive {
		t.Fatalf("created cluster: %+v", c)
	}
	got := ok(s.Cluster(ctx, c.ID))(t)
	if got.Name != "prod" || got.Spec.Platform.GCP.ProjectID != "acme-prod" || !got.CreatedAt.Equal(c.CreatedAt) {
		t.Fatalf("read back: %+v", got)
	}
	// An admin sets the endpoint: users may set only those the operator allows.
	up := ok(s.UpdateCluster(Ctx(Admin), c.ID, service.Update{Spec: json.RawMessage(`{"endpoint":"http://127.0.0.1:9999"}`)}))(t)
	if up.Generation != 2 || up.ResourceVersion == c.ResourceVersion || up.Spec.Endpoint != "http://127.0.0.1:9999" || up.Spec.Platform.GCP == nil {
		t.Fatalf("updated cluster: %+v", up)
	}
	_, err := s.UpdateCluster(ctx, c.ID, service.Update{Spec: json.RawMessage(`{"platform":{"gcp":{"clusterName":"other"}}}`)})
	wantCode(t, err, kpool.CodeValidation)
	_, gone, err := s.DeleteCluster(ctx, c.ID, service.Delete{Force: false})
	if err != nil || !gone {
		t.Fatalf("delete: gone=%v err=%v", gone, err)
	}
	_, err = s.Cluster(ctx, c.ID)
	wantCode(t, err, kpool.CodeNotFound)
}

func testUniqueNames(t *testing.T, s *service.Service) {
	c := NewCluster(t, s, Alice, "prod")
	_, err := s.CreateCluster(Ctx(Alice), service.ClusterCreate{Name: "prod", Spec: json.RawMessage(GCPCluster)})
	wantCode(t, err, kpool.CodeConflict)
	NewCluster(t, s, Bob, "prod") // names are per owner

	p := NewPool(t, s, c, "workers")
	_, err = s.CreateNodePool(Ctx(Alice), service.NodePoolCreate{Name: "workers", ClusterID: c.ID, Spec: json.RawMessage(GCPPool)})
	wantCode(t, err, kpool.CodeConflict)
	other := NewCluster(t, s, Alice, "staging")
	NewPool(t, s, other, "workers") // names are per cluster

	_, gone, err := s.DeleteNodePool(Ctx(Alice), p.ID, service.Delete{})
	if err != nil || !gone {
		t.Fatalf("delete: gone=%v err=%v", gone, err)
	}
	again := NewPool(t, s, c, "workers") // a deleted name can be used again
	if again.ID == p.ID || again.Generation != 1 {
		t.Fatalf("re-created pool: %+v", again)
	}
}

func testClientChosenID(t *testing.T, s *service.Service) {
	const id = "550e8400-e29b-41d4-a716-446655440000"
	c := ok(s.CreateCluster(Ctx(Alice), service.ClusterCreate{ID: id, Name: "prod", Spec: json.RawMessage(GCPCluster)}))(t)
	if c.ID != id {
		t.Fatalf("id %s, want %s", c.ID, id)
	}
	_, err := s.CreateCluster(Ctx(Alice), service.ClusterCreate{ID: id, Name: "other", Spec: json.RawMessage(GCPCluster)})
	wantCode(t, err, kpool.CodeConflict)
	_, err = s.CreateCluster(Ctx(Alice), service.ClusterCreate{ID: "not-a-uuid", Name: "third", Spec: json.RawMessage(GCPCluster)})
	wantCode(t, err, kpool.CodeValidation)
}

func testGeneration(t *testing.T, s *service.Service) {
	ctx := Ctx(Alice)
	p := NewPool(t, s, NewCluster(t, s, Alice, "prod"), "workers")
	if p.Generation != 1 {
		t.Fatalf("generation %d, want 1", p.Generation)
	}
	up := ok(s.UpdateNodePool(ctx, p.ID, service.Update{Spec: count(5)}))(t)
	if up.Generation != 2 || up.ResourceVersion == p.ResourceVersion || up.Spec.Count() != 5 {
		t.Fatalf("after change: %+v", up)
	}
	// The zones and disk were not in the update and are kept.
	if up.Spec.Platform.GCP.DiskSize != 100 || len(up.Spec.Platform.GCP.Zones) != 1 {
		t.Fatalf("update lost fields: %+v", up.Spec.Platform.GCP)
	}
	noop := ok(s.UpdateNodePool(ctx, p.ID, service.Update{Spec: count(5)}))(t)
	if noop.Generation != 2 || noop.ResourceVersion != up.ResourceVersion {
		t.Fatalf("no-op changed generation or resource_version: %+v", noop)
	}
	// A status report is a write (new resource_version) but not a spec change.
	doc := ok(s.ReportNodePoolStatus(Ctx(Controller), p.ID, kpool.ControllerStatus{ControllerName: "gcp-nodepool-controller", ObservedGeneration: 2}))(t)
	after := ok(s.NodePool(ctx, p.ID))(t)
	if doc.Generation != 2 || after.Generation != 2 || after.ResourceVersion == up.ResourceVersion {
		t.Fatalf("status report: generation %d, resource_version %s", after.Generation, after.ResourceVersion)
	}
	// Moving autoscaling bounds without a count keeps the count inside them.
	bounded := ok(s.UpdateNodePool(ctx, p.ID, service.Update{Spec: json.RawMessage(`{"autoscaling":{"enabled":true,"minNodes":6,"maxNodes":9}}`)}))(t)
	if bounded.Spec.Count() != 6 || bounded.Generation != 3 {
		t.Fatalf("bounds without a count: count %d generation %d", bounded.Spec.Count(), bounded.Generation)
	}
	_, err := s.UpdateNodePool(ctx, p.ID, service.Update{Spec: json.RawMessage(`{"nodeCount":10}`)})
	wantCode(t, err, kpool.CodeValidation) // an explicit count must fit
	// Merge patch: null clears.
	patched := ok(s.UpdateNodePool(ctx, p.ID, service.Update{Patch: true, Spec: json.RawMessage(`{"platform":{"gcp":{"zones":null}}}`)}))(t)
	if patched.Generation != 4 || patched.Spec.Platform.GCP.Zones != nil {
		t.Fatalf("merge patch: %+v", patched)
	}
}

func testStaleResourceVersion(t *testing.T, s *service.Service) {
	ctx := Ctx(Alice)
	p := NewPool(t, s, NewCluster(t, s, Alice, "prod"), "workers")
	up := ok(s.UpdateNodePool(ctx, p.ID, service.Update{Spec: count(4), ResourceVersion: p.ResourceVersion}))(t)
	_, err := s.UpdateNodePool(ctx, p.ID, service.Update{Spec: count(7), ResourceVersion: p.ResourceVersion})
	wantCode(t, err, kpool.CodeConflict)
	got := ok(s.NodePool(ctx, p.ID))(t)
	if got.ResourceVersion != up.ResourceVersion || got.Spec.Count() != 4 || got.Generation != 2 {
		t.Fatalf("a refused write changed the pool: %+v", got)
	}
	_, _, err = s.DeleteNodePool(ctx, p.ID, service.Delete{ResourceVersion: "stale"})
	wantCode(t, err, kpool.CodeConflict)
	ok(s.NodePool(ctx, p.ID))(t)
}

func testConcurrentSameRV(t *testing.T, s *service.Service) {
	ctx := Ctx(Alice)
	p := NewPool(t, s, NewCluster(t, s, Alice, "prod"), "workers")
	errs := parallel(50, func(i int) error {
		_, err := s.UpdateNodePool(ctx, p.ID, service.Update{Spec: count(10 + i), ResourceVersion: p.ResourceVersion})
		return err
	})
	succeeded, conflicts := 0, 0
	for _, err := range errs {
		switch kpool.ErrorCode(err) {
		case "":
			succeeded++
		case kpool.CodeConflict:
			conflicts++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	if succeeded != 1 || conflicts != 49 {
		t.Fatalf("%d succeeded and %d conflicted; want 1 and 49", succeeded, conflicts)
	}
	if got := ok(s.NodePool(ctx, p.ID))(t); got.Generation != 2 {
		t.Fatalf("generation %d, want 2", got.Generation)
	}
}

func testConcurrentNoRV(t *testing.T, s *service.Service) {
	ctx := Ctx(Alice)
	p := NewPool(t, s, NewCluster(t, s, Alice, "prod"), "workers")
	for _, err := range parallel(50, func(i int) error {
		_, err := s.UpdateNodePool(ctx, p.ID, service.Update{Spec: count(100 + i)})
		return err
	}) {
		if err != nil {
			t.Fatalf("update: %v", err)
		}
	}
	if got := ok(s.NodePool(ctx, p.ID))(t); got.Generation != 51 {
		t.Fatalf("generation %d after 50 changes, want 51", got.Generation)
	}
	evs := ok(s.Store.Events(context.Background(), 0, 1000))(t)
	gens := map[int64]bool{}
	for _, e := range evs {
		if e.Type == kpool.EventNodePoolUpdated {
			if gens[e.Generation] {
				t.Fatalf("two updates share generation %d", e.Generation)
			}
			gens[e.Generation] = true
		}
	}
	if len(gens) != 50 {
		t.Fatalf("%d update events, want 50", len(gens))
	}
}

func testRollback(t *testing.T, s *service.Service) {
	c := NewCluster(t, s, Alice, "prod")
	before := ok(s.Store.Events(context.Background(), 0, 1000))(t)
	boom := errors.New("boom")
	err := s.Store.Write(context.Background(), func(tx kpool.Tx) error {
		now := time.Now().UTC().Truncate(time.Microsecond)
		p := &kpool.NodePool{ID: "00000000-0000-4000-8000-000000000001", Name: "half", ClusterID: c.ID, CreatedBy: Alice,
			Generation: 1, CreatedAt: now, UpdatedAt: now, Status: kpool.NodePoolStatus{Phase: kpool.PhasePending, Health: kpool.HealthUnknown}}
		if err := tx.CreateNodePool(p, c.Generation); err != nil {
			return err
		}
		if err := tx.AddEvent(&kpool.Event{Type: kpool.EventNodePoolCreated, ObjectID: p.ID, ClusterID: c.ID, Generation: 1, Actor: Alice, CreatedAt: now}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Write returned %v, want the function's error", err)
	}
	_, err = s.Store.NodePool(context.Background(), "00000000-0000-4000-8000-000000000001")
	wantCode(t, err, kpool.CodeNotFound)
	after := ok(s.Store.Events(context.Background(), 0, 1000))(t)
	if len(after) != len(before) {
		t.Fatalf("a rolled-back write left %d events", len(after)-len(before))
	}
}

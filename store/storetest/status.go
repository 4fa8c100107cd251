package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
)

func testStatusReports(t *testing.T, s *service.Service) {
	ctx, ctl := Ctx(Alice), Ctx(Controller)
	p := NewPool(t, s, NewCluster(t, s, Alice, "prod"), "workers")
	if p.Status.Phase != kpool.PhasePending {
		t.Fatalf("new pool phase %s, want Pending", p.Status.Phase)
	}
	_, err := s.ReportNodePoolStatus(ctl, p.ID, ready("gcp-nodepool-controller", 2))
	wantCode(t, err, kpool.CodeValidation) // ahead of generation 1

	doc := ok(s.ReportNodePoolStatus(ctl, p.ID, kpool.ControllerStatus{ControllerName: "gcp-nodepool-controller", ObservedGeneration: 1,
		Conditions: []kpool.Condition{{Type: "Ready", Status: "False", Reason: "Creating"}, {Type: "Progressing", Status: "True"}},
		Metadata:   json.RawMessage(`{"active_nodes":0,"desired_nodes":3}`)}))(t)
	if doc.Status.Phase != kpool.PhaseProvisioning {
		t.Fatalf("phase %s, want Provisioning", doc.Status.Phase)
	}
	doc = ok(s.ReportNodePoolStatus(ctl, p.ID, ready("gcp-nodepool-controller", 1)))(t)
	if doc.Status.Phase != kpool.PhaseReady || doc.Status.ObservedGeneration != 1 || doc.Status.Health != kpool.HealthHealthy {
		t.Fatalf("after ready report: %+v", doc.Status)
	}
	// A spec change makes the pool not Ready until the controller catches up.
	up := ok(s.UpdateNodePool(ctx, p.ID, service.Update{Spec: count(6)}))(t)
	if up.Status.Phase != kpool.PhaseUpdating || up.Status.ObservedGeneration != 1 {
		t.Fatalf("after spec change: %+v", up.Status)
	}
	ok(s.ReportNodePoolStatus(ctl, p.ID, ready("gcp-nodepool-controller", 2)))(t)
	// A stale report is ignored and says so.
	doc = ok(s.ReportNodePoolStatus(ctl, p.ID, kpool.ControllerStatus{ControllerName: "gcp-nodepool-controller", ObservedGeneration: 1}))(t)
	if doc.Ignored == "" || doc.Status.Phase != kpool.PhaseReady || doc.Status.ObservedGeneration != 2 {
		t.Fatalf("stale report: %+v", doc)
	}
	st := ok(s.NodePoolStatus(ctx, p.ID))(t)
	if len(st.ControllerStatus) != 1 || string(st.ControllerStatus[0].Metadata) != "{}" || st.ControllerStatus[0].ObservedGeneration != 2 {
		t.Fatalf("reports: %+v", st.ControllerStatus)
	}
	// A second controller still at an older generation holds the aggregate back.
	ok(s.ReportNodePoolStatus(ctl, p.ID, ready("dns-controller", 1)))(t)
	st = ok(s.NodePoolStatus(ctx, p.ID))(t)
	if st.Status.Phase != kpool.PhaseUpdating || st.Status.ObservedGeneration != 1 || len(st.ControllerStatus) != 2 {
		t.Fatalf("two controllers: %+v", st.Status)
	}
}

func testTwoPhaseDelete(t *testing.T, s *service.Service) {
	ctx, ctl := Ctx(Alice), Ctx(Controller)
	c := NewCluster(t, s, Alice, "prod")
	p := NewPool(t, s, c, "workers")
	ok(s.ReportNodePoolStatus(ctl, p.ID, ready("gcp-nodepool-controller", 1)))(t)
	out, gone, err := s.DeleteNodePool(ctx, p.ID, service.Delete{})
	if err != nil || gone || out.Status.Phase != kpool.PhaseDeleting || out.DeletionTimestamp == nil {
		t.Fatalf("delete of a reported pool: gone=%v err=%v status=%+v", gone, err, out)
	}
	// Still listed, name still taken, spec frozen.
	if l := ok(s.NodePools(ctx, service.ListOptions{Phase: kpool.PhaseDeleting}))(t); l.Total != 1 {
		t.Fatalf("deleting pools listed: %d", l.Total)
	}
	_, err = s.CreateNodePool(ctx, service.NodePoolCreate{Name: "workers", ClusterID: c.ID, Spec: json.RawMessage(GCPPool)})
	wantCode(t, err, kpool.CodeConflict)
	_, err = s.UpdateNodePool(ctx, p.ID, service.Update{Spec: count(1)})
	wantCode(t, err, kpool.CodeConflict)
	// Deleting again is accepted and changes nothing.
	if _, gone, err := s.DeleteNodePool(ctx, p.ID, service.Delete{}); err != nil || gone {
		t.Fatalf("second delete: gone=%v err=%v", gone, err)
	}
	doc := ok(s.ReportNodePoolStatus(ctl, p.ID, kpool.ControllerStatus{ControllerName: "gcp-nodepool-controller", ObservedGeneration: 1,
		Conditions: []kpool.Condition{{Type: kpool.ConditionDeleted, Status: kpool.ConditionTrue, Reason: "DeletedAtProvider"}}}))(t)
	if !doc.Deleted {
		t.Fatalf("final report did not delete: %+v", doc)
	}
	_, err = s.NodePool(ctx, p.ID)
	wantCode(t, err, kpool.CodeNotFound)
	NewPool(t, s, c, "workers")
}

func testClusterForceDelete(t *testing.T, s *service.Service) {
	ctx, ctl := Ctx(Alice), Ctx(Controller)
	c := NewCluster(t, s, Alice, "prod")
	quiet := NewPool(t, s, c, "quiet")
	busy := NewPool(t, s, c, "busy")
	ok(s.ReportNodePoolStatus(ctl, busy.ID, ready("gcp-nodepool-controller", 1)))(t)

	_, _, err := s.DeleteCluster(ctx, c.ID, service.Delete{Force: false})
	wantCode(t, err, kpool.CodeConflict)
	out, gone, err := s.DeleteCluster(ctx, c.ID, service.Delete{Force: true})
	if err != nil || gone || out.Status.Phase != kpool.ClusterDeleting {
		t.Fatalf("force delete: gone=%v err=%v cluster=%+v", gone, err, out)
	}
	_, err = s.NodePool(ctx, quiet.ID)
	wantCode(t, err, kpool.CodeNotFound)
	if p := ok(s.NodePool(ctx, busy.ID))(t); p.Status.Phase != kpool.PhaseDeleting {
		t.Fatalf("reported pool phase %s, want Deleting", p.Status.Phase)
	}
	_, err = s.CreateNodePool(ctx, service.NodePoolCreate{Name: "late", ClusterID: c.ID, Spec: json.RawMessage(GCPPool)})
	wantCode(t, err, kpool.CodeConflict)
	ok(s.ReportNodePoolStatus(ctl, busy.ID, kpool.ControllerStatus{ControllerName: "gcp-nodepool-controller", ObservedGeneration: 1,
		Conditions: []kpool.Condition{{Type: kpool.ConditionDeleted, Status: kpool.ConditionTrue}}}))(t)
	_, err = s.Cluster(ctx, c.ID)
	wantCode(t, err, kpool.CodeNotFound) // the cluster went with its last pool
	evs := ok(s.Store.Events(context.Background(), 0, 100))(t)
	if last := evs[len(evs)-1]; last.Type != kpool.EventClusterDeleted || last.ObjectID != c.ID {
		t.Fatalf("last event %+v, want cluster.deleted", last)
	}
}

func testTimes(t *testing.T, s *service.Service) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 891011000, time.UTC)
	s.Now = func() time.Time { return at }
	p := NewPool(t, s, NewCluster(t, s, Alice, "prod"), "workers")
	got := ok(s.NodePool(Ctx(Alice), p.ID))(t)
	if !got.CreatedAt.Equal(at) || !got.UpdatedAt.Equal(at) || got.CreatedAt.Location() != time.UTC {
		t.Fatalf("times: created %v updated %v, want %v", got.CreatedAt, got.UpdatedAt, at)
	}
}

func testLeases(t *testing.T, s *service.Service) {
	ctx := context.Background()
	st := s.Store
	held := ok(st.AcquireLease(ctx, "controllers", "a", time.Minute))(t)
	if !held {
		t.Fatal("a free lease was not taken")
	}
	if ok(st.AcquireLease(ctx, "controllers", "b", time.Minute))(t) {
		t.Fatal("b took a lease a holds")
	}
	if !ok(st.AcquireLease(ctx, "controllers", "a", time.Minute))(t) {
		t.Fatal("a could not renew its lease")
	}
	if !ok(st.AcquireLease(ctx, "other", "b", time.Minute))(t) {
		t.Fatal("leases of other names are independent")
	}
	// An expired lease goes to whoever asks.
	if !ok(st.AcquireLease(ctx, "controllers", "a", -time.Second))(t) {
		t.Fatal("a renewing into the past")
	}
	if !ok(st.AcquireLease(ctx, "controllers", "b", time.Minute))(t) {
		t.Fatal("b could not take an expired lease")
	}
	if ok(st.AcquireLease(ctx, "controllers", "a", time.Minute))(t) {
		t.Fatal("a took back b's lease")
	}
	// A released lease is free at once.
	if err := st.ReleaseLease(ctx, "controllers", "b"); err != nil {
		t.Fatal(err)
	}
	if !ok(st.AcquireLease(ctx, "controllers", "a", time.Minute))(t) {
		t.Fatal("a could not take a released lease")
	}
	if err := st.ReleaseLease(ctx, "controllers", "b"); err != nil { // not b's: no effect
		t.Fatal(err)
	}
	if ok(st.AcquireLease(ctx, "controllers", "b", time.Minute))(t) {
		t.Fatal("b's release of a's lease freed it")
	}
}

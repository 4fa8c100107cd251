package storetest

import (
	"testing"

	"github.com/kpool/kpool"
)

// testClusterStatus: controllers report a cluster's conditions; a report
// that changes nothing writes nothing; a condition keeps its transition
// time while its status holds; the generation never moves; each write is
// in the audit trail; users may not report.
func testClusterStatus(t *testing.T, s *kpool.Service) {
	ctl := Ctx(Controller)
	c := NewCluster(t, s, Alice, "prod")
	down := kpool.Condition{Type: kpool.ConditionReachable, Status: kpool.ConditionFalse, Reason: kpool.ReasonNoCredential, Message: "no credential"}
	_, err := s.ReportClusterStatus(Ctx(Alice), c.ID, kpool.ClusterReport{Conditions: []kpool.Condition{down}})
	wantCode(t, err, kpool.CodeForbidden)
	_, err = s.ReportClusterStatus(ctl, c.ID, kpool.ClusterReport{Conditions: []kpool.Condition{{Type: kpool.ConditionReachable, Status: "maybe"}}})
	wantCode(t, err, kpool.CodeValidation)

	got := ok(s.ReportClusterStatus(ctl, c.ID, kpool.ClusterReport{Conditions: []kpool.Condition{down}}))(t)
	if got.Status.Unreachable() != "no credential" || got.Generation != c.Generation || got.ResourceVersion == c.ResourceVersion {
		t.Fatalf("after the report: %+v (generation %d, resource version %s)", got.Status, got.Generation, got.ResourceVersion)
	}
	since := got.Status.Condition(kpool.ConditionReachable).LastTransitionTime
	if since.IsZero() || got.Status.Phase != kpool.ClusterActive {
		t.Fatalf("after the report: %+v", got.Status)
	}
	same := ok(s.ReportClusterStatus(ctl, c.ID, kpool.ClusterReport{Conditions: []kpool.Condition{down}}))(t)
	if same.ResourceVersion != got.ResourceVersion {
		t.Fatal("a report that changes nothing wrote the cluster")
	}
	down.Message = "still no credential"
	again := ok(s.ReportClusterStatus(ctl, c.ID, kpool.ClusterReport{Conditions: []kpool.Condition{down}}))(t)
	if at := again.Status.Condition(kpool.ConditionReachable).LastTransitionTime; !at.Equal(since) {
		t.Fatalf("the transition time moved from %v to %v while the status held", since, at)
	}
	up := kpool.Condition{Type: kpool.ConditionReachable, Status: kpool.ConditionTrue, Reason: "Listed"}
	back := ok(s.ReportClusterStatus(ctl, c.ID, kpool.ClusterReport{Conditions: []kpool.Condition{up}}))(t)
	if back.Status.Unreachable() != "" || len(back.Status.Conditions) != 1 {
		t.Fatalf("after Reachable=True: %+v", back.Status)
	}
	read := ok(s.Cluster(Ctx(Alice), c.ID))(t)
	if read.ResourceVersion != back.ResourceVersion || read.Status.Condition(kpool.ConditionReachable).Status != kpool.ConditionTrue {
		t.Fatalf("read back: %+v", read.Status)
	}
	evs := ok(s.Events(Ctx(Alice), kpool.EventQuery{ClusterID: c.ID, Type: kpool.EventClusterStatus}))(t)
	if len(evs.Items) != 3 || evs.Items[0].Detail != "Reachable=True (Listed)" || evs.Items[0].Actor != Controller {
		t.Fatalf("audit trail: %+v", evs.Items)
	}
}

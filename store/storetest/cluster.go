package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/audit"
	"github.com/kpool/kpool/service"
)

// testClusterStatus: controllers report a cluster's conditions; a report
// that changes nothing writes nothing; a condition keeps its transition
// time while its status holds; the generation never moves; each write is
// in the audit trail; users may not report.
func testClusterStatus(t *testing.T, s *service.Service) {
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
	evs := ok(s.Events(Ctx(Alice), audit.Query{ClusterID: c.ID, Type: kpool.EventClusterStatus}))(t)
	if len(evs.Items) != 3 || evs.Items[0].Detail != "Reachable=True (Listed)" || evs.Items[0].Actor != Controller {
		t.Fatalf("audit trail: %+v", evs.Items)
	}
}

// testCloudClusterOnce: a cloud cluster is registered once. A second
// registration of it is a CONFLICT that names the first only to a caller
// who may see it; under 20 concurrent attempts exactly one wins; the same
// cloud name at another endpoint is another cluster; an update that would
// make a registration another's cloud cluster is refused; a deleted
// registration frees the cloud cluster; platforms without clusters of
// their own (k3s) are never a conflict.
func testCloudClusterOnce(t *testing.T, s *service.Service) {
	spec := json.RawMessage(GCPCluster)
	first := ok(s.CreateCluster(Ctx(Alice), service.ClusterCreate{Name: "prod", Spec: spec}))(t)
	_, err := s.CreateCluster(Ctx(Bob), service.ClusterCreate{Name: "prod", Spec: spec})
	wantCode(t, err, kpool.CodeConflict)
	if strings.Contains(err.Error(), first.ID) || strings.Contains(err.Error(), Alice) {
		t.Fatalf("the conflict tells bob who registered it: %v", err)
	}
	_, err = s.CreateCluster(Ctx(Alice), service.ClusterCreate{Name: "again", Spec: spec})
	if wantCode(t, err, kpool.CodeConflict); !strings.Contains(err.Error(), first.ID) {
		t.Fatalf("the conflict does not tell alice her own registration: %v", err)
	}
	// The same cloud name at another endpoint is another cloud; moving it
	// to the first one's endpoint is refused.
	elsewhere := json.RawMessage(`{"endpoint":"https://gke.example.com",` + GCPCluster[1:])
	sovereign := ok(s.CreateCluster(Ctx(Admin), service.ClusterCreate{Name: "sovereign", Spec: elsewhere}))(t)
	_, err = s.UpdateCluster(Ctx(Admin), sovereign.ID, service.Update{Patch: true, Spec: json.RawMessage(`{"endpoint":null}`)})
	wantCode(t, err, kpool.CodeConflict)
	if got := ok(s.Cluster(Ctx(Admin), sovereign.ID))(t); got.Spec.Endpoint != "https://gke.example.com" || got.ResourceVersion != sovereign.ResourceVersion {
		t.Fatalf("a refused update changed the cluster: %+v", got.Spec)
	}

	// Twenty at once: one wins.
	race := ClusterSpec(Alice, "race")
	errs := parallel(20, func(i int) error {
		_, err := s.CreateCluster(Ctx(fmt.Sprintf("user%d@example.com", i)), service.ClusterCreate{Name: "race", Spec: race})
		return err
	})
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
		} else if kpool.ErrorCode(err) != kpool.CodeConflict {
			t.Fatalf("a concurrent registration: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d of 20 concurrent registrations of one cloud cluster won, want 1", won)
	}

	// A deleted registration frees its cloud cluster; k3s never conflicts.
	ok2 := func(c *kpool.Cluster, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, gone, err := s.DeleteCluster(Ctx(Alice), first.ID, service.Delete{Force: false})
	if err != nil || !gone {
		t.Fatalf("delete: %v %v", gone, err)
	}
	ok2(s.CreateCluster(Ctx(Bob), service.ClusterCreate{Name: "prod", Spec: spec}))
	k3s := json.RawMessage(`{"platform":{"type":"k3s","k3s":{}}}`)
	ok2(s.CreateCluster(Ctx(Alice), service.ClusterCreate{Name: "edge-1", Spec: k3s}))
	ok2(s.CreateCluster(Ctx(Alice), service.ClusterCreate{Name: "edge-2", Spec: k3s}))
}

// testObservedPoolsRefuseWrites: a pool kpool only observes answers a
// change with a CONFLICT naming spec.management (it would not change the
// cloud), and takes one that also sets management: manage (a takeover);
// it may always be deleted (kpool abandons it at the provider).
func testObservedPoolsRefuseWrites(t *testing.T, s *service.Service) {
	c := NewCluster(t, s, Alice, "imports")
	ok(s.UpdateCluster(Ctx(Alice), c.ID, service.Update{Patch: true, Spec: json.RawMessage(`{"importPools":true}`)}))(t)
	var spec kpool.NodePoolSpec
	if err := json.Unmarshal([]byte(GCPPool), &spec); err != nil {
		t.Fatal(err)
	}
	p := ok(s.ImportNodePool(Ctx(Controller), c.ID, "legacy", "legacy", spec))(t)
	_, err := s.UpdateNodePool(Ctx(Alice), p.ID, service.Update{Patch: true, Spec: count(5)})
	var e *kpool.Error
	if !errors.As(err, &e) || e.Code != kpool.CodeConflict || len(e.Fields) != 1 || e.Fields[0].Field != "spec.management" {
		t.Fatalf("scaling an observed pool: %v, want CONFLICT on spec.management", err)
	}
	if got := ok(s.NodePool(Ctx(Alice), p.ID))(t); got.Generation != 1 || got.Spec.Count() != p.Spec.Count() {
		t.Fatalf("a refused change was stored: %+v", got.Spec)
	}
	taken := ok(s.UpdateNodePool(Ctx(Alice), p.ID, service.Update{Patch: true, Spec: json.RawMessage(`{"management":"manage","nodeCount":5}`)}))(t)
	if taken.Spec.Observed() || taken.Spec.Count() != 5 || taken.Generation != 2 {
		t.Fatalf("the takeover: %+v", taken.Spec)
	}
	q := ok(s.ImportNodePool(Ctx(Controller), c.ID, "other", "other", spec))(t)
	if _, _, err := s.DeleteNodePool(Ctx(Alice), q.ID, service.Delete{}); err != nil {
		t.Fatalf("deleting an observed pool: %v", err)
	}
}

// testReportsScrubbed: what a provider echoed into a report (a bearer
// token, an API key, a signature) is hidden before the report is stored,
// in conditions and metadata, for pools and clusters alike.
func testReportsScrubbed(t *testing.T, s *service.Service) {
	const bearer = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJrcG9vbCJ9.c2lnbmF0dXJlLXNlY3JldA"
	const apiKey = "civo-api-key-3f9a1c2b7d4e5f60"
	leak := "InvalidParameter: header was Bearer " + bearer + "; x-api-key=" + apiKey
	c := NewCluster(t, s, Alice, "echo")
	p := NewPool(t, s, c, "web")
	meta := json.RawMessage(`{"last_error":` + strconvQuote(leak) + `,"nested":{"list":[` + strconvQuote("Authorization: bearer "+apiKey) + `]}}`)
	doc := ok(s.ReportNodePoolStatus(Ctx(Controller), p.ID, kpool.ControllerStatus{ControllerName: "gcp-nodepool-controller", ObservedGeneration: 1,
		Conditions: []kpool.Condition{{Type: kpool.ConditionReady, Status: kpool.ConditionFalse, Reason: "ProviderRefused", Message: leak}}, Metadata: meta}))(t)
	read := ok(s.NodePoolStatus(Ctx(Alice), p.ID))(t)
	cl := ok(s.ReportClusterStatus(Ctx(Controller), c.ID, kpool.ClusterReport{Conditions: []kpool.Condition{
		{Type: kpool.ConditionReachable, Status: kpool.ConditionFalse, Reason: kpool.ReasonCredentialRefused, Message: leak}}}))(t)
	all, _ := json.Marshal([]any{doc, read, cl, ok(s.Cluster(Ctx(Alice), c.ID))(t)})
	for _, secret := range []string{bearer, apiKey, "c2lnbmF0dXJlLXNlY3JldA"} {
		if strings.Contains(string(all), secret) {
			t.Fatalf("a report stored %q: %s", secret, all)
		}
	}
	if !strings.Contains(string(all), "InvalidParameter: header was Bearer xxxxx") {
		t.Fatalf("the scrubbed report lost the provider's words: %s", all)
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

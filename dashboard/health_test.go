package dashboard

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
)

// TestClusterHealth: the fleet page counts the clusters kpool cannot reach
// and says why on each (the reason and the message), or that one was not
// reached yet; the cluster page says the same with the condition's time,
// or since when the cluster is reachable.
func TestClusterHealth(t *testing.T) {
	h, ctx := fleetOf(t, 2, 1)
	list, err := h.o.Service.Clusters(ctx, service.ListOptions{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	a, b := list.Items[0], list.Items[1]
	clusterPage := func(id string) string {
		r := httptest.NewRequest(http.MethodGet, "/clusters/"+id, nil).WithContext(ctx)
		r.SetPathValue("id", id)
		w := httptest.NewRecorder()
		h.cluster(w, r)
		if w.Code != http.StatusOK {
			t.Fatal(w.Code)
		}
		return w.Body.String()
	}
	if body := get(h.fleet, ctx, "/").Body.String(); strings.Count(body, "not reached yet") != 2 || strings.Contains(body, "clusters unreachable") {
		t.Fatal("the fleet page does not say both clusters were not reached yet, or counts one unreachable")
	}
	if body := clusterPage(a.ID); !strings.Contains(body, "Not reached yet") {
		t.Fatal("the cluster page does not say the cluster was not reached yet")
	}
	controller := kpool.WithIdentity(context.Background(), &kpool.Identity{Email: "controllers@kpool.internal", Controller: true})
	report := func(id, status, reason, msg string) {
		cond := kpool.Condition{Type: kpool.ConditionReachable, Status: status, Reason: reason, Message: msg}
		if _, err := h.o.Service.ReportClusterStatus(controller, id, kpool.ClusterReport{Conditions: []kpool.Condition{cond}}); err != nil {
			t.Fatal(err)
		}
	}
	report(a.ID, kpool.ConditionTrue, "Listed", "")
	report(b.ID, kpool.ConditionFalse, kpool.ReasonNoCredential, "no credential for this cluster")
	tests := []struct {
		page string
		want []string
		not  []string
	}{
		{get(h.fleet, ctx, "/").Body.String(),
			[]string{"⚠ 1 clusters unreachable", "⚠ kpool cannot reach this cluster (NoCredential): no credential for this cluster"},
			[]string{"not reached yet"}},
		{clusterPage(a.ID), []string{"Reachable since "}, []string{"cannot reach", "Not reached yet"}},
		{clusterPage(b.ID), []string{"⚠ kpool cannot reach this cluster (NoCredential, since ", "): no credential for this cluster. Its pools wait for it."}, []string{"Reachable since"}},
	}
	for i, tc := range tests {
		for _, w := range tc.want {
			if !strings.Contains(tc.page, w) {
				t.Errorf("page %d: no %q", i, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(tc.page, n) {
				t.Errorf("page %d: %q", i, n)
			}
		}
	}
}

package dashboard

import (
	"context"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
)

// TestClusterEvents: the cluster page lists the cluster's events, and so
// says why it became unreachable and when it was reachable again.
func TestClusterEvents(t *testing.T) {
	h, ctx := fleetOf(t, 1, 1)
	clusters, err := h.o.Service.Clusters(ctx, service.ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	id := clusters.Items[0].ID
	controller := kpool.WithIdentity(context.Background(), &kpool.Identity{Email: "controllers@kpool.internal", Controller: true})
	for _, cond := range []kpool.Condition{
		{Type: kpool.ConditionReachable, Status: kpool.ConditionFalse, Reason: kpool.ReasonCredentialRefused, Message: "the identity may not list pools"},
		{Type: kpool.ConditionReachable, Status: kpool.ConditionTrue, Reason: "Listed"},
	} {
		if _, err := h.o.Service.ReportClusterStatus(controller, id, kpool.ClusterReport{Conditions: []kpool.Condition{cond}}); err != nil {
			t.Fatal(err)
		}
	}
	r := httptest.NewRequest(http.MethodGet, "/clusters/"+id, nil).WithContext(ctx)
	r.SetPathValue("id", id)
	w := httptest.NewRecorder()
	h.cluster(w, r)
	body := html.UnescapeString(w.Body.String())
	for _, want := range []string{"Cluster events", "cluster.status", "Reachable=False (CredentialRefused): the identity may not list pools",
		"Reachable=True (Listed)", "cluster.created"} {
		if w.Code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("the cluster page (%d) has no %q", w.Code, want)
		}
	}
}

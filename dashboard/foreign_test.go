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

// TestClusterShowsForeignPools: the cluster page lists the pools at the
// provider that another kpool owns, with their owner's mark, and the
// unmarked ones an import may take; a cluster without any says nothing.
func TestClusterShowsForeignPools(t *testing.T) {
	h, ctx := fleetOf(t, 1, 1)
	clusters, err := h.o.Service.Clusters(ctx, service.ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	id := clusters.Items[0].ID
	page := func() string {
		r := httptest.NewRequest(http.MethodGet, "/clusters/"+id, nil).WithContext(ctx)
		r.SetPathValue("id", id)
		w := httptest.NewRecorder()
		h.cluster(w, r)
		if w.Code != http.StatusOK {
			t.Fatal(w.Code)
		}
		return w.Body.String()
	}
	if body := page(); strings.Contains(body, "owned by another kpool") || strings.Contains(body, "unmarked") {
		t.Fatal("a cluster without foreign pools lists some")
	}
	controller := kpool.WithIdentity(context.Background(), &kpool.Identity{Email: "controllers@kpool.internal", Controller: true})
	if _, err := h.o.Service.ReportClusterStatus(controller, id, kpool.ClusterReport{
		Foreign:  []kpool.ForeignPool{{ProviderName: "web", Installation: "fedcba9876543210fedcba9876543210", Pool: "01950000-0000-7000-8000-0000000000ff"}},
		Unmarked: []kpool.UnmarkedPool{{ProviderName: "legacy"}},
	}); err != nil {
		t.Fatal(err)
	}
	body := page()
	for _, want := range []string{"At the provider, owned by another kpool", "<code>web</code>", "fedcba9876543210fedcba9876543210",
		"01950000-0000-7000-8000-0000000000ff", "At the provider, unmarked", "<code>legacy</code>"} {
		if !strings.Contains(body, want) {
			t.Errorf("the cluster page has no %q", want)
		}
	}
}

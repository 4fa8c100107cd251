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

// TestDriftNotice: a cluster whose drift interval the controllers stretched
// (its status's drift schedule, written maybe by another process) says so
// on the fleet page and its own; once cleared, neither does.
func TestDriftNotice(t *testing.T) {
	h, ctx := fleetOf(t, 1, 1)
	list, err := h.o.Service.Clusters(ctx, service.ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	id := list.Items[0].ID
	page := func() string {
		r := httptest.NewRequest(http.MethodGet, "/clusters/"+id, nil).WithContext(ctx)
		r.SetPathValue("id", id)
		w := httptest.NewRecorder()
		h.cluster(w, r)
		return html.UnescapeString(w.Body.String())
	}
	controller := kpool.WithIdentity(context.Background(), &kpool.Identity{Email: "controllers@kpool.internal", Controller: true})
	report := func(d kpool.DriftSchedule) {
		if _, err := h.o.Service.ReportClusterStatus(controller, id, kpool.ClusterReport{Drift: &d}); err != nil {
			t.Fatal(err)
		}
	}
	report(kpool.DriftSchedule{EverySeconds: 180, ConfiguredSeconds: 60, Account: "p/acct-1/r1"})
	want := "drift checked every 3m (stretched from 1m: account p/acct-1/r1's read budget)"
	fleet := html.UnescapeString(get(h.fleet, ctx, "/").Body.String())
	if !strings.Contains(fleet, want) || !strings.Contains(page(), want) {
		t.Fatalf("the pages do not say %q", want)
	}
	report(kpool.DriftSchedule{})
	fleet = html.UnescapeString(get(h.fleet, ctx, "/").Body.String())
	// (The cluster's events still tell of the schedule, as history.)
	if strings.Contains(fleet, "⏱") || strings.Contains(page(), "⏱") {
		t.Fatal("a cleared drift schedule is still shown")
	}
}

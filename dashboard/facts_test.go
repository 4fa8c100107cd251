package dashboard

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
)

// TestClusterOffers: the cluster page says what the cluster's provider
// offers (or that kpool has not learnt it yet), and the create form
// offers the machine types by name.
func TestClusterOffers(t *testing.T) {
	h, ctx := fleetOf(t, 1, 1)
	clusters, _ := h.o.Service.Clusters(ctx, service.ListOptions{Limit: 1})
	id := clusters.Items[0].ID
	page := func(handler http.HandlerFunc, url string) string {
		r := httptest.NewRequest(http.MethodGet, url, nil).WithContext(ctx)
		r.SetPathValue("id", id)
		w := httptest.NewRecorder()
		handler(w, r)
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d", url, w.Code)
		}
		return w.Body.String()
	}
	if body := page(h.cluster, "/clusters/"+id); !strings.Contains(body, "Not learnt yet") {
		t.Fatal("the cluster page does not say its offers are not learnt yet")
	}
	controller := kpool.WithIdentity(context.Background(), &kpool.Identity{Email: "controllers@kpool.internal", Controller: true})
	err := h.o.Service.ReportClusterFacts(controller, id, &kpool.ClusterFacts{LearnedAt: time.Now(), Version: "1.31.2", Zones: []string{"1", "2", "3"},
		MachineTypes: []kpool.MachineType{{Name: "Standard_D4s_v5", CPUs: 4, MemoryMiB: 16384}, {Name: "Standard_NC6s_v3", CPUs: 6, MemoryMiB: 114688, GPUs: 1, Zones: []string{"1", "2"}, NoSpot: true}}})
	if err != nil {
		t.Fatal(err)
	}
	body := page(h.cluster, "/clusters/"+id)
	for _, want := range []string{"What this cluster offers", "Machine types (2)", "<code>Standard_NC6s_v3</code></td><td>6</td><td>114688</td><td>1</td><td>1, 2</td><td>no</td>", "zones 1, 2, 3"} {
		if !strings.Contains(body, want) {
			t.Errorf("cluster page: no %q", want)
		}
	}
	if form := page(h.newPool, "/clusters/"+id+"/new"); !strings.Contains(form, `list="machine-types"`) || !strings.Contains(form, `<option value="Standard_D4s_v5">4 CPUs, 16384 MiB</option>`) {
		t.Error("the create form does not offer the machine types")
	}
}

package dashboard

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kpool/kpool/service"
)

// TestLogicalPoolPages: the cluster page lists its logical pools (count,
// Ready, members), and a logical pool's page shows its members and the
// order in which it takes its offerings.
func TestLogicalPoolPages(t *testing.T) {
	h, ctx := fleetOf(t, 1, 0)
	clusters, _ := h.o.Service.Clusters(ctx, service.ListOptions{Limit: 1})
	id := clusters.Items[0].ID
	page := func(handler http.HandlerFunc, url string, values ...string) string {
		r := httptest.NewRequest(http.MethodGet, url, nil).WithContext(ctx)
		r.SetPathValue("id", id)
		for i := 0; i+1 < len(values); i += 2 {
			r.SetPathValue(values[i], values[i+1])
		}
		w := httptest.NewRecorder()
		handler(w, r)
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", url, w.Code, w.Body)
		}
		return w.Body.String()
	}
	if body := page(h.cluster, "/clusters/"+id); !strings.Contains(body, "No logical pools") {
		t.Error("the cluster page does not say it has no logical pools")
	}
	_, err := h.o.Service.CreateLogicalPool(ctx, service.LogicalPoolCreate{ClusterID: id, Name: "web", Spec: json.RawMessage(
		`{"nodeCount":6,"template":{"zones":["1","2","3"],"platform":{"azure":{"vmSize":"Standard_D4s_v5"}}},"fallbacks":[{"machineType":"Standard_D4as_v5"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	body := page(h.cluster, "/clusters/"+id)
	for _, want := range []string{"Logical pools", `href="/clusters/` + id + `/logicalpools/web"`, "<td>6</td>", "<td>3</td>"} {
		if !strings.Contains(body, want) {
			t.Errorf("cluster page: no %q", want)
		}
	}
	body = page(h.logicalPool, "/clusters/"+id+"/logicalpools/web", "name", "web")
	for _, want := range []string{"web-1", "web-3", "Standard_D4s_v5 in zones 1, 2, 3 <small>(preferred)</small>",
		"<li>Standard_D4as_v5 in zones 1, 2, 3</li>", "None: every offering asked for had capacity"} {
		if !strings.Contains(body, want) {
			t.Errorf("logical pool page: no %q", want)
		}
	}
}

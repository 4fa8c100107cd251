package dashboard

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
)

// TestReplacementPanel: a pool being replaced shows its replacement (step,
// from → to, the Ready nodes of each pool, what blocks it, its message)
// and a Rollback button, which goes once a rollback is asked; a pool with
// none shows no panel, and its edit form offers the replacement strategy.
func TestReplacementPanel(t *testing.T) {
	h, ctx := fleetOf(t, 1, 1)
	pools, err := h.o.Service.NodePools(ctx, service.ListOptions{Limit: 1})
	if err != nil || len(pools.Items) != 1 {
		t.Fatal(pools, err)
	}
	p := pools.Items[0]
	page := func() string {
		r := httptest.NewRequest(http.MethodGet, "/nodepools/"+p.ID, nil).WithContext(ctx)
		r.SetPathValue("id", p.ID)
		w := httptest.NewRecorder()
		h.pool(w, r)
		if w.Code != http.StatusOK {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
		return w.Body.String()
	}
	body := page()
	if strings.Contains(body, `id="replacement"`) || !strings.Contains(body, `data-was="Refuse"`) || !strings.Contains(body, `<option value="Refuse" selected>`) {
		t.Errorf("a pool with no replacement:\n%s", body)
	}

	controller := kpool.WithIdentity(context.Background(), &kpool.Identity{Email: "controllers@kpool.internal", Controller: true})
	var cs kpool.ControllerStatus
	if err := json.Unmarshal([]byte(`{"controller_name":"test-controller","observed_generation":1,"metadata":{"active_nodes":3,"desired_nodes":3,
		"replacement":{"generation":1,"step":"Draining","from":"`+p.ProviderName+`","to":"`+p.ProviderName+`r2","startedAt":"2026-01-02T03:04:05Z",
		"oldNodes":3,"newNodes":2,"blocking":["PodDisruptionBudget shop/web <allows no disruption>"],"message":"draining node 1 of 3"}}}`), &cs); err != nil {
		t.Fatal(err)
	}
	if _, err := h.o.Service.ReportNodePoolStatus(controller, p.ID, cs); err != nil {
		t.Fatal(err)
	}
	body = page()
	for _, want := range []string{`<section class="card replacement" id="replacement" data-step="Draining">`, `<strong id="replacement-step">Draining</strong>`,
		"<code>" + p.ProviderName + "</code> → <code>" + p.ProviderName + "r2</code>", "started 2026-01-02 03:04:05Z",
		`old pool <span id="replacement-old">3</span>, new pool <span id="replacement-new">2</span>`,
		"<li>PodDisruptionBudget shop/web &lt;allows no disruption&gt;</li>", `<p class="message" id="replacement-message">draining node 1 of 3</p>`,
		`<button type="button" class="danger" id="rollback">Roll back</button>`} {
		if !strings.Contains(body, want) {
			t.Errorf("replacement panel: no %q", want)
		}
	}
	if _, err := h.o.Service.RollbackNodePool(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	body = page()
	if !strings.Contains(body, `id="rollback-requested"`) || strings.Contains(body, `id="rollback"`) {
		t.Errorf("after the rollback was asked: the panel still offers it, or does not say so")
	}
}

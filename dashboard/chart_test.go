package dashboard

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/service"
)

// TestChart: the node counts as steps (a count holds until the next
// report, the last until now), with times on the x axis and counts on
// the y axis.
func TestChart(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		ps   []point
		now  time.Time
		want []string
	}{
		{"deleted behind kpool's back: 2 until the next report, then 0",
			[]point{{t0, 2, 2}, {t0.Add(2 * time.Minute), 0, 2}}, t0.Add(3 * time.Minute),
			[]string{`<polyline class="ready" points="0.0,10.0 400.0,10.0 400.0,120.0 600.0,120.0"/>`,
				`<polyline class="desired" points="0.0,10.0 400.0,10.0 400.0,10.0 600.0,10.0"/>`,
				`>10:00:00</text>`, `>10:01:30</text>`, `>10:03:00</text>`,
				`>10:00:00 → 10:03:00 UTC (3m0s)</text>`,
				`text-anchor="end">0</text>`, `text-anchor="end">1</text>`, `text-anchor="end">2</text>`,
				`aria-label="nodes over time from 10:00:00 to 10:03:00: 2 reports, now 0 of 2 ready"`}},
		{"a day of reports: hours on the axis",
			[]point{{t0, 3, 3}, {t0.Add(20 * time.Hour), 6, 6}}, t0.Add(24 * time.Hour),
			[]string{`>Nov 26 12:00</text>`, `>Nov 27 00:00</text>`, `>2026-11-26 10:00 → 2026-11-27 10:00 UTC (24h0m0s)</text>`,
				`<polyline class="ready" points="0.0,65.0 500.0,65.0 500.0,10.0 600.0,10.0"/>`,
				`text-anchor="end">0</text>`, `text-anchor="end">2</text>`, `text-anchor="end">4</text>`, `text-anchor="end">6</text>`}},
		{"reports a second apart: seconds on the axis", []point{{t0, 0, 2}, {t0.Add(time.Second), 2, 2}}, t0.Add(time.Second),
			[]string{`>10:00:00</text>`, `>10:00:01</text>`, `<polyline class="ready" points="0.0,120.0 600.0,120.0 600.0,10.0 600.0,10.0"/>`}},
		{"one report, just now", []point{{t0, 1, 1}}, t0,
			[]string{`<polyline class="ready" points="600.0,10.0 600.0,10.0"/>`, `>09:59:00 → 10:00:00 UTC (1m0s)</text>`}},
	} {
		got := string(chart(tc.ps, tc.now))
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: no %s in\n%s", tc.name, w, got)
			}
		}
	}
	if chart(nil, t0) != "" {
		t.Error("no reports: a chart")
	}
}

// TestPoolPageOrder: the change form comes right after the summary,
// before the chart, the spec and the events; the live fragment has both
// live parts and not the form (which keeps what the user typed).
func TestPoolPageOrder(t *testing.T) {
	h, ctx := fleetOf(t, 1, 1)
	pools, err := h.o.Service.NodePools(ctx, service.ListOptions{Limit: 1})
	if err != nil || len(pools.Items) != 1 {
		t.Fatal(pools, err)
	}
	id := pools.Items[0].ID
	page := func(query string) string {
		r := httptest.NewRequest(http.MethodGet, "/nodepools/"+id+query, nil).WithContext(ctx)
		r.SetPathValue("id", id)
		w := httptest.NewRecorder()
		h.pool(w, r)
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d", query, w.Code)
		}
		return w.Body.String()
	}
	body := page("")
	at := -1
	for _, mark := range []string{`class="summary"`, `<h2>Change this pool</h2>`, `id="edit-count"`, `<h2>Conditions</h2>`,
		`<h2>Nodes over time</h2>`, `<svg class="chart"`, `<h2>Spec</h2>`, `<h2>Audit events</h2>`} {
		i := strings.Index(body, mark)
		if i <= at {
			t.Fatalf("%s at %d, before what precedes it (%d)", mark, i, at)
		}
		at = i
	}
	frag := page("?fragment=main")
	if !strings.Contains(frag, `data-live="pool"`) || !strings.Contains(frag, `data-live-part id="pool-rest"`) ||
		strings.Contains(frag, `id="edit"`) || strings.Contains(frag, "<html") {
		t.Fatalf("the live fragment:\n%s", frag)
	}
}

package api

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kpool/kpool/store/testdb"
)

// TestHTTPMetrics: each request is counted and timed under the pattern of
// the route that took it (never its path, which holds ids), its method
// (OTHER for one HTTP does not define) and its status class.
func TestHTTPMetrics(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, testdb.SQLite)
	reg := prometheus.NewRegistry()
	m := NewHTTPMetrics(reg)
	a.server.Instrument(m)
	tests := []struct {
		method, path              string
		route, wantMethod, status string
	}{
		{"GET", "/api/v1/clusters", "/api/v1/clusters", "GET", "2xx"},
		{"GET", "/api/v1/nodepools/np-0123456789abcdef", "/api/v1/nodepools/{id}", "GET", "4xx"},
		{"DELETE", "/api/v1/clusters/cl-0123456789abcdef", "/api/v1/clusters/{id}", "DELETE", "4xx"},
		{"GET", "/api/v1/no-such-thing", "/", "GET", "4xx"},
		{"BREW", "/healthz", "/", "OTHER", "4xx"},
		{"GET", "/healthz", "/healthz", "GET", "2xx"},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			before := testutil.ToFloat64(m.Requests.WithLabelValues(tc.route, tc.wantMethod, tc.status))
			a.as(user, tc.method, tc.path, "")
			if n := testutil.ToFloat64(m.Requests.WithLabelValues(tc.route, tc.wantMethod, tc.status)); n != before+1 {
				t.Fatalf("kpool_http_requests_total{route=%q,method=%q,status=%q} = %v, want %v", tc.route, tc.wantMethod, tc.status, n, before+1)
			}
		})
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, s := range mf.GetMetric() {
			for _, l := range s.GetLabel() {
				if strings.Contains(l.GetValue(), "0123456789abcdef") {
					t.Errorf("%s has a label with a raw path: %s=%q", mf.GetName(), l.GetName(), l.GetValue())
				}
			}
		}
	}
	if n := testutil.CollectAndCount(m.Duration); n != testutil.CollectAndCount(m.Requests) {
		t.Fatalf("%d latency series for %d count series", n, testutil.CollectAndCount(m.Requests))
	}
}

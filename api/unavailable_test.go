package api

import (
	"net/http"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/store/testdb"
)

// TestDatabaseDown checks that a store that cannot reach its database is
// answered 503 UNAVAILABLE with Retry-After, on reads, writes and /readyz,
// not 500 INTERNAL.
func TestDatabaseDown(t *testing.T) {
	for name, open := range testdb.Stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a := newTestAPI(t, func(t testing.TB) kpool.Store {
				s := open(t)
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				return s
			})
			for _, c := range []struct{ method, path, body string }{
				{"GET", "/api/v1/clusters", ""},
				{"GET", "/api/v1/nodepools/550e8400-e29b-41d4-a716-446655440001", ""},
				{"POST", "/api/v1/clusters", `{"name":"c1","spec":` + gcpCluster + `}`},
				{"GET", "/readyz", ""},
			} {
				r := a.as(user, c.method, c.path, c.body)
				if r.status != http.StatusServiceUnavailable {
					t.Errorf("%s %s: %d %s, want 503", c.method, c.path, r.status, r.body)
					continue
				}
				if e := r.errorBody(t); e.Code != kpool.CodeUnavailable {
					t.Errorf("%s %s: code %s, want %s", c.method, c.path, e.Code, kpool.CodeUnavailable)
				}
				if got := r.header.Get("Retry-After"); got != RetryUnavailable {
					t.Errorf("%s %s: Retry-After %q, want %q", c.method, c.path, got, RetryUnavailable)
				}
			}
		})
	}
}

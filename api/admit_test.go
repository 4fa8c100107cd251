package api

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/store/testdb"
)

// TestAdmitBesideTheAPI: a handler served through Logged and charged with
// Admit (as the dashboard is) shares the API's buckets (per identity, per
// address without one), answers 429 with Retry-After, writes the API's
// access-log line naming the caller, and can still flush a stream.
func TestAdmitBesideTheAPI(t *testing.T) {
	c := &clock{t: time.Unix(1_000_000, 0)}
	l := NewLimiter(0.5, 2)
	l.now = c.now
	var logs lockedBuffer
	s := NewServer(service.New(testdb.SQLite(t), catalog.Registry()), nil, slog.New(slog.NewTextHandler(&logs, nil))).Limit(l)
	alice := &kpool.Identity{Email: "alice@example.com"}
	h := s.Logged(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var id *kpool.Identity
		if r.Header.Get("X-Who") == "alice" {
			id = alice
		}
		if !s.Admit(w, r, id) {
			return
		}
		if _, ok := w.(http.Flusher); !ok {
			t.Error("the logged writer hides http.Flusher")
		}
		_, _ = w.Write([]byte("page"))
	}))
	get := func(who string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("X-Who", who)
		h.ServeHTTP(w, r)
		return w
	}
	for _, tc := range []struct {
		who   string
		codes []int
	}{
		{"alice", []int{200, 200, 429}},
		{"", []int{200, 200, 429}}, // by address: a bucket of its own
	} {
		for i, want := range tc.codes {
			w := get(tc.who)
			if w.Code != want {
				t.Fatalf("%q request %d: %d, want %d", tc.who, i, w.Code, want)
			}
			if want == http.StatusTooManyRequests && (w.Header().Get("Retry-After") != "2" || !strings.Contains(w.Body.String(), kpool.CodeRateLimited)) {
				t.Errorf("%q: 429 with Retry-After %q, body %s", tc.who, w.Header().Get("Retry-After"), w.Body)
			}
		}
	}
	log := logs.String()
	for _, want := range []string{"msg=request method=GET path=/ status=200", "user=alice@example.com", "status=429"} {
		if !strings.Contains(log, want) {
			t.Errorf("access log has no %q:\n%s", want, log)
		}
	}
}

package sim_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kpool/kpool/cloudsim/sim"
)

// The router matches ServeMux's patterns, then picks the handler by the
// exact method; what matches nothing goes to the cloud's own answers.
func TestRouter(t *testing.T) {
	answer := func(what string) sim.Handler {
		return func(r *sim.Request) *sim.Reply {
			rep := sim.NewReply(http.StatusOK)
			rep.Header.Set("X-Route", what+" "+r.HTTP.PathValue("pool")+" "+r.HTTP.PathValue("rest"))
			return rep
		}
	}
	rt := sim.NewRouter(answer("not found"), answer("not allowed"))
	rt.Handle("GET /v1/pools/{pool}", answer("get"))
	rt.Handle("PUT /v1/pools/{pool}", answer("put"))
	rt.Handle("/v1/pools/{pool}/{rest...}", answer("any"))
	rt.Handle("POST /v1/pools", answer("create"))
	rt.Handle("/v1/pools", answer("other"))
	e := sim.New(sim.Options{}, sim.Protocol{Routes: rt.Serve})
	for _, tc := range []struct{ method, target, want string }{
		{"GET", "/v1/pools/a", "get a "},
		{"PUT", "/v1/pools/a", "put a "},
		{"HEAD", "/v1/pools/a", "not allowed a "},   // a GET pattern does not take HEAD
		{"DELETE", "/v1/pools/a", "not allowed a "}, // with the wildcards of the path
		{"DELETE", "/v1/pools/a/b/c", "any a b/c"},
		{"POST", "/v1/pools", "create  "},
		{"GET", "/v1/pools", "other  "},
		{"GET", "/v1/pools/a/", "get a "},             // the slashes at the ends are not matched
		{"GET", "/v1/pools/a%2Fb", "get a/b "},        // a wildcard is unescaped
		{"GET", "/v1/other", "not found  "},           // no pattern
		{"GET", "/v1//pools/a", "not found  "},        // ServeMux would redirect: no cloud does
		{"GET", "/v1/pools/a/../../x", "not found  "}, // likewise
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(tc.method, "http://h"+tc.target, nil)
		e.ServeHTTP(rec, req)
		if got := rec.Header().Get("X-Route"); rec.Code != http.StatusOK || got != tc.want {
			t.Errorf("%s %s: %d %q, want %q", tc.method, tc.target, rec.Code, got, tc.want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("a pattern registered twice did not panic")
		}
	}()
	rt.Handle("GET /v1/pools/{pool}", answer("again"))
}

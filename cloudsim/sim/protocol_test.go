package sim_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/cloudsim/sim"
)

// The engine runs a protocol's steps in their order: what a step refuses
// never reaches the next (an unauthenticated request takes no token, a
// throttled one is not checked), Bypass skips them all, and Finish marks
// every answer of the pipeline.
func TestProtocolOrder(t *testing.T) {
	var steps []string
	step := func(name string, refuse func(*sim.Request) bool, status int) sim.Handler {
		return func(r *sim.Request) *sim.Reply {
			steps = append(steps, name)
			if refuse(r) {
				return sim.NewReply(status)
			}
			return nil
		}
	}
	header := func(name string) func(*sim.Request) bool {
		return func(r *sim.Request) bool { return r.HTTP.Header.Get(name) != "" }
	}
	for _, noRetryAfter := range []bool{false, true} {
		clock := sim.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		e := sim.New(sim.Options{Clock: clock, RateLimit: 1, Burst: 1}, sim.Protocol{
			Tick:         func(time.Time) { steps = append(steps, "tick") },
			Bypass:       step("bypass", header("X-Other"), http.StatusTeapot),
			Authenticate: step("auth", header("X-Deny"), http.StatusUnauthorized),
			Check:        step("check", header("X-Bad"), http.StatusBadRequest),
			NoRetryAfter: noRetryAfter,
			Routes:       func(*sim.Request) *sim.Reply { steps = append(steps, "route"); return sim.NewReply(http.StatusOK) },
			Finish:       func(_ *sim.Request, rep *sim.Reply) { rep.Header.Set("X-Finished", "yes") },
		})
		for _, tc := range []struct {
			header      string
			status      int
			steps       string
			retryAfter  string
			finished    bool
			advanceSecs int
		}{
			{"X-Other", http.StatusTeapot, "tick bypass", "", false, 0},
			{"X-Deny", http.StatusUnauthorized, "tick bypass auth", "", true, 0},
			{"X-Bad", http.StatusBadRequest, "tick bypass auth check", "", true, 0}, // takes the token
			{"", http.StatusTooManyRequests, "tick bypass auth", "1", true, 0},
			{"", http.StatusOK, "tick bypass auth check route", "", true, 1},
		} {
			steps = nil
			clock.Advance(time.Duration(tc.advanceSecs) * time.Second)
			req := httptest.NewRequest(http.MethodGet, "/x", nil)
			if tc.header != "" {
				req.Header.Set(tc.header, "1")
			}
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			want := tc.retryAfter
			if noRetryAfter {
				want = ""
			}
			if got := strings.Join(steps, " "); rec.Code != tc.status || got != tc.steps ||
				rec.Header().Get("Retry-After") != want || (rec.Header().Get("X-Finished") != "") != tc.finished {
				t.Errorf("%q (NoRetryAfter %v): %d after %q, Retry-After %q, header %v; want %d after %q",
					tc.header, noRetryAfter, rec.Code, got, rec.Header().Get("Retry-After"), rec.Header(), tc.status, tc.steps)
			}
		}
	}
}

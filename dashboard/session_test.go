package dashboard

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/store/testdb"
)

// site is a dashboard on an SQLite store in token mode, served on a test
// server, with a token for owner.
type site struct {
	h      *Handler
	srv    *httptest.Server
	tokens kpool.TokenStore
	logs   *syncBuffer
}

// syncBuffer is a log handlers write to concurrently.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newSite serves a dashboard whose options o completes (store, access,
// profiles, log); wrap, when set, wraps the handler (the API's log).
func newSite(t *testing.T, o Options, wrap func(*service.Service, *auth.Access, http.Handler) http.Handler) *site {
	t.Helper()
	st := testdb.SQLite(t)
	s := &site{tokens: st.(kpool.TokenStore), logs: &syncBuffer{}}
	o.Service, o.Access, o.Profiles = service.New(st, catalog.Registry()), auth.NewTokenAccess(s.tokens), catalog.Registry()
	o.Log = slog.New(slog.NewTextHandler(s.logs, nil))
	s.h = New(o)
	var h http.Handler = s.h
	if wrap != nil {
		h = wrap(o.Service, o.Access, h)
	}
	s.srv = httptest.NewServer(h)
	t.Cleanup(s.srv.Close)
	return s
}

// token makes an API token for user and returns its id and secret.
func (s *site) token(t *testing.T, user string) (string, string) {
	t.Helper()
	tok, err := auth.CheckToken(auth.TokenRequest{User: user, Role: kpool.RoleUser}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	secret, hash := auth.NewTokenSecret()
	if err := s.tokens.CreateToken(t.Context(), tok, hash); err != nil {
		t.Fatal(err)
	}
	return tok.ID, secret
}

// do sends a request; headers are name, value pairs, and "cookie" sets
// the session cookie.
func (s *site) do(t *testing.T, method, path string, form url.Values, headers ...string) *http.Response {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(t.Context(), method, s.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "cookie" {
			req.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: headers[i+1]})
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestSafeNext: only a path on this site survives as the login's next.
func TestSafeNext(t *testing.T) {
	for _, tc := range []struct{ next, want string }{
		{"/", "/"},
		{"/clusters/x", "/clusters/x"},
		{"/?phase=Failed&q=web", "/?phase=Failed&q=web"},
		{"/nodepools/%3Cscript%3E", "/nodepools/%3Cscript%3E"},
		{"", "/"},
		{"clusters/x", "/"},
		{"//evil.example/", "/"},
		{"/\\evil.example/", "/"},
		{"/\t/evil.example/phish", "/"}, // browsers drop the tab: //evil.example
		{"/\n/evil.example", "/"},
		{"/%09/evil.example", "/"},
		{"/%5Cevil.example", "/"},
		{"/a//b", "/"},
		{"/x\x7f", "/"},
		{"/x\u0085", "/"},
		{"/\xff", "/"},
		{"https://evil.example/", "/"},
		{"javascript:alert(1)", "/"},
		{"/x#frag", "/"},
		{"/%zz", "/"},
	} {
		if got := safeNext(tc.next); got != tc.want {
			t.Errorf("safeNext(%q) = %q, want %q", tc.next, got, tc.want)
		}
	}
}

// TestSignInSameOrigin: a sign-in or sign-out another site's page posts is
// refused (login and logout CSRF); the dashboard's own form, which the
// browser marks same-origin, and a client that is no browser get in.
func TestSignInSameOrigin(t *testing.T) {
	s := newSite(t, Options{}, nil)
	_, secret := s.token(t, owner)
	form := url.Values{"token": {secret}, "next": {"/"}}
	for _, tc := range []struct {
		name    string
		path    string
		headers []string
		status  int
	}{
		{"login from another site", "/login", []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"login from a sibling site", "/login", []string{"Sec-Fetch-Site", "same-site"}, http.StatusForbidden},
		{"login with another Origin", "/login", []string{"Origin", "http://evil.example"}, http.StatusForbidden},
		{"login from the dashboard", "/login", []string{"Sec-Fetch-Site", "same-origin"}, http.StatusSeeOther},
		{"login from the dashboard, Origin", "/login", []string{"Origin", s.srv.URL}, http.StatusSeeOther},
		{"login without a browser", "/login", nil, http.StatusSeeOther},
		{"logout from another site", "/logout", []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"logout from the dashboard", "/logout", []string{"Sec-Fetch-Site", "same-origin"}, http.StatusSeeOther},
	} {
		resp := s.do(t, http.MethodPost, tc.path, form, tc.headers...)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s: %d, want %d", tc.name, resp.StatusCode, tc.status)
		}
		if tc.status == http.StatusForbidden && len(resp.Cookies()) != 0 {
			t.Errorf("%s: refused, yet sets %v", tc.name, resp.Cookies())
		}
	}
}

// TestFragmentOfPagesWithout: ?fragment=main on a page without a live
// part (login, an error, a form) answers the whole page, logging nothing.
func TestFragmentOfPagesWithout(t *testing.T) {
	s := newSite(t, Options{}, nil)
	_, secret := s.token(t, owner)
	for _, tc := range []struct {
		path, cookie string
		status       int
		want         string
	}{
		{"/login?fragment=main", "", http.StatusOK, `action="/login"`},
		{"/clusters/nope?fragment=main", secret, http.StatusNotFound, "not found"},
		{"/clusters/nope/new?fragment=main", secret, http.StatusNotFound, "not found"},
		{"/?fragment=main", secret, http.StatusOK, `data-live="fleet"`},
	} {
		var headers []string
		if tc.cookie != "" {
			headers = []string{"cookie", tc.cookie}
		}
		resp := s.do(t, http.MethodGet, tc.path, nil, headers...)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(strings.ToLower(string(body)), strings.ToLower(tc.want)) {
			t.Errorf("%s: %d, want %d with %q:\n%s", tc.path, resp.StatusCode, tc.status, tc.want, body)
		}
	}
	if logs := s.logs.String(); strings.Contains(logs, "ERROR") {
		t.Errorf("the fragments logged errors:\n%s", logs)
	}
}

// TestPagesRateLimited: the pages, the sign-in and the live stream are
// charged to the API's per-caller buckets (the identity; the address
// without one) and logged in its access log.
func TestPagesRateLimited(t *testing.T) {
	var admit func(http.ResponseWriter, *http.Request, *kpool.Identity) bool
	logs := &syncBuffer{}
	s := newSite(t, Options{Admit: func(w http.ResponseWriter, r *http.Request, id *kpool.Identity) bool { return admit(w, r, id) }},
		func(svc *service.Service, access *auth.Access, h http.Handler) http.Handler {
			a := api.NewServer(svc, access, slog.New(slog.NewTextHandler(logs, nil))).Limit(api.NewLimiter(0.001, 2))
			admit = a.Admit
			return a.Logged(h)
		})
	_, secret := s.token(t, owner)
	// Buckets of 2: the identity's for the fleet and then the stream, the
	// address's for everything without an identity.
	for _, tc := range []struct {
		name   string
		method string
		path   string
		cookie string
		codes  []int
	}{
		{"the fleet", http.MethodGet, "/", secret, []int{200, 200, 429}},
		{"the login form", http.MethodGet, "/login", "", []int{200, 200, 429}},
		{"a sign-in", http.MethodPost, "/login", "", []int{429}},
		{"a page without a session", http.MethodGet, "/clusters/x", "", []int{429}},
		{"the live stream", http.MethodGet, "/live", secret, []int{429}},
	} {
		var headers []string
		if tc.cookie != "" {
			headers = []string{"cookie", tc.cookie}
		}
		var form url.Values
		if tc.method == http.MethodPost {
			form = url.Values{"token": {"kpool_wrong"}}
		}
		for i, want := range tc.codes {
			resp := s.do(t, tc.method, tc.path, form, headers...)
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("%s, request %d: %d, want %d", tc.name, i, resp.StatusCode, want)
			}
			if want == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
				t.Errorf("%s: 429 without Retry-After", tc.name)
			}
		}
	}
	if l := logs.String(); !strings.Contains(l, "path=/login status=429") || !strings.Contains(l, "user="+owner) {
		t.Errorf("access log:\n%s", l)
	}
}

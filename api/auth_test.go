package api

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/store/testdb"
)

// lockedBuffer is a log that handlers write to concurrently.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestTokenAuth: in token mode only a current API token gets in. Each of
// these attacks passed before tokens, when X-User-Email was the identity.
func TestTokenAuth(t *testing.T) {
	st := testdb.SQLite(t)
	ts := st.(kpool.TokenStore)
	mk := func(req auth.TokenRequest, at time.Time) (string, *kpool.Token) {
		tok, err := auth.CheckToken(req, at)
		if err != nil {
			t.Fatal(err)
		}
		secret, hash := auth.NewTokenSecret()
		if err := ts.CreateToken(t.Context(), tok, hash); err != nil {
			t.Fatal(err)
		}
		return secret, tok
	}
	now := time.Now()
	good, _ := mk(auth.TokenRequest{User: admin, Role: kpool.RoleAdmin}, now)
	expired, _ := mk(auth.TokenRequest{User: admin, Role: kpool.RoleAdmin, Expires: time.Minute}, now.Add(-time.Hour))
	revoked, rt := mk(auth.TokenRequest{User: admin, Role: kpool.RoleAdmin}, now)
	if err := ts.RevokeToken(t.Context(), rt.ID, now); err != nil {
		t.Fatal(err)
	}
	var log lockedBuffer
	h := NewServer(service.New(st, catalog.Registry()), auth.NewTokenAccess(ts), slog.New(slog.NewTextHandler(&log, nil)))
	srv := httptest.NewServer(checkOpenAPI(t, h))
	t.Cleanup(srv.Close)

	for _, tc := range []struct {
		name   string
		header map[string]string
		want   int
	}{
		{"anonymous", nil, http.StatusUnauthorized},
		{"forged header", map[string]string{"X-User-Email": admin}, http.StatusUnauthorized},
		{"expired token", map[string]string{"Authorization": "Bearer " + expired}, http.StatusUnauthorized},
		{"revoked token", map[string]string{"Authorization": "Bearer " + revoked}, http.StatusUnauthorized},
		{"not a token", map[string]string{"Authorization": "Bearer " + admin}, http.StatusUnauthorized},
		{"token", map[string]string{"Authorization": "Bearer " + good}, http.StatusOK},
		{"token beside a forged header", map[string]string{"Authorization": "Bearer " + good, "X-User-Email": "someone@example.com"}, http.StatusOK},
		// The dashboard's session cookie holds a token: taken only with
		// the dashboard's header, which another site's form cannot send.
		{"session cookie alone", map[string]string{"Cookie": auth.SessionCookie + "=" + good}, http.StatusUnauthorized},
		{"session cookie from the dashboard", map[string]string{"Cookie": auth.SessionCookie + "=" + good, auth.SessionHeader: "1"}, http.StatusOK},
		{"expired session from the dashboard", map[string]string{"Cookie": auth.SessionCookie + "=" + expired, auth.SessionHeader: "1"}, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", srv.URL+"/api/v1/clusters", nil)
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.want, body)
			}
			if tc.want == http.StatusUnauthorized {
				if got := resp.Header.Get("WWW-Authenticate"); got != "Bearer" {
					t.Errorf("WWW-Authenticate %q", got)
				}
				if strings.Contains(string(body), "expired") || strings.Contains(string(body), "revoked") {
					t.Errorf("the refusal says why: %s", body)
				}
			}
		})
	}
	// The admin token sees everything: its identity is the token's.
	c := NewClient(srv.URL, "")
	c.Token = good
	if _, err := c.Clusters(t.Context(), service.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{good, expired, revoked} {
		if strings.Contains(log.String(), secret) || strings.Contains(log.String(), secret[len(kpool.TokenPrefix):]) {
			t.Fatalf("a token is in the log:\n%s", log.String())
		}
	}
	if !strings.Contains(log.String(), "status=401") {
		t.Fatalf("no access log of the refusals:\n%s", log.String())
	}
}

// TestHeaderModeTokens: a header-mode server also takes kpool tokens, while a
// gateway's own Authorization header does not stop X-User-Email.
func TestHeaderModeTokens(t *testing.T) {
	st := testdb.SQLite(t)
	ts := st.(kpool.TokenStore)
	tok, err := auth.CheckToken(auth.TokenRequest{User: user, Role: kpool.RoleUser}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	secret, hash := auth.NewTokenSecret()
	if err := ts.CreateToken(t.Context(), tok, hash); err != nil {
		t.Fatal(err)
	}
	access, err := auth.NewAccess(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := NewServer(service.New(st, catalog.Registry()), access.WithTokens(ts), slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	unknown, _ := auth.NewTokenSecret()
	for _, tc := range []struct {
		name   string
		header map[string]string
		want   int
	}{
		{"header", map[string]string{"X-User-Email": user}, http.StatusOK},
		{"token", map[string]string{"Authorization": "Bearer " + secret}, http.StatusOK},
		{"gateway's bearer and header", map[string]string{"Authorization": "Bearer eyJhbGciOi.x.y", "X-User-Email": user}, http.StatusOK},
		{"unknown kpool token and header", map[string]string{"Authorization": "Bearer " + unknown, "X-User-Email": user}, http.StatusUnauthorized},
		{"nothing", nil, http.StatusUnauthorized},
	} {
		req, _ := http.NewRequest("GET", srv.URL+"/api/v1/clusters", nil)
		for k, v := range tc.header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
	}
}

// TestForgedControllerReport is the research's D4: after the owner's
// DELETE, a controller identity reported Deleted=True under the built-in
// controller's name and the pool record went, orphaning the cloud pool. Now
// only an identity granted the name may use it.
func TestForgedControllerReport(t *testing.T) {
	a := newTestAPI(t, testdb.SQLite)
	c := a.cluster(user, "aks", aksCluster)
	r := a.as(user, "POST", "/api/v1/clusters/"+c.ID+"/nodepools", `{"name":"web","spec":{"platform":{"azure":{"vmSize":"Standard_D4s_v5"}},"zones":["1"]}}`)
	want(t, r, http.StatusCreated)
	var p kpool.NodePool
	r.json(t, &p)
	status := "/api/v1/nodepools/" + p.ID + "/status"
	want(t, a.as(aksController, "PUT", status, `{"controller_name":"aks-nodepool-controller","observed_generation":1,"metadata":{"exists":true}}`), http.StatusOK)
	want(t, a.as(user, "DELETE", "/api/v1/nodepools/"+p.ID, ""), http.StatusAccepted)

	deleted := func(name string) string {
		return `{"controller_name":"` + name + `","observed_generation":1,"conditions":[{"type":"Deleted","status":"True","reason":"DeletedAtProvider"}]}`
	}
	for _, tc := range []struct{ name, who, as string }{
		{"bare controller, built-in name", controller, "aks-nodepool-controller"},
		{"granted controller, another name", aksController, "gcp-nodepool-controller"},
	} {
		e := wantError(t, a.as(tc.who, "PUT", status, deleted(tc.as)), http.StatusForbidden, kpool.CodeForbidden, "")
		if len(e.Fields) != 1 || e.Fields[0].Field != "controller_name" {
			t.Fatalf("%s: %+v", tc.name, e)
		}
		want(t, a.as(admin, "GET", "/api/v1/nodepools/"+p.ID, ""), http.StatusOK)
	}
	// The controller granted the name still finishes the delete.
	want(t, a.as(aksController, "PUT", status, deleted("aks-nodepool-controller")), http.StatusOK)
	want(t, a.as(admin, "GET", "/api/v1/nodepools/"+p.ID, ""), http.StatusNotFound)
}

// TestAccessLogQuery: a token a caller puts in the query (?token=,
// ?access_token=, or bare) is refused and is not in the access log, which
// keeps the values of the parameters the API takes. Before, the log wrote
// the request URI as it came.
func TestAccessLogQuery(t *testing.T) {
	st := testdb.SQLite(t)
	ts := st.(kpool.TokenStore)
	tok, err := auth.CheckToken(auth.TokenRequest{User: user, Role: kpool.RoleUser}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	secret, hash := auth.NewTokenSecret()
	if err := ts.CreateToken(t.Context(), tok, hash); err != nil {
		t.Fatal(err)
	}
	var log lockedBuffer
	srv := httptest.NewServer(NewServer(service.New(st, catalog.Registry()), auth.NewTokenAccess(ts), slog.New(slog.NewTextHandler(&log, nil))))
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		query, bearer string
		status        int
		logged        string
	}{
		{"token=" + secret, "", http.StatusUnauthorized, "path=\"/api/v1/clusters?token=xxxxx\" "},
		{"limit=5&access_token=" + secret, secret, http.StatusBadRequest, "path=\"/api/v1/clusters?limit=5&access_token=xxxxx\" "},
		{secret, "", http.StatusUnauthorized, "path=/api/v1/clusters?xxxxx "},
		{"limit=5&after=abc", secret, http.StatusBadRequest, "path=\"/api/v1/clusters?limit=5&after=abc\" "},
	} {
		req, _ := http.NewRequest("GET", srv.URL+"/api/v1/clusters?"+tc.query, nil)
		if tc.bearer != "" {
			req.Header.Set("Authorization", "Bearer "+tc.bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("?%s: status %d, want %d", tc.query, resp.StatusCode, tc.status)
		}
		if !strings.Contains(log.String(), tc.logged) {
			t.Errorf("?%s: want %s in the log:\n%s", tc.query, tc.logged, log.String())
		}
	}
	if strings.Contains(log.String(), secret[len(kpool.TokenPrefix):len(kpool.TokenPrefix)+12]) {
		t.Fatalf("the token is in the log:\n%s", log.String())
	}
}

// TestLoggedParamsCoverOpenAPI: every query parameter the API documents
// keeps its value in the access log, so a parameter added to the API
// without being added to loggedParams is caught here, not in an incident.
func TestLoggedParamsCoverOpenAPI(t *testing.T) {
	doc, _ := loadOpenAPI(t)
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for _, p := range append(item.Parameters, op.Parameters...) {
				if p.Value != nil && p.Value.In == "query" && !loggedParams[p.Value.Name] {
					t.Errorf("%s %s: query parameter %q is not in loggedParams", method, path, p.Value.Name)
				}
			}
		}
	}
}

// TestSeveralUserHeaders: header mode refuses a request that carries
// X-User-Email more than once, whichever comes first, on the API and the
// dashboard's live stream: a gateway that appends its header must not
// let the client choose.
func TestSeveralUserHeaders(t *testing.T) {
	a := newTestAPI(t, testdb.SQLite)
	for _, order := range [][]string{{admin, user}, {user, admin}} {
		req, err := http.NewRequest("GET", a.srv.URL+"/api/v1/nodepools", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Add("X-User-Email", order[0])
		req.Header.Add("X-User-Email", order[1])
		resp, err := a.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "more than once") {
			t.Errorf("X-User-Email %v: %d %s, want 401 saying it was sent more than once", order, resp.StatusCode, body)
		}
	}
	want(t, a.as(user, "GET", "/api/v1/nodepools", ""), http.StatusOK)
}

// TestControllerScope: a controller token reports only on the pools of its
// platforms, and, when it names teams or clusters, only on those of
// clusters of its teams or its clusters; others answer 403 and change
// nothing.
func TestControllerScope(t *testing.T) {
	a := newTestAPI(t, testdb.SQLite)
	mk := func(scope kpool.ControllerScope) string {
		tok, err := auth.CheckToken(auth.TokenRequest{User: "ci@example.com", Role: kpool.RoleController, ControllerNames: []string{"ext-ctl"}, Scope: scope}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		secret, hash := auth.NewTokenSecret()
		if err := a.tokens.CreateToken(context.Background(), tok, hash); err != nil {
			t.Fatal(err)
		}
		return "Authorization: Bearer " + secret
	}
	gcp := []kpool.PlatformType{kpool.PlatformGCP}
	shared := a.cluster(user, "shared", gcpCluster)
	want(t, a.as(admin, "PATCH", "/api/v1/clusters/"+shared.ID, `{"team":"platform"}`), http.StatusOK)
	mine := a.cluster(user, "mine", gcpCluster)
	aks := a.cluster(user, "aks", `{"platform":{"type":"azure","azure":{"subscriptionId":"0b1f6471-1bf0-4dda-aec3-111122223333","resourceGroup":"rg","clusterName":"aks","location":"westeurope"}}}`)
	pools := map[string]kpool.NodePool{"shared": a.pool(user, shared.ID, "web"), "mine": a.pool(user, mine.ID, "web")}
	var az kpool.NodePool
	r := a.as(user, "POST", "/api/v1/clusters/"+aks.ID+"/nodepools", `{"name":"web","spec":{"nodeCount":1,"platform":{"azure":{"vmSize":"Standard_D2s_v5"}}}}`)
	want(t, r, http.StatusCreated)
	r.json(t, &az)
	pools["aks"] = az
	report := `{"controller_name":"ext-ctl","observed_generation":1,"conditions":[{"type":"Ready","status":"False","reason":"Evil","message":"x"}]}`
	for _, tc := range []struct {
		name  string
		scope kpool.ControllerScope
		may   map[string]bool
	}{
		{"gcp", kpool.ControllerScope{Platforms: gcp}, map[string]bool{"shared": true, "mine": true}},
		{"gcp, team platform", kpool.ControllerScope{Platforms: gcp, Teams: []string{"platform"}}, map[string]bool{"shared": true}},
		{"gcp, one cluster", kpool.ControllerScope{Platforms: gcp, Clusters: []string{mine.ID}}, map[string]bool{"mine": true}},
		{"azure", kpool.ControllerScope{Platforms: []kpool.PlatformType{kpool.PlatformAzure}}, map[string]bool{"aks": true}},
	} {
		auth := mk(tc.scope)
		for name, p := range pools {
			got := a.do("PUT", "/api/v1/nodepools/"+p.ID+"/status", report, auth, "Content-Type: application/json")
			if wantStatus := map[bool]int{true: http.StatusOK, false: http.StatusForbidden}[tc.may[name]]; got.status != wantStatus {
				t.Errorf("%s reporting on %s: %d, want %d: %s", tc.name, name, got.status, wantStatus, got.body)
			}
		}
	}
}

package api

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/store/storetest"
	"github.com/kpool/kpool/store/testdb"
)

const (
	user       = "user@example.com"
	other      = "other@example.com"
	admin      = "admin@example.com"
	controller = "gcp-controller@example.com"
	// aksController is granted the built-in AKS controller's name, which
	// the bare controller may not use.
	aksController = "aks-controller@example.com"
)

// testAPI is a kpool server on a loopback port, every exchange checked
// against the OpenAPI document.
type testAPI struct {
	t   *testing.T
	srv *httptest.Server
	// tokens is the store's token store: API tokens work beside
	// X-User-Email, as in kpool serve's header mode.
	tokens kpool.TokenStore
	// server is the API the test server serves, svc its service.
	server *Server
	svc    *service.Service
}

func newTestAPI(t *testing.T, open storetest.Opener) *testAPI {
	t.Helper()
	return newTestAPIOn(t, open, catalog.Registry())
}

// newTestAPIOn is newTestAPI with the platforms (and drivers) of reg.
func newTestAPIOn(t *testing.T, open storetest.Opener, reg *provider.Registry) *testAPI {
	t.Helper()
	access, err := auth.NewAccess([]string{admin}, []string{controller, aksController + "=aks-nodepool-controller"})
	if err != nil {
		t.Fatal(err)
	}
	st := open(t)
	ts, _ := st.(kpool.TokenStore)
	if ts != nil {
		access.WithTokens(ts)
	}
	svc := service.New(st, reg)
	svc.Nodes, svc.Kube = staticNodes{}, staticNodes{}
	h := NewServer(svc, access, slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv := httptest.NewServer(checkOpenAPI(t, h))
	t.Cleanup(srv.Close)
	return &testAPI{t: t, srv: srv, tokens: ts, server: h, svc: svc}
}

// forEachStore runs fn against a server on every available store.
func forEachStore(t *testing.T, fn func(t *testing.T, a *testAPI)) {
	for name, open := range testdb.Stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, newTestAPI(t, open))
		})
	}
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.body, err)
	}
}

func (r reply) errorBody(t *testing.T) ErrorDetail {
	t.Helper()
	var e ErrorBody
	r.json(t, &e)
	return e.Error
}

// do sends a request; headers are "Name: value" strings.
func (a *testAPI) do(method, path, body string, headers ...string) reply {
	a.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, a.srv.URL+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	resp, err := a.srv.Client().Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// token makes an API token for email, a user in groups, and returns the
// header that sends it.
func (a *testAPI) token(email string, groups ...string) string {
	a.t.Helper()
	tok, err := auth.CheckToken(auth.TokenRequest{User: email, Role: kpool.RoleUser, Groups: groups, CreatedBy: "test"}, time.Now())
	if err != nil {
		a.t.Fatal(err)
	}
	secret, hash := auth.NewTokenSecret()
	if err := a.tokens.CreateToken(context.Background(), tok, hash); err != nil {
		a.t.Fatal(err)
	}
	return "Authorization: Bearer " + secret
}

// as sends a JSON request as the given user.
func (a *testAPI) as(email, method, path, body string, headers ...string) reply {
	a.t.Helper()
	h := []string{"X-User-Email: " + email}
	if body != "" {
		h = append(h, "Content-Type: application/json")
	}
	h = append(h, headers...)
	return a.do(method, path, body, h...)
}

func want(t *testing.T, r reply, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
}

func wantError(t *testing.T, r reply, status int, code, contains string) ErrorDetail {
	t.Helper()
	want(t, r, status)
	e := r.errorBody(t)
	if e.Code != code || !strings.Contains(e.Message+" "+e.Details, contains) {
		t.Fatalf("error %+v, want code %s mentioning %q", e, code, contains)
	}
	return e
}

const guideClusterID = "550e8400-e29b-41d4-a716-446655440000"

// cluster registers a cluster of owner. The spec gcpCluster stands for a
// cloud cluster of the owner's and the name's own: one cloud cluster is
// registered once.
func (a *testAPI) cluster(owner, name, spec string) kpool.Cluster {
	a.t.Helper()
	if spec == gcpCluster {
		spec = strings.Replace(spec, `"clusterName":"prod"`, fmt.Sprintf(`"clusterName":"c%08x"`, crc32.ChecksumIEEE([]byte(owner+" "+name))), 1)
	}
	r := a.as(owner, "POST", "/api/v1/clusters", fmt.Sprintf(`{"name":%q,"spec":%s}`, name, spec))
	want(a.t, r, http.StatusCreated)
	var c kpool.Cluster
	r.json(a.t, &c)
	return c
}

const (
	gcpCluster = `{"platform":{"type":"gcp","gcp":{"projectId":"acme-prod","location":"us-central1","clusterName":"prod"}}}`
	gcpPool    = `{"platform":{"gcp":{"machineType":"n1-standard-4"}},"nodeCount":3}`
)

func (a *testAPI) pool(owner, clusterID, name string) kpool.NodePool {
	a.t.Helper()
	r := a.as(owner, "POST", "/api/v1/nodepools", fmt.Sprintf(`{"name":%q,"cluster_id":%q,"spec":%s}`, name, clusterID, gcpPool))
	want(a.t, r, http.StatusCreated)
	var p kpool.NodePool
	r.json(a.t, &p)
	return p
}

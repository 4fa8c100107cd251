package api

import (
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

	"github.com/kpool/kpool"
)

// oaErrorCase is a request the server refuses with status, in the error
// shape.
type oaErrorCase struct {
	status            int
	who, method, path string
	body              string
	headers           []string
}

// errorAnswers sends requests the server refuses, each kind in turn, and
// checks each answer's code matches its status; then bodies over
// MaxBodyBytes (413), and a HEAD.
func (cf *conformance) errorAnswers() {
	t, a, gke, pools := cf.t, cf.a, cf.gke, cf.pools
	for _, c := range slices.Concat(cf.invalidRequests(), cf.unauthenticated(), cf.forbidden(), cf.notFound(),
		cf.methodsNotAllowed(), cf.conflicts(), cf.unsupportedMediaTypes()) {
		r := a.expect(c.status, c.who, c.method, c.path, c.body, c.headers...)
		var e ErrorBody
		r.decode(t, &e)
		if e.Error.Code == "" || Status(e.Error.Code) != c.status {
			t.Errorf("%s %s: code %q for status %d", c.method, c.path, e.Error.Code, c.status)
		}
	}
	big := `{"name":"x","spec":{"tags":{"k":"` + strings.Repeat("v", MaxBodyBytes) + `"}}}`
	for _, c := range []struct{ who, method, path string }{
		{oaOwner, "POST", "/api/v1/clusters"},
		{oaOwner, "PUT", "/api/v1/clusters/" + gke.ID},
		{oaOwner, "PATCH", "/api/v1/clusters/" + gke.ID},
		{oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/nodepools"},
		{oaOwner, "POST", "/api/v1/nodepools"},
		{oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/placements"},
		{oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/zonal-nodepools"},
		{oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/imports"},
		{oaOwner, "PUT", "/api/v1/nodepools/" + pools["small"].ID},
		{oaOwner, "PATCH", "/api/v1/nodepools/" + pools["small"].ID},
		{oaController, "PUT", "/api/v1/nodepools/" + pools["small"].ID + "/status"},
	} {
		a.expect(413, c.who, c.method, c.path, big)
	}
	if r := a.call(oaOwner, "HEAD", "/api/v1/clusters", ""); r.status != 200 || len(r.body) != 0 {
		t.Errorf("HEAD /api/v1/clusters: %d %q", r.status, r.body)
	}
}

// invalidRequests are requests with bad parameters or bodies (400), and a
// force that only an admin may use (403).
func (cf *conformance) invalidRequests() []oaErrorCase {
	gke, pools := cf.gke, cf.pools
	return []oaErrorCase{
		{400, oaOwner, "GET", "/api/v1/clusters?limit=0", "", nil},
		{400, oaOwner, "GET", "/api/v1/events?cluster_id=prod", "", nil},
		{400, oaOwner, "GET", "/api/v1/clusters?cursor=x", "", nil},
		{400, oaOwner, "GET", "/api/v1/clusters/" + gke.ID + "?verbose=1", "", nil},
		{400, oaOwner, "GET", "/api/v1/clusters/" + gke.ID + "/nodepools?status=Running", "", nil},
		{400, oaOwner, "GET", "/api/v1/nodepools?limit=1&limit=2", "", nil},
		{400, oaOwner, "GET", "/api/v1/nodepools?cluster_id=prod", "", nil},
		{400, oaOwner, "GET", "/api/v1/nodepools/" + pools["small"].ID + "?x=1", "", nil},
		{400, oaOwner, "GET", "/api/v1/nodepools/" + pools["small"].ID + "/status?x=1", "", nil},
		{400, oaOwner, "GET", "/api/v1/clusters/" + gke.ID + "/nodes?x=1", "", nil},
		{400, oaOwner, "GET", "/api/v1/clusters/" + gke.ID + "/nodepools/web/nodes", "", nil},
		{400, oaOwner, "GET", "/api/v1/clusters/" + gke.ID + "/kubeconfig?x=1", "", nil},
		{400, oaOwner, "POST", "/api/v1/clusters", `{"name":"Bad Name","spec":{"platform":{"type":"gcp"}}}`, nil},
		{400, oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/nodepools", `{"name":"x","spec":{"replicas":3}}`, nil},
		{400, oaOwner, "POST", "/api/v1/nodepools", `{"name":"x","spec":{"platform":{"gcp":{"machineType":"e2-small"}}}}`, nil},
		{400, oaOwner, "PUT", "/api/v1/clusters/" + gke.ID, `{"name":"renamed"}`, nil},
		{400, oaOwner, "PATCH", "/api/v1/clusters/" + gke.ID, `{"spec":{"platform":{"type":"aws"}}}`, nil},
		{400, oaOwner, "PUT", "/api/v1/nodepools/" + pools["small"].ID, `{"spec":{"nodeCount":"six"}}`, nil},
		{400, oaOwner, "PATCH", "/api/v1/nodepools/" + pools["small"].ID, `{"spec":{"nodeCount":0}}`, nil},
		{400, oaOwner, "DELETE", "/api/v1/clusters/" + gke.ID + "?force=maybe", "", nil},
		{400, oaOwner, "DELETE", "/api/v1/nodepools/" + pools["small"].ID + "?force=maybe", "", nil},
		{403, oaOwner, "DELETE", "/api/v1/nodepools/" + pools["small"].ID + "?force=true", "", nil},
		{400, oaController, "PUT", "/api/v1/nodepools/" + pools["small"].ID + "/status", `{"controller_name":"Bad_Name"}`, nil},
		{400, oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/placements", `{"manifests": "kind: Pod\napiVersion: v1\nmetadata: {name: p}\nspec: {containers: []}", "pool": "nope"}`, nil},
		{400, oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/placements", `{"manifests": ""}`, nil},
		{400, oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/zonal-nodepools", `{"name":"nozones","spec":{"platform":{"gcp":{"machineType":"e2-small"}}}}`, nil},
		{400, oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/placements", `{"manifests": "x", "tolerate": true}`, nil},
	}
}

// unauthenticated are requests without a caller, or with one that is not an
// e-mail address (401).
func (cf *conformance) unauthenticated() []oaErrorCase {
	gke, pools := cf.gke, cf.pools
	return []oaErrorCase{
		{401, "", "GET", "/api/v1/clusters", "", nil},
		{401, "", "GET", "/api/v1/events", "", nil},
		{401, "Joe <joe@example.com>", "POST", "/api/v1/clusters", `{}`, nil},
		{401, "", "GET", "/api/v1/clusters/" + gke.ID, "", nil},
		{401, "", "PUT", "/api/v1/clusters/" + gke.ID, `{}`, nil},
		{401, "", "PATCH", "/api/v1/clusters/" + gke.ID, `{}`, nil},
		{401, "", "DELETE", "/api/v1/clusters/" + gke.ID, "", nil},
		{401, "", "GET", "/api/v1/clusters/" + gke.ID + "/nodepools", "", nil},
		{401, "", "GET", "/api/v1/clusters/" + gke.ID + "/facts", "", nil},
		{401, "", "GET", "/api/v1/clusters/" + gke.ID + "/nodes", "", nil},
		{401, "", "GET", "/api/v1/clusters/" + gke.ID + "/nodepools/" + pools["small"].ID + "/nodes", "", nil},
		{401, "", "GET", "/api/v1/clusters/" + gke.ID + "/kubeconfig", "", nil},
		{401, "", "POST", "/api/v1/clusters/" + gke.ID + "/nodepools", `{}`, nil},
		{401, "", "POST", "/api/v1/clusters/" + gke.ID + "/placements", `{}`, nil},
		{401, "", "POST", "/api/v1/clusters/" + gke.ID + "/zonal-nodepools", `{}`, nil},
		{401, "", "POST", "/api/v1/clusters/" + gke.ID + "/imports", `{}`, nil},
		{401, "", "GET", "/api/v1/nodepools", "", nil},
		{401, "nobody", "POST", "/api/v1/nodepools", `{}`, nil},
		{401, "", "GET", "/api/v1/nodepools/" + pools["small"].ID, "", nil},
		{401, "", "PUT", "/api/v1/nodepools/" + pools["small"].ID, `{}`, nil},
		{401, "", "PATCH", "/api/v1/nodepools/" + pools["small"].ID, `{}`, nil},
		{401, "", "DELETE", "/api/v1/nodepools/" + pools["small"].ID, "", nil},
		{401, "", "GET", "/api/v1/nodepools/" + pools["small"].ID + "/status", "", nil},
		{401, "", "PUT", "/api/v1/nodepools/" + pools["small"].ID + "/status", `{}`, nil},
	}
}

// forbidden are writes by callers whose role does not allow them (403).
func (cf *conformance) forbidden() []oaErrorCase {
	gke, pools := cf.gke, cf.pools
	return []oaErrorCase{
		{403, oaController, "POST", "/api/v1/clusters", `{"name":"x","spec":{"platform":{"type":"k3s"}}}`, nil},
		{403, oaController, "PUT", "/api/v1/clusters/" + gke.ID, `{}`, nil},
		{403, oaController, "PATCH", "/api/v1/clusters/" + gke.ID, `{}`, nil},
		{403, oaController, "DELETE", "/api/v1/clusters/" + gke.ID, "", nil},
		{403, oaController, "POST", "/api/v1/clusters/" + gke.ID + "/nodepools", `{"name":"x","spec":{}}`, nil},
		{403, oaController, "POST", "/api/v1/clusters/" + gke.ID + "/zonal-nodepools", `{"name":"x","spec":{"zones":["1"]}}`, nil},
		{403, oaController, "POST", "/api/v1/clusters/" + gke.ID + "/imports", `{"providerName":"legacy"}`, nil},
		{403, oaController, "POST", "/api/v1/nodepools", `{"name":"x","cluster_id":"` + gke.ID + `","spec":{}}`, nil},
		{403, oaController, "PUT", "/api/v1/nodepools/" + pools["small"].ID, `{}`, nil},
		{403, oaController, "PATCH", "/api/v1/nodepools/" + pools["small"].ID, `{}`, nil},
		{403, oaController, "DELETE", "/api/v1/nodepools/" + pools["small"].ID, "", nil},
		{403, oaAdmin, "PUT", "/api/v1/nodepools/" + pools["small"].ID + "/status", `{"controller_name":"x"}`, nil},
	}
}

// notFound are requests for objects the caller cannot see, that are gone,
// or paths that are not the API's (404); and ids in a path that are not
// UUIDs, or an import's bad name (400).
func (cf *conformance) notFound() []oaErrorCase {
	gke, gpu, pools := cf.gke, cf.gpu, cf.pools
	return []oaErrorCase{
		{404, oaStranger, "GET", "/api/v1/clusters/" + gke.ID, "", nil},
		{400, oaOwner, "GET", "/api/v1/clusters/prod", "", nil},
		{404, oaStranger, "PUT", "/api/v1/clusters/" + gke.ID, `{}`, nil},
		{404, oaStranger, "PATCH", "/api/v1/clusters/" + gke.ID, `{}`, nil},
		{404, oaStranger, "DELETE", "/api/v1/clusters/" + gke.ID, "", nil},
		{404, oaStranger, "GET", "/api/v1/clusters/" + gke.ID + "/nodepools", "", nil},
		{404, oaStranger, "GET", "/api/v1/clusters/" + gke.ID + "/nodes", "", nil},
		{404, oaOwner, "GET", "/api/v1/clusters/" + gke.ID + "/nodepools/" + pools["small"].ID + "/nodes", "", nil},
		{404, oaStranger, "GET", "/api/v1/clusters/" + gke.ID + "/kubeconfig", "", nil},
		{400, oaOwner, "POST", "/api/v1/clusters/prod/nodepools", `{"name":"x","spec":{}}`, nil},
		{404, oaOwner, "POST", "/api/v1/clusters/7c9e6679-7425-40de-944b-e07fc1f90ae7/nodepools", `{"name":"x","spec":{}}`, nil},
		{404, oaStranger, "POST", "/api/v1/clusters/" + gke.ID + "/placements", `{"manifests": "kind: Pod"}`, nil},
		{404, oaStranger, "POST", "/api/v1/clusters/" + gke.ID + "/zonal-nodepools", `{"name":"x","spec":{"platform":{"gcp":{"machineType":"e2-small"}},"zones":["1"]}}`, nil},
		{404, oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/imports", `{"providerName":"ghost"}`, nil},
		{400, oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/imports", `{"providerName":"legacy","name":"Not A Name"}`, nil},
		{404, oaStranger, "POST", "/api/v1/nodepools", `{"name":"x","cluster_id":"` + gke.ID + `","spec":{}}`, nil},
		{404, oaOwner, "GET", "/api/v1/nodepools/" + gpu.ID, "", nil},
		{404, oaStranger, "PUT", "/api/v1/nodepools/" + pools["small"].ID, `{}`, nil},
		{404, oaStranger, "PATCH", "/api/v1/nodepools/" + pools["small"].ID, `{}`, nil},
		{404, oaStranger, "DELETE", "/api/v1/nodepools/" + pools["small"].ID, "", nil},
		{404, oaStranger, "GET", "/api/v1/nodepools/" + pools["small"].ID + "/status", "", nil},
		{404, oaController, "PUT", "/api/v1/nodepools/" + gpu.ID + "/status", `{"controller_name":"x"}`, nil},
		{404, oaOwner, "GET", "/api/v2/nodepools", "", nil},
		{404, oaOwner, "GET", "/api/v1/clusters/", "", nil},
		{404, "", "GET", "/", "", nil},
	}
}

// methodsNotAllowed are methods a path does not take (405).
func (cf *conformance) methodsNotAllowed() []oaErrorCase {
	pools := cf.pools
	return []oaErrorCase{
		{405, oaOwner, "PATCH", "/api/v1/nodepools", `{}`, nil},
		{405, oaOwner, "DELETE", "/api/v1/clusters", "", nil},
		{405, oaOwner, "POST", "/api/v1/nodepools/" + pools["small"].ID, `{}`, nil},
		{405, oaController, "DELETE", "/api/v1/nodepools/" + pools["small"].ID + "/status", "", nil},
		{405, "", "POST", "/healthz", "", nil},
	}
}

// conflicts are creates and imports that clash with what is there (409).
func (cf *conformance) conflicts() []oaErrorCase {
	gke, clusters, clusterSpecs := cf.gke, cf.clusters, cf.clusterSpecs
	return []oaErrorCase{
		{409, oaOwner, "POST", "/api/v1/clusters", `{"name":"gke","spec":` + clusterSpecs[0].spec + `}`, nil},
		{409, oaOwner, "POST", "/api/v1/clusters/" + clusters["civo"].ID + "/nodepools", `{"name":"small","spec":{"platform":{"civo":{"size":"g4s.kube.small"}}}}`, nil},
		{409, oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/zonal-nodepools", `{"name":"zonal","spec":{"platform":{"gcp":{"machineType":"e2-small"}},"nodeCount":1,"zones":["1"],"placementPool":"again"}}`, nil},
		{409, oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/imports", `{"providerName":"theirs","force":true}`, nil},
	}
}

// unsupportedMediaTypes are bodies that are not JSON (415).
func (cf *conformance) unsupportedMediaTypes() []oaErrorCase {
	gke, pools := cf.gke, cf.pools
	return []oaErrorCase{
		{415, oaOwner, "POST", "/api/v1/clusters", `name=x`, []string{"Content-Type: text/plain"}},
		{415, oaOwner, "PUT", "/api/v1/clusters/" + gke.ID, `{}`, []string{"Content-Type: application/xml"}},
		{415, oaOwner, "PATCH", "/api/v1/clusters/" + gke.ID, `{}`, []string{"Content-Type: text/plain"}},
		{415, oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/nodepools", `{}`, []string{"Content-Type: text/plain"}},
		{415, oaOwner, "POST", "/api/v1/nodepools", `{}`, []string{"Content-Type: text/plain"}},
		{415, oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/placements", `kind: Pod`, []string{"Content-Type: application/yaml"}},
		{415, oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/zonal-nodepools", `{}`, []string{"Content-Type: text/plain"}},
		{415, oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/imports", `{}`, []string{"Content-Type: text/plain"}},
		{415, oaOwner, "PUT", "/api/v1/nodepools/" + pools["small"].ID, `{}`, []string{"Content-Type: text/plain"}},
		{415, oaOwner, "PATCH", "/api/v1/nodepools/" + pools["small"].ID, `{}`, []string{"Content-Type: text/plain"}},
		{415, oaController, "PUT", "/api/v1/nodepools/" + pools["small"].ID + "/status", `{}`, []string{"Content-Type: text/plain"}},
	}
}

// oaRequest is a request: by whom, and what.
type oaRequest struct{ who, method, path, body string }

// failingRequests are a request of every operation that reads or writes
// the store: a store that fails answers each 500, then a database that has
// gone away 503.
func (cf *conformance) failingRequests() []oaRequest {
	gke, pools := cf.gke, cf.pools
	return []oaRequest{
		{oaOwner, "GET", "/api/v1/clusters", ""},
		{oaOwner, "POST", "/api/v1/clusters", `{"name":"x","spec":{"platform":{"type":"k3s"}}}`},
		{oaOwner, "GET", "/api/v1/clusters/" + gke.ID, ""},
		{oaOwner, "PUT", "/api/v1/clusters/" + gke.ID, `{}`},
		{oaOwner, "PATCH", "/api/v1/clusters/" + gke.ID, `{}`},
		{oaOwner, "DELETE", "/api/v1/clusters/" + gke.ID, ""},
		{oaOwner, "GET", "/api/v1/clusters/" + gke.ID + "/nodepools", ""},
		{oaOwner, "GET", "/api/v1/clusters/" + gke.ID + "/facts", ""},
		// Valid pools: a create checks its spec against the cluster as cached,
		// so only a valid one reaches the database.
		{oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/nodepools", `{"name":"x","spec":{"platform":{"gcp":{"machineType":"n1-standard-4"}},"nodeCount":1}}`},
		{oaOwner, "GET", "/api/v1/nodepools", ""},
		{oaOwner, "POST", "/api/v1/nodepools", `{"name":"x","cluster_id":"` + gke.ID + `","spec":{"platform":{"gcp":{"machineType":"n1-standard-4"}},"nodeCount":1}}`},
		{oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/placements", `{"manifests": "kind: Pod"}`},
		{oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/zonal-nodepools", `{"name":"failing","spec":{"platform":{"gcp":{"machineType":"n1-standard-4"}},"nodeCount":1,"zones":["1"]}}`},
		{oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/imports", `{"providerName":"legacy","name":"failing"}`},
		{oaOwner, "GET", "/api/v1/nodepools/" + pools["small"].ID, ""},
		{oaOwner, "PUT", "/api/v1/nodepools/" + pools["small"].ID, `{}`},
		{oaOwner, "PATCH", "/api/v1/nodepools/" + pools["small"].ID, `{}`},
		{oaOwner, "DELETE", "/api/v1/nodepools/" + pools["small"].ID, ""},
		{oaOwner, "GET", "/api/v1/nodepools/" + pools["small"].ID + "/status", ""},
		{oaOwner, "POST", "/api/v1/nodepools/" + pools["surging"].ID + "/rollback", ""},
		{oaController, "PUT", "/api/v1/nodepools/" + pools["small"].ID + "/status", `{"controller_name":"x"}`},
		{oaOwner, "GET", "/api/v1/events", ""},
		{oaOwner, "GET", "/api/v1/clusters/" + gke.ID + "/nodes", ""},
		{oaOwner, "GET", "/api/v1/clusters/" + pools["small"].ClusterID + "/nodepools/" + pools["small"].ID + "/nodes", ""},
		{oaOwner, "GET", "/api/v1/clusters/" + gke.ID + "/kubeconfig", ""},
	}
}

// rateLimit: a caller past its rate is answered 429 with Retry-After,
// whatever the operation.
func (cf *conformance) rateLimit() {
	t, svc, access, record := cf.t, cf.svc, cf.access, cf.record
	failing := cf.failingRequests()
	// A caller past its rate (429): a second server on the same service,
	// whose limiter's clock stands still, takes one request a caller.
	lim := NewLimiter(1, 1)
	frozen := time.Now()
	lim.now = func() time.Time { return frozen }
	lsrv := httptest.NewServer(checkOpenAPIWith(t, NewServer(svc, access, slog.New(slog.NewTextHandler(io.Discard, nil))).Limit(lim), record))
	t.Cleanup(lsrv.Close)
	la := &oaAPI{t: t, url: lsrv.URL}
	la.expect(200, oaOwner, "GET", "/api/v1/clusters", "")
	la.expect(200, oaController, "GET", "/api/v1/nodepools", "")
	for _, c := range failing {
		r := la.expect(429, c.who, c.method, c.path, c.body)
		var e ErrorBody
		r.decode(t, &e)
		if e.Error.Code != kpool.CodeRateLimited || r.header.Get("Retry-After") != "1" {
			t.Errorf("%s %s: %s (Retry-After %q)", c.method, c.path, r.body, r.header.Get("Retry-After"))
		}
	}
}

// failures: a store that fails (500), then a database that has gone away
// (503), on every operation that reaches it.
func (cf *conformance) failures() {
	t, a, broken, store := cf.t, cf.a, cf.broken, cf.store
	failing := cf.failingRequests()
	broken.failing.Store(true)
	for _, c := range failing {
		r := a.expect(500, c.who, c.method, c.path, c.body)
		var e ErrorBody
		r.decode(t, &e)
		if e.Error.Code != kpool.CodeInternal || !strings.HasPrefix(e.Error.Details, "request id ") {
			t.Errorf("%s %s: %s", c.method, c.path, r.body)
		}
	}
	broken.failing.Store(false)
	store.Close()
	cf.closed = true
	a.expect(503, "", "GET", "/readyz", "")
	for _, c := range failing {
		r := a.expect(503, c.who, c.method, c.path, c.body)
		var e ErrorBody
		r.decode(t, &e)
		if e.Error.Code != kpool.CodeUnavailable || r.header.Get("Retry-After") != RetryUnavailable {
			t.Errorf("%s %s: %s (Retry-After %q)", c.method, c.path, r.body, r.header.Get("Retry-After"))
		}
	}
}

// everyResponseSeen checks that every response openapi.yaml documents was
// answered by some stage, and so was an unknown endpoint (404 and 405).
func (cf *conformance) everyResponseSeen() {
	t := cf.t
	doc, _ := loadOpenAPI(t)
	cf.mu.Lock()
	defer cf.mu.Unlock()
	seen := cf.seen
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			name := method + " " + path
			for code := range op.Responses.Map() {
				var status int
				if _, err := fmt.Sscan(code, &status); err != nil {
					t.Errorf("%s: response %q is not a status code", name, code)
					continue
				}
				if !seen[name][status] {
					t.Errorf("%s: the document's %d response was never exercised", name, status)
				}
			}
		}
	}
	if !seen[""][404] || !seen[""][405] {
		t.Errorf("the unknown-endpoint answers were not exercised: %v", seen[""])
	}
}

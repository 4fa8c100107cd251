package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/store/testdb"
)

// The authorization table: every route of the OpenAPI document, for every
// kind of caller, with the status it must get. A route added without a row
// fails TestAuthorizationTable, so no route is ever served without someone
// deciding who may call it.

// Callers, as the table names them.
const (
	asOwner      = "owner"      // registered the cluster
	asOther      = "other"      // another user
	asAdmin      = "admin"      // an admin
	asController = "controller" // a controller identity
	asAnonymous  = "anonymous"  // no identity at all
	// The cluster belongs to team platform; these are its members, by the
	// groups of their API tokens (platform:viewer, …).
	asViewer    = "viewer"
	asOperator  = "operator"
	asTeamAdmin = "team-admin"
)

var callers = []string{asOwner, asOther, asAdmin, asController, asAnonymous, asViewer, asOperator, asTeamAdmin}

// authzRow is one route's expected wants, by caller.
type authzRow struct {
	route string // "METHOD /path" as openapi.yaml writes it
	query string // added to the path
	body  string // the request body; {pool} and {cluster} are filled in
	want  wants
}

// wants are a row's wants by caller.
type wants map[string]int

// team adds the wants of the cluster's team: a viewer, an operator
// and an admin of it.
func (s wants) team(viewer, operator, admin int) wants {
	s[asViewer], s[asOperator], s[asTeamAdmin] = viewer, operator, admin
	return s
}

// The wants mean: 2xx done; 401 who are you; 403 known, and not
// allowed; 404 the object does not exist for this caller (another user's
// objects are not found, never forbidden: their existence is not told).
var authzTable = []authzRow{
	{"GET /healthz", "", "", all(http.StatusOK)},
	{"GET /readyz", "", "", all(http.StatusOK)},
	{"GET /version", "", "", all(http.StatusOK)},
	{"GET /api/v1/openapi.json", "", "", all(http.StatusOK)},

	{"GET /api/v1/clusters", "", "", authed(http.StatusOK, http.StatusOK, http.StatusOK, http.StatusOK).team(http.StatusOK, http.StatusOK, http.StatusOK)},
	{"POST /api/v1/clusters", "", `{"name":"new","spec":{"platform":{"type":"gcp","gcp":{"projectId":"acme-prod","location":"us-east1","clusterName":"{name}"}}}}`,
		authed(http.StatusCreated, http.StatusCreated, http.StatusCreated, http.StatusForbidden).team(http.StatusCreated, http.StatusCreated, http.StatusCreated)},
	{"GET /api/v1/clusters/{cluster}", "", "", authed(http.StatusOK, http.StatusNotFound, http.StatusOK, http.StatusOK).team(http.StatusOK, http.StatusOK, http.StatusOK)},
	{"PUT /api/v1/clusters/{cluster}", "", `{"name":"{name}","spec":{"importPools":true,"platform":{"type":"gcp","gcp":{"projectId":"acme-prod","location":"europe-west1","clusterName":"{name}"}}}}`,
		authed(http.StatusOK, http.StatusNotFound, http.StatusOK, http.StatusForbidden).team(http.StatusForbidden, http.StatusForbidden, http.StatusOK)},
	{"PATCH /api/v1/clusters/{cluster}", "", `{"spec":{"importPools":true}}`, authed(http.StatusOK, http.StatusNotFound, http.StatusOK, http.StatusForbidden).team(http.StatusForbidden, http.StatusForbidden, http.StatusOK)},
	{"DELETE /api/v1/clusters/{cluster}", "?force=true", "", authed(http.StatusAccepted, http.StatusNotFound, http.StatusAccepted, http.StatusForbidden).team(http.StatusForbidden, http.StatusForbidden, http.StatusAccepted)},
	{"GET /api/v1/clusters/{cluster}/facts", "", "", authed(http.StatusNotFound, http.StatusNotFound, http.StatusNotFound, http.StatusNotFound).team(http.StatusNotFound, http.StatusNotFound, http.StatusNotFound)},
	// Who may see the cluster (or the pool) may read its nodes and get a
	// kubeconfig of kpool's read-only proxy to it.
	{"GET /api/v1/clusters/{cluster}/nodes", "", "", authed(http.StatusOK, http.StatusNotFound, http.StatusOK, http.StatusOK).team(http.StatusOK, http.StatusOK, http.StatusOK)},
	{"GET /api/v1/clusters/{cluster}/nodepools/{pool}/nodes", "", "", authed(http.StatusOK, http.StatusNotFound, http.StatusOK, http.StatusOK).team(http.StatusOK, http.StatusOK, http.StatusOK)},
	{"GET /api/v1/clusters/{cluster}/kubeconfig", "", "", authed(http.StatusOK, http.StatusNotFound, http.StatusOK, http.StatusOK).team(http.StatusOK, http.StatusOK, http.StatusOK)},
	{"GET /api/v1/clusters/{cluster}/nodepools", "", "", authed(http.StatusOK, http.StatusNotFound, http.StatusOK, http.StatusOK).team(http.StatusOK, http.StatusOK, http.StatusOK)},
	{"POST /api/v1/clusters/{cluster}/nodepools", "", `{"name":"more","spec":{"nodeCount":1,"platform":{"gcp":{"machineType":"e2-small"}}}}`,
		authed(http.StatusCreated, http.StatusNotFound, http.StatusCreated, http.StatusForbidden).team(http.StatusForbidden, http.StatusCreated, http.StatusCreated)},
	{"POST /api/v1/clusters/{cluster}/zonal-nodepools", "", `{"name":"zonal","spec":{"nodeCount":1,"zones":["1","2"],"platform":{"gcp":{"machineType":"e2-small"}}}}`,
		authed(http.StatusCreated, http.StatusNotFound, http.StatusCreated, http.StatusForbidden).team(http.StatusForbidden, http.StatusCreated, http.StatusCreated)},
	// An unmarked pool the controllers found (see authzFixture): a foreign
	// one needs an admin and force, which TestImport covers.
	{"POST /api/v1/clusters/{cluster}/imports", "", `{"providerName":"legacy"}`,
		authed(http.StatusCreated, http.StatusNotFound, http.StatusCreated, http.StatusForbidden).team(http.StatusForbidden, http.StatusCreated, http.StatusCreated)},
	{"POST /api/v1/clusters/{cluster}/placements", "", `{"manifests":"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers: []\n","pool":"web"}`,
		authed(http.StatusOK, http.StatusNotFound, http.StatusOK, http.StatusOK).team(http.StatusOK, http.StatusOK, http.StatusOK)},

	{"GET /api/v1/clusters/{cluster}/logicalpools", "", "", authed(http.StatusOK, http.StatusNotFound, http.StatusOK, http.StatusOK).team(http.StatusOK, http.StatusOK, http.StatusOK)},
	{"POST /api/v1/clusters/{cluster}/logicalpools", "", `{"name":"more","spec":{"nodeCount":1,"template":{"platform":{"gcp":{"machineType":"e2-small"}}}}}`,
		authed(http.StatusCreated, http.StatusNotFound, http.StatusCreated, http.StatusForbidden).team(http.StatusForbidden, http.StatusCreated, http.StatusCreated)},
	{"GET /api/v1/clusters/{cluster}/logicalpools/{name}", "", "", authed(http.StatusOK, http.StatusNotFound, http.StatusOK, http.StatusOK).team(http.StatusOK, http.StatusOK, http.StatusOK)},
	{"PUT /api/v1/clusters/{cluster}/logicalpools/{name}", "", `{"spec":{"nodeCount":2}}`,
		authed(http.StatusOK, http.StatusNotFound, http.StatusOK, http.StatusForbidden).team(http.StatusForbidden, http.StatusOK, http.StatusOK)},
	{"PATCH /api/v1/clusters/{cluster}/logicalpools/{name}", "", `{"spec":{"nodeCount":3}}`,
		authed(http.StatusOK, http.StatusNotFound, http.StatusOK, http.StatusForbidden).team(http.StatusForbidden, http.StatusOK, http.StatusOK)},
	{"DELETE /api/v1/clusters/{cluster}/logicalpools/{name}", "", "", authed(http.StatusNoContent, http.StatusNotFound, http.StatusNoContent, http.StatusForbidden).team(http.StatusForbidden, http.StatusNoContent, http.StatusNoContent)},

	{"GET /api/v1/nodepools", "", "", authed(http.StatusOK, http.StatusOK, http.StatusOK, http.StatusOK).team(http.StatusOK, http.StatusOK, http.StatusOK)},
	{"POST /api/v1/nodepools", "", `{"name":"more","cluster_id":"{cluster}","spec":{"nodeCount":1,"platform":{"gcp":{"machineType":"e2-small"}}}}`,
		authed(http.StatusCreated, http.StatusNotFound, http.StatusCreated, http.StatusForbidden).team(http.StatusForbidden, http.StatusCreated, http.StatusCreated)},
	{"GET /api/v1/nodepools/{pool}", "", "", authed(http.StatusOK, http.StatusNotFound, http.StatusOK, http.StatusOK).team(http.StatusOK, http.StatusOK, http.StatusOK)},
	{"PUT /api/v1/nodepools/{pool}", "", `{"name":"web","spec":{"nodeCount":2,"platform":{"gcp":{"machineType":"e2-small"}}}}`,
		authed(http.StatusOK, http.StatusNotFound, http.StatusOK, http.StatusForbidden).team(http.StatusForbidden, http.StatusOK, http.StatusOK)},
	{"PATCH /api/v1/nodepools/{pool}", "", `{"spec":{"nodeCount":3}}`, authed(http.StatusOK, http.StatusNotFound, http.StatusOK, http.StatusForbidden).team(http.StatusForbidden, http.StatusOK, http.StatusOK)},
	{"DELETE /api/v1/nodepools/{pool}", "", "", authed(http.StatusAccepted, http.StatusNotFound, http.StatusAccepted, http.StatusForbidden).team(http.StatusForbidden, http.StatusAccepted, http.StatusAccepted)},
	// The fixture's pool has no replacement to roll back: a caller who may
	// operate its pools gets past authorization to the 409.
	{"POST /api/v1/nodepools/{pool}/rollback", "", "", authed(http.StatusConflict, http.StatusNotFound, http.StatusConflict, http.StatusForbidden).team(http.StatusForbidden, http.StatusConflict, http.StatusConflict)},
	{"GET /api/v1/nodepools/{pool}/status", "", "", authed(http.StatusOK, http.StatusNotFound, http.StatusOK, http.StatusOK).team(http.StatusOK, http.StatusOK, http.StatusOK)},
	{"PUT /api/v1/nodepools/{pool}/status", "", `{"controller_name":"gcp-nodepool-controller","observed_generation":1,"conditions":[{"type":"Ready","status":"True","reason":"NodesReady"}]}`,
		// Only controllers report, whoever owns the pool: 403 before any
		// lookup, so it tells nothing of the pool.
		authed(http.StatusForbidden, http.StatusForbidden, http.StatusForbidden, http.StatusOK).team(http.StatusForbidden, http.StatusForbidden, http.StatusForbidden)},

	// Everyone reads the audit trail; what each sees is TestEventsVisibility's.
	{"GET /api/v1/events", "?cluster_id={cluster}", "", authed(http.StatusOK, http.StatusOK, http.StatusOK, http.StatusOK).team(http.StatusOK, http.StatusOK, http.StatusOK)},
}

// all is the same status for every caller, anonymous included.
func all(status int) wants {
	m := wants{}
	for _, c := range callers {
		m[c] = status
	}
	return m
}

// authed is the wants of the known callers; anonymous gets 401.
func authed(owner, other, admin, controller int) wants {
	return wants{asOwner: owner, asOther: other, asAdmin: admin, asController: controller, asAnonymous: http.StatusUnauthorized}
}

// TestAuthorizationTable calls every route as every kind of caller, each
// on fresh objects (a cluster of the owner's with a pool reported Ready),
// and checks the status; and checks that the table covers the OpenAPI
// document, route for route.
func TestAuthorizationTable(t *testing.T) {
	doc, _ := loadOpenAPI(t)
	rows := map[string]bool{}
	for _, r := range authzTable {
		if rows[r.route] {
			t.Errorf("%s has two rows", r.route)
		}
		rows[r.route] = true
		for _, c := range callers {
			if _, ok := r.want[c]; !ok {
				t.Errorf("%s: no expected status for %s", r.route, c)
			}
		}
	}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			route := method + " " + strings.NewReplacer("/clusters/{id}", "/clusters/{cluster}", "/nodepools/{id}", "/nodepools/{pool}").Replace(path)
			if !rows[route] {
				t.Errorf("openapi.yaml has %s, which the authorization table has no row for", route)
			}
		}
	}

	a := newTestAPI(t, testdb.SQLite)
	identity := map[string][]string{
		asOwner:      {"X-User-Email: " + user},
		asOther:      {"X-User-Email: " + other},
		asAdmin:      {"X-User-Email: " + admin},
		asController: {"X-User-Email: " + controller},
		asAnonymous:  nil,
		asViewer:     {a.token("vera@example.com", "platform:viewer", "other-team:admin")},
		asOperator:   {a.token("otto@example.com", "platform:operator")},
		asTeamAdmin:  {a.token("ada@example.com", "platform:admin")},
	}
	for i, r := range authzTable {
		for _, c := range callers {
			name := fmt.Sprintf("c%d-%s", i, c)
			cluster, pool := authzFixture(t, a, name)
			method, path, _ := strings.Cut(r.route, " ")
			path += r.query
			fill := strings.NewReplacer("{cluster}", cluster, "{pool}", pool, "{name}", name)
			headers := identity[c]
			if r.body != "" {
				headers = append(headers, "Content-Type: application/json")
			}
			got := a.do(method, fill.Replace(path), fill.Replace(r.body), headers...)
			if got.status != r.want[c] {
				t.Errorf("%s as %s: %d, want %d: %s", r.route, c, got.status, r.want[c], clip(got.body))
			}
		}
	}
}

// authzFixture makes a cluster of the owner's in team platform with one
// pool, reported Ready at its generation by the controller; it returns
// their ids.
func authzFixture(t *testing.T, a *testAPI, name string) (cluster, pool string) {
	t.Helper()
	r := a.as(user, "POST", "/api/v1/clusters", fmt.Sprintf(`{"name":%q,"spec":{"platform":{"type":"gcp","gcp":{"projectId":"acme-prod","location":"europe-west1","clusterName":%q}}}}`, name, name))
	if r.status != http.StatusCreated {
		t.Fatalf("fixture cluster: %d %s", r.status, r.body)
	}
	var c struct{ ID string }
	r.json(t, &c)
	if r := a.as(admin, "PATCH", "/api/v1/clusters/"+c.ID, `{"team":"platform"}`); r.status != http.StatusOK {
		t.Fatalf("fixture team: %d %s", r.status, r.body)
	}
	r = a.as(user, "POST", "/api/v1/clusters/"+c.ID+"/nodepools", `{"name":"web","spec":{"nodeCount":1,"platform":{"gcp":{"machineType":"e2-small"}}}}`)
	if r.status != http.StatusCreated {
		t.Fatalf("fixture pool: %d %s", r.status, r.body)
	}
	var p struct {
		ID         string
		Generation int64
	}
	r.json(t, &p)
	// A logical pool, which the routes by name find as {name}.
	if r := a.as(user, "POST", "/api/v1/clusters/"+c.ID+"/logicalpools", fmt.Sprintf(`{"name":%q,"spec":{"nodeCount":1,"template":{"platform":{"gcp":{"machineType":"e2-small"}}}}}`, name)); r.status != http.StatusCreated {
		t.Fatalf("fixture logical pool: %d %s", r.status, r.body)
	}
	rep, _ := json.Marshal(map[string]any{"controller_name": "gcp-nodepool-controller", "observed_generation": p.Generation,
		"conditions": []map[string]string{{"type": "Ready", "status": "True", "reason": "NodesReady"}}})
	if r := a.as(controller, "PUT", "/api/v1/nodepools/"+p.ID+"/status", string(rep)); r.status != http.StatusOK {
		t.Fatalf("fixture report: %d %s", r.status, r.body)
	}
	var spec kpool.NodePoolSpec
	_ = json.Unmarshal([]byte(`{"nodeCount":2,"platform":{"gcp":{"machineType":"e2-small"}}}`), &spec)
	ctl := kpool.WithIdentity(context.Background(), &kpool.Identity{Email: controller, Controller: true})
	if _, err := a.svc.ReportClusterStatus(ctl, c.ID, kpool.ClusterReport{Unmarked: []kpool.UnmarkedPool{{ProviderName: "legacy", Spec: &spec}}}); err != nil {
		t.Fatalf("fixture cluster report: %v", err)
	}
	return c.ID, p.ID
}

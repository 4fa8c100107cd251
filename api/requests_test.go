package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/store/testdb"
)

func TestIdentity(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *testAPI) {
		c := a.cluster(user, "prod", gcpCluster)
		p := a.pool(user, c.ID, "workers")

		wantError(t, a.do("GET", "/api/v1/nodepools", ""), http.StatusUnauthorized, kpool.CodeUnauthorized, "X-User-Email")
		wantError(t, a.do("GET", "/api/v1/nodepools", "", "X-User-Email: not-an-address"), http.StatusUnauthorized, kpool.CodeUnauthorized, "not-an-address")
		wantError(t, a.do("GET", "/api/v1/nodepools", "", "X-User-Email: Joe <joe@example.com>"), http.StatusUnauthorized, kpool.CodeUnauthorized, "bare")

		// Another user sees nothing of it, and cannot tell it exists.
		for _, r := range []reply{
			a.as(other, "GET", "/api/v1/clusters/"+c.ID, ""),
			a.as(other, "GET", "/api/v1/nodepools/"+p.ID, ""),
			a.as(other, "GET", "/api/v1/nodepools/"+p.ID+"/status", ""),
			a.as(other, "PUT", "/api/v1/nodepools/"+p.ID, `{"spec":{"nodeCount":9}}`),
			a.as(other, "DELETE", "/api/v1/nodepools/"+p.ID, ""),
			a.as(other, "DELETE", "/api/v1/clusters/"+c.ID, ""),
			a.as(other, "GET", "/api/v1/clusters/"+c.ID+"/nodepools", ""),
			a.as(other, "POST", "/api/v1/clusters/"+c.ID+"/nodepools", `{"name":"x","spec":`+gcpPool+`}`),
		} {
			want(t, r, http.StatusNotFound)
		}
		var list NodePoolList
		a.as(other, "GET", "/api/v1/nodepools?cluster_id="+c.ID, "").json(t, &list)
		if list.Total != 0 || list.NodePools == nil {
			t.Fatalf("other user's list: total %d, items %v", list.Total, list.NodePools)
		}
		// The same user in other letter case is the same user.
		want(t, a.as("USER@Example.com", "GET", "/api/v1/nodepools/"+p.ID, ""), http.StatusOK)

		// Admins see and change everything.
		want(t, a.as(admin, "GET", "/api/v1/nodepools/"+p.ID, ""), http.StatusOK)
		want(t, a.as(admin, "PATCH", "/api/v1/nodepools/"+p.ID, `{"spec":{"nodeCount":4}}`), http.StatusOK)

		// Controllers read everything, write status, and change nothing else.
		want(t, a.as(controller, "GET", "/api/v1/nodepools/"+p.ID, ""), http.StatusOK)
		wantError(t, a.as(controller, "PUT", "/api/v1/nodepools/"+p.ID, `{"spec":{"nodeCount":5}}`), http.StatusForbidden, kpool.CodeForbidden, "controller")
		wantError(t, a.as(controller, "POST", "/api/v1/clusters", `{"name":"x","spec":`+gcpCluster+`}`), http.StatusForbidden, kpool.CodeForbidden, "controller")
		report := `{"controller_name":"gcp-nodepool-controller","observed_generation":1,"conditions":[],"metadata":{}}`
		want(t, a.as(controller, "PUT", "/api/v1/nodepools/"+p.ID+"/status", report), http.StatusOK)

		// Owners and admins may not write status.
		wantError(t, a.as(user, "PUT", "/api/v1/nodepools/"+p.ID+"/status", report), http.StatusForbidden, kpool.CodeForbidden, "controller")
		wantError(t, a.as(admin, "PUT", "/api/v1/nodepools/"+p.ID+"/status", report), http.StatusForbidden, kpool.CodeForbidden, "controller")
	})
}

func TestConcurrentPuts(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *testAPI) {
		c := a.cluster(user, "prod", gcpCluster)
		p := a.pool(user, c.ID, "workers")
		statuses := func(n int, body func(i int) string, headers ...string) map[int]int {
			out := map[int]int{}
			var mu sync.Mutex
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := a.as(user, "PUT", "/api/v1/nodepools/"+p.ID, body(i), headers...)
					mu.Lock()
					out[r.status]++
					mu.Unlock()
				}()
			}
			wg.Wait()
			return out
		}
		got := statuses(50, func(i int) string {
			return fmt.Sprintf(`{"resource_version":%q,"spec":{"nodeCount":%d}}`, p.ResourceVersion, 10+i)
		})
		if got[http.StatusOK] != 1 || got[http.StatusConflict] != 49 {
			t.Fatalf("same resource_version: %v", got)
		}
		var now kpool.NodePool
		a.as(user, "GET", "/api/v1/nodepools/"+p.ID, "").json(t, &now)
		got = statuses(50, func(i int) string { return fmt.Sprintf(`{"spec":{"nodeCount":%d}}`, 100+i) })
		if got[http.StatusOK] != 50 {
			t.Fatalf("without resource_version: %v", got)
		}
		var after kpool.NodePool
		a.as(user, "GET", "/api/v1/nodepools/"+p.ID, "").json(t, &after)
		if after.Generation != now.Generation+50 {
			t.Fatalf("generation %d after 50 changes from %d", after.Generation, now.Generation)
		}
		// A no-op PUT leaves the generation (and resource_version) alone.
		r := a.as(user, "PUT", "/api/v1/nodepools/"+p.ID, fmt.Sprintf(`{"spec":{"nodeCount":%d}}`, after.Spec.Count()))
		var noop kpool.NodePool
		r.json(t, &noop)
		if noop.Generation != after.Generation || noop.ResourceVersion != after.ResourceVersion {
			t.Fatalf("no-op PUT: generation %d→%d", after.Generation, noop.Generation)
		}
		// If-Match works as resource_version does.
		wantError(t, a.as(user, "PUT", "/api/v1/nodepools/"+p.ID, `{"spec":{"nodeCount":2}}`, `If-Match: "stale"`), http.StatusConflict, kpool.CodeConflict, "modified")
		r = a.as(user, "PUT", "/api/v1/nodepools/"+p.ID, `{"spec":{"nodeCount":2}}`, "If-Match: "+r.header.Get("ETag"))
		want(t, r, http.StatusOK)
	})
}

func TestReadOnlyFieldsRoundTrip(t *testing.T) {
	a := newTestAPI(t, testdb.SQLite)
	c := a.cluster(user, "prod", gcpCluster)
	p := a.pool(user, c.ID, "workers")
	// A GET's output, edited and sent back whole, is a valid PUT.
	r := a.as(user, "GET", "/api/v1/nodepools/"+p.ID, "")
	var obj map[string]any
	r.json(t, &obj)
	obj["spec"].(map[string]any)["nodeCount"] = 7
	body, _ := json.Marshal(obj)
	r = a.as(user, "PUT", "/api/v1/nodepools/"+p.ID, string(body))
	want(t, r, http.StatusOK)
	var up kpool.NodePool
	r.json(t, &up)
	if up.Spec.Count() != 7 || up.Generation != 2 {
		t.Fatalf("round trip: %s", r.body)
	}
	// Moving a pool to another cluster is refused.
	other := a.cluster(user, "other", gcpCluster)
	r = a.as(user, "PATCH", "/api/v1/nodepools/"+p.ID, `{"cluster_id":"`+other.ID+`"}`)
	e := wantError(t, r, http.StatusBadRequest, kpool.CodeValidation, "immutable")
	if e.Fields[0].Field != "cluster_id" {
		t.Fatalf("fields %+v", e.Fields)
	}
}

func TestBadRequests(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *testAPI) {
		c := a.cluster(user, "prod", gcpCluster)
		p := a.pool(user, c.ID, "workers")
		tests := []struct {
			name, method, path, body string
			headers                  []string
			status                   int
			code, field              string
		}{
			{"unknown field", "POST", "/api/v1/nodepools", `{"name":"x","cluster_id":"` + c.ID + `","spec":{"replicas":3}}`, nil, 400, kpool.CodeValidation, "spec.replicas"},
			{"unknown top-level field", "POST", "/api/v1/clusters", `{"name":"x","spec":` + gcpCluster + `,"owner":"me"}`, nil, 400, kpool.CodeValidation, "owner"},
			{"wrong type", "PUT", "/api/v1/nodepools/" + p.ID, `{"spec":{"nodeCount":"six"}}`, nil, 400, kpool.CodeValidation, "spec.nodeCount"},
			{"bad json", "PUT", "/api/v1/nodepools/" + p.ID, `{"spec":`, nil, 400, kpool.CodeValidation, "body"},
			{"empty body", "PUT", "/api/v1/nodepools/" + p.ID, ``, nil, 400, kpool.CodeValidation, "body"},
			{"cluster id mismatch", "POST", "/api/v1/clusters/" + c.ID + "/nodepools", `{"name":"x","cluster_id":"7c9e6679-7425-40de-944b-e07fc1f90ae7","spec":` + gcpPool + `}`, nil, 400, kpool.CodeValidation, "cluster_id"},
			{"cluster id missing", "POST", "/api/v1/nodepools", `{"name":"x","spec":` + gcpPool + `}`, nil, 400, kpool.CodeValidation, "cluster_id"},
			{"limit 0", "GET", "/api/v1/nodepools?limit=0", "", nil, 400, kpool.CodeValidation, "limit"},
			{"limit 101", "GET", "/api/v1/nodepools?limit=101", "", nil, 400, kpool.CodeValidation, "limit"},
			{"limit text", "GET", "/api/v1/clusters?limit=ten", "", nil, 400, kpool.CodeValidation, "limit"},
			{"offset negative", "GET", "/api/v1/nodepools?offset=-1", "", nil, 400, kpool.CodeValidation, "offset"},
			{"offset and after", "GET", "/api/v1/nodepools?offset=1&after=MTIzLjQ", "", nil, 400, kpool.CodeValidation, "after"},
			{"bad status", "GET", "/api/v1/nodepools?status=Running", "", nil, 400, kpool.CodeValidation, "status"},
			{"bad health", "GET", "/api/v1/nodepools?health=ok", "", nil, 400, kpool.CodeValidation, "health"},
			{"bad cluster filter", "GET", "/api/v1/nodepools?cluster_id=prod", "", nil, 400, kpool.CodeValidation, "cluster_id"},
			{"unknown parameter", "GET", "/api/v1/nodepools?clusterid=" + c.ID, "", nil, 400, kpool.CodeValidation, "clusterid"},
			{"repeated parameter", "GET", "/api/v1/nodepools?limit=1&limit=2", "", nil, 400, kpool.CodeValidation, "limit"},
			{"parameter on get", "GET", "/api/v1/nodepools/" + p.ID + "?verbose=1", "", nil, 400, kpool.CodeValidation, "verbose"},
			{"bad force", "DELETE", "/api/v1/clusters/" + c.ID + "?force=maybe", "", nil, 400, kpool.CodeValidation, "force"},
			{"id differs from path", "PUT", "/api/v1/nodepools/" + p.ID, `{"id":"7c9e6679-7425-40de-944b-e07fc1f90ae7","spec":{}}`, nil, 400, kpool.CodeValidation, "id"},
			{"cluster id differs from path", "PATCH", "/api/v1/clusters/" + c.ID, `{"id":"7c9e6679-7425-40de-944b-e07fc1f90ae7"}`, nil, 400, kpool.CodeValidation, "id"},
			{"urn cluster filter", "GET", "/api/v1/nodepools?cluster_id=urn:uuid:" + c.ID, "", nil, 400, kpool.CodeValidation, "cluster_id"},
			{"if-match disagrees", "PUT", "/api/v1/nodepools/" + p.ID, `{"resource_version":"a","spec":{}}`, []string{`If-Match: "b"`}, 400, kpool.CodeValidation, "resource_version"},
			{"status ahead", "PUT", "/api/v1/nodepools/" + p.ID + "/status", `{"controller_name":"c","observed_generation":9}`, nil, 400, kpool.CodeValidation, "observed_generation"},
			{"status bad condition", "PUT", "/api/v1/nodepools/" + p.ID + "/status", `{"controller_name":"c","observed_generation":1,"conditions":[{"type":"Ready","status":"yes"}]}`, nil, 400, kpool.CodeValidation, "conditions[0].status"},
			{"not a uuid", "GET", "/api/v1/nodepools/prod", "", nil, 400, kpool.CodeValidation, "id"},
			{"cluster not a uuid", "GET", "/api/v1/clusters/prod", "", nil, 400, kpool.CodeValidation, "id"},
			{"cluster pools not a uuid", "GET", "/api/v1/clusters/prod/nodepools", "", nil, 400, kpool.CodeValidation, "id"},
			{"status not a uuid", "GET", "/api/v1/nodepools/not-a-uuid/status", "", nil, 400, kpool.CodeValidation, "id"},
			{"status report not a uuid", "PUT", "/api/v1/nodepools/not-a-uuid/status", `{"controller_name":"c","observed_generation":1}`, nil, 400, kpool.CodeValidation, "id"},
			{"put not a uuid", "PUT", "/api/v1/nodepools/not-a-uuid", `{"spec":{}}`, nil, 400, kpool.CodeValidation, "id"},
			{"patch cluster not a uuid", "PATCH", "/api/v1/clusters/x", `{}`, nil, 400, kpool.CodeValidation, "id"},
			{"delete not a uuid", "DELETE", "/api/v1/nodepools/not-a-uuid", "", nil, 400, kpool.CodeValidation, "id"},
			{"delete cluster not a uuid", "DELETE", "/api/v1/clusters/x", "", nil, 400, kpool.CodeValidation, "id"},
			{"create in cluster not a uuid", "POST", "/api/v1/clusters/prod/nodepools", `{"name":"x","spec":` + gcpPool + `}`, nil, 400, kpool.CodeValidation, "id"},
			{"placement in cluster not a uuid", "POST", "/api/v1/clusters/prod/placements", `{"manifests":"kind: Pod"}`, nil, 400, kpool.CodeValidation, "id"},
			{"urn pool id", "GET", "/api/v1/nodepools/urn:uuid:" + p.ID, "", nil, 400, kpool.CodeValidation, "id"},
			{"nil uuid pool", "GET", "/api/v1/nodepools/" + kpool.NilUUID, "", nil, 400, kpool.CodeValidation, "id"},
			{"nil uuid cluster", "DELETE", "/api/v1/clusters/" + kpool.NilUUID, "", nil, 400, kpool.CodeValidation, "id"},
			{"nil uuid body id", "POST", "/api/v1/nodepools", `{"id":"` + kpool.NilUUID + `","name":"x","cluster_id":"` + c.ID + `","spec":` + gcpPool + `}`, nil, 400, kpool.CodeValidation, "id"},
			{"nil uuid cluster body id", "POST", "/api/v1/clusters", `{"id":"` + kpool.NilUUID + `","name":"x","spec":` + gcpCluster + `}`, nil, 400, kpool.CodeValidation, "id"},
			{"nil uuid cluster_id", "POST", "/api/v1/nodepools", `{"name":"x","cluster_id":"` + kpool.NilUUID + `","spec":` + gcpPool + `}`, nil, 400, kpool.CodeValidation, "cluster_id"},
			{"query does not decode", "GET", "/api/v1/nodepools?limit=%zz", "", nil, 400, kpool.CodeValidation, "query"},
			{"query does not decode on a cluster list", "GET", "/api/v1/clusters?x=%", "", nil, 400, kpool.CodeValidation, "query"},
			{"query does not decode on a get", "GET", "/api/v1/clusters/" + c.ID + "?%zz", "", nil, 400, kpool.CodeValidation, "query"},
			{"query does not decode on a write", "PATCH", "/api/v1/nodepools/" + p.ID + "?dry_run=%zz", `{}`, nil, 400, kpool.CodeValidation, "query"},
			{"query does not decode on a delete", "DELETE", "/api/v1/nodepools/" + p.ID + "?dry_run=true&%zz", "", nil, 400, kpool.CodeValidation, "query"},
			{"query does not decode on events", "GET", "/api/v1/events?limit=%zz", "", nil, 400, kpool.CodeValidation, "query"},
			{"query and id at fault together", "GET", "/api/v1/nodepools/prod?%zz", "", nil, 400, kpool.CodeValidation, "id"},
			{"no such cluster", "POST", "/api/v1/clusters/7c9e6679-7425-40de-944b-e07fc1f90ae7/nodepools", `{"name":"x","spec":` + gcpPool + `}`, nil, 404, kpool.CodeNotFound, ""},
			{"text body", "POST", "/api/v1/clusters", `name=x`, []string{"Content-Type: text/plain"}, 415, kpool.CodeUnsupportedMedia, ""},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				who := user
				if strings.HasSuffix(tc.path, "/status") {
					who = controller
				}
				r := a.as(who, tc.method, tc.path, tc.body, tc.headers...)
				e := wantError(t, r, tc.status, tc.code, "")
				if tc.field == "" {
					return
				}
				for _, f := range e.Fields {
					if f.Field == tc.field {
						return
					}
				}
				t.Fatalf("no error on %s: %+v", tc.field, e)
			})
		}
		// Bodies over 1 MiB are refused with 413.
		big := `{"name":"x","spec":{"tags":{"k":"` + strings.Repeat("v", MaxBodyBytes) + `"}}}`
		wantError(t, a.as(user, "POST", "/api/v1/clusters", big), http.StatusRequestEntityTooLarge, kpool.CodePayloadTooLarge, "limit")
	})
}

package api

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
	"github.com/kpool/kpool/store/testdb"
)

// lpSpec is a logical pool of six nodes over three zones of a GKE cluster,
// falling back to another machine type.
const lpSpec = `{"nodeCount":6,"template":{"zones":["1","2","3"],"platform":{"gcp":{"machineType":"n2-standard-4"}}},"fallbacks":[{"machineType":"n2d-standard-4"}]}`

// TestLogicalPoolsAPI: a logical pool is created (its members the preferred
// layout), read and listed by name within its cluster, changed with
// If-Match, and deleted; a dry run stores nothing; every fault is answered
// in the API's error shape, naming the field.
func TestLogicalPoolsAPI(t *testing.T) {
	a := newTestAPI(t, testdb.SQLite)
	c := a.cluster(user, "lp", gcpCluster)
	base := "/api/v1/clusters/" + c.ID + "/logicalpools"

	dry := a.as(user, "POST", base+"?dry_run=true", `{"name":"web","spec":`+lpSpec+`}`)
	want(t, dry, http.StatusOK)
	var d LogicalPoolDryRun
	dry.json(t, &d)
	if !d.DryRun || d.LogicalPool == nil || len(d.LogicalPool.Status.Members) != 3 || dry.header.Get("ETag") != "" {
		t.Fatalf("dry run: %s", dry.body)
	}
	wantError(t, a.as(user, "GET", base+"/web", ""), http.StatusNotFound, kpool.CodeNotFound, "")

	r := a.as(user, "POST", base, `{"name":"web","spec":`+lpSpec+`}`)
	want(t, r, http.StatusCreated)
	var lp kpool.LogicalPool
	r.json(t, &lp)
	if r.header.Get("Location") != base+"/web" || r.header.Get("ETag") != strconv.Quote(lp.ResourceVersion) {
		t.Errorf("Location %q, ETag %q", r.header.Get("Location"), r.header.Get("ETag"))
	}
	zones := map[string]int{}
	for _, m := range lp.Status.Members {
		zones[m.Zone] += m.NodeCount
	}
	if len(zones) != 3 || zones["1"] != 2 || zones["2"] != 2 || zones["3"] != 2 {
		t.Errorf("preferred layout: %+v", lp.Status.Members)
	}

	got := a.as(user, "GET", base+"/web", "")
	want(t, got, http.StatusOK)
	var lp2 kpool.LogicalPool
	got.json(t, &lp2)
	if lp2.ID != lp.ID || got.header.Get("ETag") != strconv.Quote(lp.ResourceVersion) {
		t.Errorf("get: %s", got.body)
	}

	var list LogicalPoolList
	l := a.as(user, "GET", base+"?limit=1", "")
	want(t, l, http.StatusOK)
	l.json(t, &list)
	if list.Total != 1 || len(list.LogicalPools) != 1 || list.LogicalPools[0].Name != "web" || list.Limit != 1 {
		t.Errorf("list: %s", l.body)
	}

	// A stale If-Match is a conflict; the right one changes the count.
	wantError(t, a.as(user, "PATCH", base+"/web", `{"spec":{"nodeCount":9}}`, `If-Match: "stale"`), http.StatusConflict, kpool.CodeConflict, "")
	p := a.as(user, "PATCH", base+"/web", `{"spec":{"nodeCount":9}}`, "If-Match: "+strconv.Quote(lp.ResourceVersion))
	want(t, p, http.StatusOK)
	var scaled kpool.LogicalPool
	p.json(t, &scaled)
	if scaled.Spec.NodeCount == nil || *scaled.Spec.NodeCount != 9 || scaled.Generation != lp.Generation+1 {
		t.Errorf("scaled: %s", p.body)
	}

	del := a.as(user, "DELETE", base+"/web", "")
	if del.status != http.StatusAccepted && del.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", del.status, del.body)
	}
}

// TestLogicalPoolsAPIErrors: each fault answers its status and names the
// field at fault, as the API's other errors do.
func TestLogicalPoolsAPIErrors(t *testing.T) {
	a := newTestAPI(t, testdb.SQLite)
	c := a.cluster(user, "lp-errors", gcpCluster)
	base := "/api/v1/clusters/" + c.ID + "/logicalpools"
	want(t, a.as(user, "POST", base, `{"name":"web","spec":`+lpSpec+`}`), http.StatusCreated)
	tests := []struct {
		name, who, method, path, body string
		headers                       []string
		status                        int
		code, field                   string
	}{
		{"cluster in body disagrees", user, "POST", base, `{"name":"x","cluster_id":"` + guideClusterID + `","spec":` + lpSpec + `}`, nil,
			http.StatusBadRequest, kpool.CodeValidation, "cluster_id"},
		{"an id is the server's", user, "POST", base, `{"id":"` + guideClusterID + `","name":"x","spec":` + lpSpec + `}`, nil,
			http.StatusBadRequest, kpool.CodeValidation, "id"},
		{"unknown field", user, "POST", base, `{"name":"x","spec":` + lpSpec + `,"colour":"red"}`, nil,
			http.StatusBadRequest, kpool.CodeValidation, "colour"},
		{"unknown query parameter", user, "GET", base + "?status=Ready", "", nil, http.StatusBadRequest, kpool.CodeValidation, "status"},
		{"bad limit", user, "GET", base + "?limit=0", "", nil, http.StatusBadRequest, kpool.CodeValidation, "limit"},
		{"dry_run not a boolean", user, "POST", base + "?dry_run=maybe", `{"name":"x","spec":` + lpSpec + `}`, nil,
			http.StatusBadRequest, kpool.CodeValidation, "dry_run"},
		{"name cannot change", user, "PUT", base + "/web", `{"name":"other","spec":{"nodeCount":3}}`, nil,
			http.StatusBadRequest, kpool.CodeValidation, "name"},
		{"If-Match disagrees with the body", user, "PUT", base + "/web", `{"resource_version":"a","spec":{"nodeCount":3}}`, []string{`If-Match: "b"`},
			http.StatusBadRequest, kpool.CodeValidation, "resource_version"},
		{"the cluster id is not a UUID", user, "GET", "/api/v1/clusters/nope/logicalpools", "", nil, http.StatusBadRequest, kpool.CodeValidation, "id"},
		{"unknown logical pool", user, "GET", base + "/absent", "", nil, http.StatusNotFound, kpool.CodeNotFound, ""},
		{"another's cluster", other, "GET", base, "", nil, http.StatusNotFound, kpool.CodeNotFound, ""},
		{"another's logical pool", other, "DELETE", base + "/web", "", nil, http.StatusNotFound, kpool.CodeNotFound, ""},
		{"no caller", "", "GET", base, "", nil, http.StatusUnauthorized, kpool.CodeUnauthorized, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r reply
			if tt.who == "" {
				r = a.do(tt.method, tt.path, tt.body)
			} else {
				r = a.as(tt.who, tt.method, tt.path, tt.body, tt.headers...)
			}
			e := wantError(t, r, tt.status, tt.code, "")
			if tt.field == "" {
				return
			}
			for _, f := range e.Fields {
				if f.Field == tt.field {
					return
				}
			}
			t.Errorf("fields %+v do not name %s", e.Fields, tt.field)
		})
	}
}

// TestLogicalPoolsClient: the Go client's calls reach each route and
// return what the server answered.
func TestLogicalPoolsClient(t *testing.T) {
	a := newTestAPI(t, testdb.SQLite)
	cl := a.cluster(user, "lp-client", gcpCluster)
	c := NewClient(a.srv.URL, user)
	ctx := context.Background()
	name := "batch"
	body := LogicalPoolBody{Name: &name, Spec: []byte(lpSpec)}
	d, err := c.DryRunCreateLogicalPool(ctx, cl.ID, body)
	if err != nil || !d.DryRun || len(d.LogicalPool.Status.Members) != 3 {
		t.Fatalf("dry run: %+v, %v", d, err)
	}
	lp, err := c.CreateLogicalPool(ctx, cl.ID, body)
	if err != nil || lp.Name != name {
		t.Fatalf("create: %+v, %v", lp, err)
	}
	if got, err := c.LogicalPool(ctx, cl.ID, name); err != nil || got.ID != lp.ID {
		t.Fatalf("get: %+v, %v", got, err)
	}
	if l, err := c.LogicalPools(ctx, cl.ID, service.ListOptions{Name: name}); err != nil || l.Total != 1 {
		t.Fatalf("list: %+v, %v", l, err)
	}
	if dd, err := c.DryRunUpdateLogicalPool(ctx, cl.ID, name, LogicalPoolBody{Spec: []byte(`{"nodeCount":3}`)}, true); err != nil || *dd.LogicalPool.Spec.NodeCount != 3 {
		t.Fatalf("dry-run update: %+v, %v", dd, err)
	}
	up, err := c.UpdateLogicalPool(ctx, cl.ID, name, LogicalPoolBody{Spec: []byte(`{"nodeCount":3}`), ResourceVersion: lp.ResourceVersion}, true)
	if err != nil || *up.Spec.NodeCount != 3 {
		t.Fatalf("update: %+v, %v", up, err)
	}
	if _, err := c.UpdateLogicalPool(ctx, cl.ID, name, LogicalPoolBody{Spec: []byte(`{"nodeCount":4}`), ResourceVersion: lp.ResourceVersion}, false); errCode(err) != kpool.CodeConflict {
		t.Fatalf("stale update: %v", err)
	}
	if _, _, err := c.DeleteLogicalPool(ctx, cl.ID, name); err != nil {
		t.Fatalf("delete: %v", err)
	}
}

// errCode is err's API code, "" for none.
func errCode(err error) string {
	if e, ok := err.(*kpool.Error); ok {
		return e.Code
	}
	return ""
}

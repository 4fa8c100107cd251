package api

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/service"
	"github.com/kpool/kpool/store/sqlite"
)

// logicalPools: every logical pool operation answers each status the
// document gives it, through the conformance server (and, for 429 and 503,
// servers of its own recorded the same way).
func (cf *conformance) logicalPools() {
	t, a, gke := cf.t, cf.a, cf.gke
	base := "/api/v1/clusters/" + gke.ID + "/logicalpools"
	const spec = `{"nodeCount":3,"template":{"zones":["1","2","3"],"platform":{"gcp":{"machineType":"e2-standard-4"}}},"fallbacks":[{"machineType":"n2-standard-4"}]}`
	var d LogicalPoolDryRun
	a.expect(200, oaOwner, "POST", base+"?dry_run=true", `{"name":"web","spec":`+spec+`}`).decode(t, &d)
	if !d.DryRun || len(d.LogicalPool.Status.Members) != 3 {
		t.Errorf("dry run: %+v", d)
	}
	var lp kpool.LogicalPool
	a.expect(201, oaOwner, "POST", base, `{"name":"web","spec":`+spec+`}`).decode(t, &lp)
	a.expect(200, oaOwner, "GET", base, "")
	a.expect(200, oaOwner, "GET", base+"/web", "")
	a.expect(200, oaOwner, "PUT", base+"/web", `{"spec":{"nodeCount":4}}`)
	a.expect(200, oaOwner, "PATCH", base+"/web?dry_run=true", `{"spec":{"nodeCount":5}}`)
	a.expect(200, oaOwner, "PATCH", base+"/web", `{"spec":{"nodeCount":6}}`)
	a.expect(201, oaOwner, "POST", base, `{"name":"gone","spec":`+spec+`}`)
	a.expect(204, oaOwner, "DELETE", base+"/gone", "")

	big := `{"spec":{"template":{"labels":{"k":"` + strings.Repeat("v", MaxBodyBytes) + `"}}}}`
	edge := "/api/v1/clusters/" + cf.clusters["edge"].ID + "/logicalpools"
	for _, c := range []oaErrorCase{
		{400, oaOwner, "GET", base + "?limit=0", "", nil},
		{400, oaOwner, "POST", base, `{"name":"Bad Name","spec":` + spec + `}`, nil},
		{400, oaOwner, "GET", base + "/web?x=1", "", nil},
		{400, oaOwner, "PUT", base + "/web", `{"name":"other"}`, nil},
		{400, oaOwner, "PATCH", base + "/web", `{"spec":{"nodeCount":"six"}}`, nil},
		{400, oaOwner, "DELETE", base + "/web?force=true", "", nil},
		{401, "", "GET", base, "", nil},
		{401, "", "POST", base, `{}`, nil},
		{401, "", "GET", base + "/web", "", nil},
		{401, "", "PUT", base + "/web", `{}`, nil},
		{401, "", "PATCH", base + "/web", `{}`, nil},
		{401, "", "DELETE", base + "/web", "", nil},
		{403, oaController, "POST", base, `{"name":"x","spec":` + spec + `}`, nil},
		{403, oaController, "PUT", base + "/web", `{"spec":{"nodeCount":1}}`, nil},
		{403, oaController, "PATCH", base + "/web", `{"spec":{"nodeCount":1}}`, nil},
		{403, oaController, "DELETE", base + "/web", "", nil},
		{404, oaStranger, "GET", base, "", nil},
		{404, oaStranger, "POST", base, `{"name":"x","spec":` + spec + `}`, nil},
		{404, oaOwner, "GET", base + "/absent", "", nil},
		{404, oaOwner, "PUT", base + "/absent", `{}`, nil},
		{404, oaOwner, "PATCH", base + "/absent", `{}`, nil},
		{404, oaStranger, "DELETE", base + "/web", "", nil},
		{409, oaOwner, "POST", base, `{"name":"web","spec":` + spec + `}`, nil},
		{409, oaOwner, "PUT", base + "/web", `{"spec":{"nodeCount":2}}`, []string{`If-Match: "stale"`}},
		{409, oaOwner, "PATCH", base + "/web", `{"spec":{"nodeCount":2}}`, []string{`If-Match: "stale"`}},
		{413, oaOwner, "POST", base, big, nil},
		{413, oaOwner, "PUT", base + "/web", big, nil},
		{413, oaOwner, "PATCH", base + "/web", big, nil},
		{415, oaOwner, "POST", base, `{}`, []string{"Content-Type: text/plain"}},
		{415, oaOwner, "PUT", base + "/web", `{}`, []string{"Content-Type: text/plain"}},
		{415, oaOwner, "PATCH", base + "/web", `{}`, []string{"Content-Type: text/plain"}},
		{501, oaOwner, "POST", edge, `{"name":"x","spec":{"nodeCount":1,"template":{}}}`, nil},
	} {
		r := a.expect(c.status, c.who, c.method, c.path, c.body, c.headers...)
		var e ErrorBody
		r.decode(t, &e)
		if e.Error.Code == "" || Status(e.Error.Code) != c.status {
			t.Errorf("%s %s: code %q for status %d", c.method, c.path, e.Error.Code, c.status)
		}
	}
	every := []oaRequest{
		{oaOwner, "GET", base, ""}, {oaOwner, "POST", base, `{"name":"other","spec":` + spec + `}`},
		{oaOwner, "GET", base + "/web", ""}, {oaOwner, "PUT", base + "/web", `{"spec":{"nodeCount":2}}`},
		{oaOwner, "PATCH", base + "/web", `{"spec":{"nodeCount":2}}`}, {oaOwner, "DELETE", base + "/web", ""},
	}
	cf.broken.failing.Store(true)
	for _, c := range every {
		a.expect(500, c.who, c.method, c.path, c.body)
	}
	cf.broken.failing.Store(false)
	cf.logicalLimits(every)
}

// logicalLimits: a caller past its rate (429) and a database gone (503),
// each on a server of its own.
func (cf *conformance) logicalLimits(every []oaRequest) {
	t := cf.t
	lim := NewLimiter(1, 1)
	frozen := time.Now()
	lim.now = func() time.Time { return frozen }
	lsrv := httptest.NewServer(checkOpenAPIWith(t, NewServer(cf.svc, cf.access, slog.New(slog.NewTextHandler(io.Discard, nil))).Limit(lim), cf.record))
	t.Cleanup(lsrv.Close)
	la := &oaAPI{t: t, url: lsrv.URL}
	la.expect(200, oaOwner, "GET", "/api/v1/clusters", "")
	for _, c := range every {
		la.expect(429, c.who, c.method, c.path, c.body)
	}
	closed, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "closed.db"))
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	svc := service.New(closed, catalog.Registry())
	dsrv := httptest.NewServer(checkOpenAPIWith(t, NewServer(svc, cf.access, slog.New(slog.NewTextHandler(io.Discard, nil))), cf.record))
	t.Cleanup(dsrv.Close)
	da := &oaAPI{t: t, url: dsrv.URL}
	for _, c := range every {
		da.expect(503, c.who, c.method, c.path, c.body)
	}
}

package api

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/store/testdb"
)

func TestNotImplementedPlatforms(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *testAPI) {
		for _, pt := range []string{"k3s", "microvm"} {
			c := a.cluster(user, pt, `{"platform":{"type":"`+pt+`"}}`)
			r := a.as(user, "POST", "/api/v1/clusters/"+c.ID+"/nodepools", `{"name":"x","spec":{"nodeCount":1}}`)
			wantError(t, r, http.StatusNotImplemented, kpool.CodeNotImplemented, pt)
		}
	})
}

func TestClusterDelete(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *testAPI) {
		c := a.cluster(user, "prod", gcpCluster)
		p := a.pool(user, c.ID, "workers")
		a.pool(user, c.ID, "quiet")
		wantError(t, a.as(user, "DELETE", "/api/v1/clusters/"+c.ID, ""), http.StatusConflict, kpool.CodeConflict, "force=true")
		want(t, a.as(controller, "PUT", "/api/v1/nodepools/"+p.ID+"/status", `{"controller_name":"gcp-nodepool-controller","observed_generation":1}`), http.StatusOK)
		r := a.as(user, "DELETE", "/api/v1/clusters/"+c.ID+"?force=true", "")
		want(t, r, http.StatusAccepted)
		var cl kpool.Cluster
		r.json(t, &cl)
		if cl.Status.Phase != kpool.ClusterDeleting {
			t.Fatalf("cluster: %s", r.body)
		}
		r = a.as(controller, "PUT", "/api/v1/nodepools/"+p.ID+"/status",
			`{"controller_name":"gcp-nodepool-controller","observed_generation":1,"conditions":[{"type":"Deleted","status":"True","reason":"DeletedAtProvider"}]}`)
		want(t, r, http.StatusOK)
		var doc service.StatusDocument
		r.json(t, &doc)
		if !doc.Deleted {
			t.Fatalf("final report: %s", r.body)
		}
		want(t, a.as(user, "GET", "/api/v1/clusters/"+c.ID, ""), http.StatusNotFound)
		// An empty cluster goes at once.
		e := a.cluster(user, "empty", gcpCluster)
		want(t, a.as(user, "DELETE", "/api/v1/clusters/"+e.ID, ""), http.StatusNoContent)
	})
}

func TestStaleReportWarns(t *testing.T) {
	a := newTestAPI(t, testdb.SQLite)
	c := a.cluster(user, "prod", gcpCluster)
	p := a.pool(user, c.ID, "workers")
	want(t, a.as(user, "PUT", "/api/v1/nodepools/"+p.ID, `{"spec":{"nodeCount":4}}`), http.StatusOK)
	want(t, a.as(controller, "PUT", "/api/v1/nodepools/"+p.ID+"/status", `{"controller_name":"gcp-nodepool-controller","observed_generation":2}`), http.StatusOK)
	r := a.as(controller, "PUT", "/api/v1/nodepools/"+p.ID+"/status", `{"controller_name":"gcp-nodepool-controller","observed_generation":1}`)
	want(t, r, http.StatusOK)
	if !strings.Contains(r.header.Get("Warning"), "ignored") {
		t.Fatalf("no Warning on a stale report: %v", r.header)
	}
}

func TestServerBasics(t *testing.T) {
	a := newTestAPI(t, testdb.SQLite)
	want(t, a.do("GET", "/healthz", ""), http.StatusOK)
	want(t, a.do("GET", "/readyz", ""), http.StatusOK)

	r := a.as(user, "PATCH", "/api/v1/nodepools", `{}`)
	wantError(t, r, http.StatusMethodNotAllowed, kpool.CodeMethodNotAllowed, "PATCH")
	if allow := r.header.Get("Allow"); !strings.Contains(allow, "GET") || !strings.Contains(allow, "POST") {
		t.Fatalf("Allow %q", allow)
	}
	wantError(t, a.as(user, "GET", "/api/v2/nodepools", ""), http.StatusNotFound, kpool.CodeNotFound, "/api/v2/nodepools")

	r = a.do("GET", "/healthz", "", "X-Request-ID: trace-123")
	if r.header.Get("X-Request-ID") != "trace-123" {
		t.Fatalf("request id not echoed: %v", r.header)
	}
	if id := a.do("GET", "/healthz", "").header.Get("X-Request-ID"); len(id) != 16 {
		t.Fatalf("generated request id %q", id)
	}
	// The document is public.
	r = a.do("GET", "/api/v1/openapi.json", "")
	want(t, r, http.StatusOK)
	var doc map[string]any
	r.json(t, &doc)
	if doc["openapi"] == nil {
		t.Fatalf("openapi.json: %s", r.body)
	}
}

func TestPaging(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *testAPI) {
		c := a.cluster(user, "prod", gcpCluster)
		for i := range 5 {
			a.pool(user, c.ID, fmt.Sprintf("pool-%d", i))
		}
		var seen []string
		path := "/api/v1/nodepools?limit=2"
		for {
			var l NodePoolList
			a.as(user, "GET", path, "").json(t, &l)
			if l.Total != 5 || l.Limit != 2 {
				t.Fatalf("page: %+v", l)
			}
			for _, p := range l.NodePools {
				seen = append(seen, p.Name)
			}
			if l.Next == "" {
				break
			}
			path = "/api/v1/nodepools?limit=2&after=" + l.Next
		}
		if strings.Join(seen, ",") != "pool-0,pool-1,pool-2,pool-3,pool-4" {
			t.Fatalf("pages: %v", seen)
		}
		var empty ClusterList
		r := a.as(other, "GET", "/api/v1/clusters", "")
		if !strings.Contains(string(r.body), `"clusters":[]`) {
			t.Fatalf("empty list is not []: %s", r.body)
		}
		r.json(t, &empty)
	})
}

const aksCluster = `{"platform":{"type":"azure","azure":{"subscriptionId":"0b1f6471-1bf0-4dda-aec3-111122223333","resourceGroup":"rg","clusterName":"aks","location":"westeurope"}}}`

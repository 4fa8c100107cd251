package api

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/store/testdb"
)

// fieldsOf lists an error's fields, in order.
func fieldsOf(e ErrorDetail) []string {
	var out []string
	for _, f := range e.Fields {
		out = append(out, f.Field)
	}
	return out
}

// TestEveryFieldAtFault: a request wrong in several ways hears of each in
// one 400.
func TestEveryFieldAtFault(t *testing.T) {
	a := newTestAPI(t, testdb.SQLite)
	c := a.cluster(user, "prod", gcpCluster)
	tests := []struct {
		name, method, path, body string
		want                     []string
	}{
		{"cluster without name and spec", "POST", "/api/v1/clusters", `{}`, []string{"name", "spec"}},
		{"cluster with a bad id, no name, no spec", "POST", "/api/v1/clusters", `{"id":"x"}`, []string{"name", "id", "spec"}},
		{"cluster without name, spec not an object", "POST", "/api/v1/clusters", `{"spec":{"platform":7}}`, []string{"name", "spec.platform"}},
		{"pool without name and spec", "POST", "/api/v1/clusters/" + c.ID + "/nodepools", `{}`, []string{"name", "spec"}},
		{"pool without cluster, name and spec", "POST", "/api/v1/nodepools", `{}`, []string{"cluster_id", "spec", "name"}},
		{"pool with a nil id and no spec", "POST", "/api/v1/nodepools", `{"id":"` + kpool.NilUUID + `","name":"x","cluster_id":"` + c.ID + `"}`, []string{"id", "spec"}},
		{"path id and query", "GET", "/api/v1/nodepools/prod?limit=%zz", "", []string{"query", "id"}},
		{"path id, query and unknown parameter", "DELETE", "/api/v1/clusters/prod?%zz&pretty=1", "", []string{"query", "id", "pretty"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := wantError(t, a.as(user, tc.method, tc.path, tc.body), http.StatusBadRequest, kpool.CodeValidation, "")
			got := fieldsOf(e)
			for _, f := range tc.want {
				if !slices.Contains(got, f) {
					t.Errorf("fields %v, want %v", got, tc.want)
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("fields %v, want just %v: %+v", got, tc.want, e)
			}
		})
	}
}

// TestUpperCaseIDs: UUIDs are case-insensitive (RFC 9562), so an id in
// upper case finds its cluster or pool, everywhere one is taken.
func TestUpperCaseIDs(t *testing.T) {
	a := newTestAPI(t, testdb.SQLite)
	c := a.cluster(user, "prod", gcpCluster)
	p := a.pool(user, c.ID, "workers")
	cu, pu := strings.ToUpper(c.ID), strings.ToUpper(p.ID)
	tests := []struct {
		name, method, path, body string
		status                   int
	}{
		{"get cluster", "GET", "/api/v1/clusters/" + cu, "", 200},
		{"cluster's pools", "GET", "/api/v1/clusters/" + cu + "/nodepools", "", 200},
		{"pools by cluster", "GET", "/api/v1/nodepools?cluster_id=" + cu, "", 200},
		{"get pool", "GET", "/api/v1/nodepools/" + pu, "", 200},
		{"pool status", "GET", "/api/v1/nodepools/" + pu + "/status", "", 200},
		{"patch pool", "PATCH", "/api/v1/nodepools/" + pu + "?dry_run=true", `{"spec":{"nodeCount":6}}`, 200},
		{"patch pool, body id in lower case", "PATCH", "/api/v1/nodepools/" + pu + "?dry_run=true", `{"id":"` + p.ID + `","spec":{"nodeCount":6}}`, 200},
		{"patch cluster", "PATCH", "/api/v1/clusters/" + cu + "?dry_run=true", `{}`, 200},
		{"create in cluster", "POST", "/api/v1/clusters/" + cu + "/nodepools?dry_run=true", `{"name":"more","spec":` + gcpPool + `}`, 200},
		{"create in cluster, body cluster_id too", "POST", "/api/v1/clusters/" + cu + "/nodepools?dry_run=true", `{"name":"more","cluster_id":"` + c.ID + `","spec":` + gcpPool + `}`, 200},
		{"create by body cluster_id", "POST", "/api/v1/nodepools?dry_run=true", `{"name":"more","cluster_id":"` + cu + `","spec":` + gcpPool + `}`, 200},
		{"delete pool", "DELETE", "/api/v1/nodepools/" + pu + "?dry_run=true", "", 200},
		{"events of the cluster", "GET", "/api/v1/events?cluster_id=" + cu, "", 200},
		{"events of the pool", "GET", "/api/v1/events?nodepool_id=" + pu, "", 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := a.as(user, tc.method, tc.path, tc.body)
			want(t, r, tc.status)
			if strings.Contains(string(r.body), cu) || strings.Contains(string(r.body), pu) {
				t.Errorf("the answer has an id in upper case: %s", r.body)
			}
		})
	}
	var got kpool.NodePool
	a.as(user, "GET", "/api/v1/nodepools/"+pu, "").json(t, &got)
	if got.ID != p.ID || got.ClusterID != c.ID {
		t.Fatalf("got %s in %s, want %s in %s", got.ID, got.ClusterID, p.ID, c.ID)
	}
	if l := a.events(user, "?nodepool_id="+pu); len(l.Events) != 1 || l.Events[0].Type != kpool.EventNodePoolCreated {
		t.Errorf("events of the pool by its id in upper case: %+v", l.Events)
	}
	// A client-chosen id is stored as given, so it must be canonical.
	wantError(t, a.as(user, "POST", "/api/v1/nodepools", `{"id":"`+strings.ToUpper("7c9e6679-7425-40de-944b-e07fc1f90ae7")+`","name":"x","cluster_id":"`+c.ID+`","spec":`+gcpPool+`}`),
		http.StatusBadRequest, kpool.CodeValidation, "canonical")
}

package api

import (
	"net/http"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/store/testdb"
)

// TestLogicalPools: members of a logical pool agree on taints and do not
// share a zone when single-zone, or the API names the member that differs;
// changing a pool's logical pool needs a new pool, and the plan says so.
func TestLogicalPools(t *testing.T) {
	a := newTestAPI(t, testdb.SQLite)
	c := a.cluster(user, "zonal", `{"platform":{"type":"azure","azure":{"subscriptionId":"0b1f6471-1bf0-4dda-aec3-111122223333","resourceGroup":"rg","clusterName":"zonal","location":"westeurope"}}}`)
	path := "/api/v1/clusters/" + c.ID + "/nodepools"
	const block = `"platform":{"azure":{"vmSize":"Standard_D4s_v5"}},"nodeCount":1`
	want(t, a.as(user, "POST", path, `{"name":"user-1","spec":{`+block+`,"zones":["1"],"placementPool":"user","taints":[{"key":"tier","value":"web","effect":"NoSchedule"}]}}`), http.StatusCreated)
	wantError(t, a.as(user, "POST", path, `{"name":"user-1b","spec":{`+block+`,"zones":["1"],"placementPool":"user","taints":[{"key":"tier","value":"web","effect":"NoSchedule"}]}}`),
		http.StatusBadRequest, kpool.CodeValidation, "pool user-1 of logical pool user is in zone 1 already")
	wantError(t, a.as(user, "POST", path, `{"name":"user-2","spec":{`+block+`,"zones":["2"],"placementPool":"user"}}`),
		http.StatusBadRequest, kpool.CodeValidation, "pool user-1, a member of logical pool user, has taints tier=web:NoSchedule")
	r := a.as(user, "POST", path, `{"name":"user-2","spec":{`+block+`,"zones":["2"],"placementPool":"user","taints":[{"key":"tier","value":"web","effect":"NoSchedule"}]}}`)
	want(t, r, http.StatusCreated)
	var p kpool.NodePool
	r.json(t, &p)
	// An update that breaks the agreement is refused too.
	wantError(t, a.as(user, "PATCH", "/api/v1/nodepools/"+p.ID, `{"spec":{"taints":[]}}`), http.StatusBadRequest, kpool.CodeValidation, "member of logical pool user")
	// Once at the provider, another logical pool is a new pool.
	want(t, a.as(controller, "PUT", "/api/v1/nodepools/"+p.ID+"/status", `{"controller_name":"aks-controller","observed_generation":1,"metadata":{"exists":true}}`), http.StatusOK)
	dry := a.as(user, "PATCH", "/api/v1/nodepools/"+p.ID+"?dry_run=true", `{"spec":{"placementPool":"web"}}`)
	want(t, dry, http.StatusOK)
	var d DryRun
	dry.json(t, &d)
	if d.Plan == nil || len(d.Plan.Changes) != 1 || d.Plan.Changes[0].Field != "spec.placementPool" || d.Plan.Changes[0].Class != kpool.UpdateReplace {
		t.Fatalf("plan of a new logical pool: %+v", d.Plan)
	}
	wantError(t, a.as(user, "PATCH", "/api/v1/nodepools/"+p.ID, `{"spec":{"placementPool":"web"}}`), http.StatusBadRequest, kpool.CodeValidation, "spec.placementPool")
	wantError(t, a.as(user, "POST", path, `{"name":"x","spec":{`+block+`,"placementPool":"Not_A_Name"}}`), http.StatusBadRequest, kpool.CodeValidation, "spec.placementPool")
}

package api

import (
	"strings"

	"github.com/kpool/kpool"
)

// replacements: a pool whose updateStrategy carries out replace changes
// (Surge) is planned, not refused; its replacement, as its controller
// reports it, is in status.replacement; and a rollback is asked of it
// (200), of a pool with none (409), with a stale If-Match (409), a query
// (400), by a controller (403) and by a stranger (404).
func (cf *conformance) replacements() {
	t, a, dryRun := cf.t, cf.a, cf.dryRun
	var r oaReply
	r = a.expect(201, oaOwner, "POST", "/api/v1/clusters", `{"name":"surge","spec":{"platform":{"type":"azure","azure":{
		"subscriptionId":"0b1f6471-1bf0-4dda-aec3-111122223333","resourceGroup":"rg-surge","clusterName":"surge","location":"westeurope"}}}}`)
	var aks kpool.Cluster
	r.decode(t, &aks)
	r = a.expect(201, oaOwner, "POST", "/api/v1/clusters/"+aks.ID+"/nodepools", `{"name":"surging","spec":{
		"platform":{"azure":{"vmSize":"Standard_D4s_v5"}},"nodeCount":2,
		"updateStrategy":{"replacement":"Surge","maxSurge":"50%","drainTimeout":"20m","soak":"5m","onStuck":"Stop"}}}`)
	var p kpool.NodePool
	r.decode(t, &p)
	pp := "/api/v1/nodepools/" + p.ID
	a.expect(200, oaOwner, "PATCH", pp, `{"spec":{"updateStrategy":{"maxUnavailable":"1","soak":null}}}`, "Content-Type: application/merge-patch+json")
	a.expect(400, oaOwner, "PATCH", pp, `{"spec":{"updateStrategy":{"replacement":"Recreate"}}}`)
	a.expect(200, oaAKSController, "PUT", pp+"/status", `{"controller_name":"aks-nodepool-controller","observed_generation":2,"metadata":{"exists":true}}`)
	a.expect(409, oaOwner, "POST", pp+"/rollback", "")
	vm := `{"spec":{"platform":{"azure":{"vmSize":"Standard_D8s_v5"}}}}`
	d := dryRun(a.expect(200, oaOwner, "PATCH", pp+"?dry_run=true", vm))
	if d.Refused != nil || d.Plan == nil || d.Plan.Replacement != "surge 50%, drain 20m0s, unavailable 1" || len(d.Plan.Changes) != 1 || d.Plan.Changes[0].Class != kpool.UpdateReplace {
		t.Fatalf("a replace change under Surge, dry run: %+v", d)
	}
	a.expect(200, oaOwner, "PATCH", pp, vm)
	a.expect(200, oaAKSController, "PUT", pp+"/status", `{"controller_name":"aks-nodepool-controller","observed_generation":3,"metadata":{"exists":true,
		"replacement":{"generation":3,"step":"Draining","from":"surging","to":"surging2","startedAt":"2025-10-17T10:30:00Z",
		"draining":{"aks-surging-1":"2025-10-17T10:40:00Z"},"oldNodes":2,"newNodes":2,"blocking":["PodDisruptionBudget default/web"]}}}`)
	r = a.expect(200, oaOwner, "GET", pp, "")
	r.decode(t, &p)
	if rp := p.Status.Replacement; rp == nil || rp.Step != kpool.StepDraining || rp.To != "surging2" || rp.RollbackRequestedAt != nil {
		t.Fatalf("status.replacement: %s", clip(r.body))
	}
	a.expect(409, oaOwner, "POST", pp+"/rollback", "", `If-Match: "stale"`)
	a.expect(400, oaOwner, "POST", pp+"/rollback?now=1", "")
	a.expect(401, "", "POST", pp+"/rollback", "")
	a.expect(403, oaController, "POST", pp+"/rollback", "")
	a.expect(404, oaStranger, "POST", pp+"/rollback", "")
	r = a.expect(200, oaOwner, "POST", pp+"/rollback", "", `If-Match: "`+p.ResourceVersion+`"`)
	var back kpool.NodePool
	r.decode(t, &back)
	if rp := back.Status.Replacement; rp == nil || rp.RollbackRequestedAt == nil || r.header.Get("ETag") != `"`+back.ResourceVersion+`"` {
		t.Fatalf("rollback: %s (ETag %s)", clip(r.body), r.header.Get("ETag"))
	}
	// Asked again: nothing changes.
	r = a.expect(200, oaOwner, "POST", pp+"/rollback", "")
	if !strings.Contains(string(r.body), `"rollbackRequestedAt"`) {
		t.Fatalf("rollback asked again: %s", clip(r.body))
	}
	cf.pools["surging"] = back
}

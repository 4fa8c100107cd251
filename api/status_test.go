package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/store/testdb"
)

// TestNoController checks the status of pools on a platform that no
// controller in this kpool acts on: Pending, saying why, until an external
// controller reports; then the reports drive it. A platform with a driver
// here waits for it (Controller Unknown).
func TestNoController(t *testing.T) {
	reg := catalog.Registry()
	reg.Add(fake.New(fake.Options{Platform: kpool.PlatformAzure}))
	a := newTestAPIOn(t, testdb.SQLite, reg)

	gke := a.cluster(user, "gke", gcpCluster)
	p := a.pool(user, gke.ID, "workers")
	var st service.StatusDocument
	a.as(user, "GET", "/api/v1/nodepools/"+p.ID+"/status", "").json(t, &st)
	ctl := condition(st.Status, kpool.ConditionController)
	msg := "no controller in this kpool acts on gcp pools; an external controller must report status"
	if st.Status.Phase != kpool.PhasePending || ctl.Status != kpool.ConditionFalse || ctl.Reason != kpool.ReasonNoController ||
		st.Status.Message != msg || !st.Status.NoController() {
		t.Fatalf("status of a pool no controller acts on: %+v", st.Status)
	}
	// The list shows it too (the status is stored, reads compute nothing).
	var l NodePoolList
	a.as(user, "GET", "/api/v1/nodepools?cluster_id="+gke.ID, "").json(t, &l)
	if len(l.NodePools) != 1 || !l.NodePools[0].Status.NoController() {
		t.Fatalf("list: %+v", l.NodePools)
	}
	// An external controller's report is accepted and drives the status.
	r := a.as(controller, "PUT", "/api/v1/nodepools/"+p.ID+"/status",
		`{"controller_name":"gcp-nodepool-controller","observed_generation":1,"conditions":[{"type":"Ready","status":"True"}]}`)
	want(t, r, http.StatusOK)
	r.json(t, &st)
	if ctl := condition(st.Status, kpool.ConditionController); st.Status.Phase != kpool.PhaseReady || ctl.Status != kpool.ConditionTrue || st.Status.NoController() {
		t.Fatalf("status after an external controller's report: %+v", st.Status)
	}
	// A spec change keeps the controller's reports: still not NoController.
	r = a.as(user, "PATCH", "/api/v1/nodepools/"+p.ID, `{"spec":{"nodeCount":4}}`)
	want(t, r, http.StatusOK)
	var q kpool.NodePool
	r.json(t, &q)
	if q.Status.Phase != kpool.PhaseUpdating || q.Status.NoController() {
		t.Fatalf("after a spec change: %+v", q.Status)
	}

	// AKS has a driver here: its pool waits for this kpool's controller.
	aks := a.cluster(user, "aks", aksCluster)
	r = a.as(user, "POST", "/api/v1/clusters/"+aks.ID+"/nodepools", `{"name":"web","spec":{"platform":{"azure":{"vmSize":"Standard_D4s_v5"}}}}`)
	want(t, r, http.StatusCreated)
	r.json(t, &q)
	if ctl := condition(q.Status, kpool.ConditionController); q.Status.Phase != kpool.PhasePending || ctl.Status != kpool.ConditionUnknown || q.Status.NoController() {
		t.Fatalf("a pool with a driver here: %+v", q.Status)
	}
}

// TestRepairFailedCreate is issue 11's item 6: a pool whose create failed at
// AKS (its VM size is not offered in zone 3 there) can be given other zones,
// since nothing exists at the provider to change in place; once a
// controller says it may exist, AKS's limits hold again. (Zone 4, which no
// Azure region has, is refused before any create: issue 17.)
func TestRepairFailedCreate(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *testAPI) {
		c := a.cluster(user, "aks", aksCluster)
		wantError(t, a.as(user, "POST", "/api/v1/clusters/"+c.ID+"/nodepools", `{"name":"web","spec":{"platform":{"azure":{"vmSize":"Standard_D4s_v5"}},"zones":["4"]}}`),
			http.StatusBadRequest, kpool.CodeValidation, "spec.zones[0]")
		r := a.as(user, "POST", "/api/v1/clusters/"+c.ID+"/nodepools", `{"name":"web","spec":{"platform":{"azure":{"vmSize":"Standard_D4s_v5"}},"zones":["3"]}}`)
		want(t, r, http.StatusCreated)
		var p kpool.NodePool
		r.json(t, &p)
		failed := `{"controller_name":"aks-nodepool-controller","observed_generation":1,
			"conditions":[{"type":"Ready","status":"False","reason":"ProviderRefused","message":"Standard_D4s_v5 is not available in zone 3 of westeurope"},
			              {"type":"Progressing","status":"False","reason":"ProviderRefused"}],
			"metadata":{"provisioning_state":"NotFound","failed_generation":1,"exists":false}}`
		want(t, a.as(aksController, "PUT", "/api/v1/nodepools/"+p.ID+"/status", failed), http.StatusOK)

		// The plan says why a zone change is not a replace.
		path := "/api/v1/nodepools/" + p.ID
		r = a.as(user, "PATCH", path+"?dry_run=true", `{"spec":{"zones":["1"]}}`)
		want(t, r, http.StatusOK)
		var dry DryRun
		r.json(t, &dry)
		if len(dry.Plan.Changes) != 1 || dry.Plan.Changes[0].Field != "spec.zones" || dry.Plan.Changes[0].Class != kpool.UpdateInPlace ||
			!strings.HasPrefix(dry.Plan.Changes[0].Reason, "the pool does not exist at the provider yet") {
			t.Fatalf("plan: %s", r.body)
		}
		// Checked as a create would be: what AKS lacks is still refused.
		wantError(t, a.as(user, "PATCH", path, `{"spec":{"zones":["1"],"platform":{"azure":{"vmSize":"Standard_D4s_v5","osDiskSizeGB":10}}}}`),
			http.StatusBadRequest, kpool.CodeValidation, "osDiskSizeGB")
		r = a.as(user, "PATCH", path, `{"spec":{"zones":["1"]}}`)
		want(t, r, http.StatusOK)
		r.json(t, &p)
		if p.Generation != 2 || strings.Join(p.Spec.Zones, ",") != "1" || p.Status.Phase == kpool.PhaseFailed {
			t.Fatalf("repaired pool: generation %d, zones %v, phase %s", p.Generation, p.Spec.Zones, p.Status.Phase)
		}

		// A second controller that says nothing of existence: the pool may
		// exist, and AKS cannot change zones in place.
		want(t, a.as(controller, "PUT", path+"/status", `{"controller_name":"inventory","observed_generation":2}`), http.StatusOK)
		wantError(t, a.as(user, "PATCH", path, `{"spec":{"zones":["2"]}}`), http.StatusBadRequest, kpool.CodeValidation, "spec.zones")
		// Every controller saying it does not exist lifts the limits again;
		// one saying it does puts them back.
		want(t, a.as(controller, "PUT", path+"/status", `{"controller_name":"inventory","observed_generation":2,"metadata":{"exists":false}}`), http.StatusOK)
		want(t, a.as(user, "PATCH", path+"?dry_run=true", `{"spec":{"zones":["2"]}}`), http.StatusOK)
		want(t, a.as(aksController, "PUT", path+"/status", `{"controller_name":"aks-nodepool-controller","observed_generation":2,"metadata":{"exists":true}}`), http.StatusOK)
		wantError(t, a.as(user, "PATCH", path, `{"spec":{"zones":["2"]}}`), http.StatusBadRequest, kpool.CodeValidation, "spec.zones")
	})
}

// advisory are the warnings that are not preflight's.
func advisory(ws []string) []string {
	var out []string
	for _, w := range ws {
		if !strings.HasPrefix(w, "preflight") {
			out = append(out, w)
		}
	}
	return out
}

// TestAdvisoryFields is issue 11's item 11: the guide's autoscaler targets
// and delays are accepted and stored, planned advisory (no provider applies
// them per pool), and every write that sets them is answered with a Warning
// naming each field and why.
func TestAdvisoryFields(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *testAPI) {
		c := a.cluster(user, "aks", aksCluster)
		warnings := func(r reply) map[string]string {
			t.Helper()
			out := map[string]string{}
			for _, h := range r.header.Values("Warning") {
				text := WarningText(h)
				if !strings.HasPrefix(h, `299 kpool "`) || text == h {
					t.Fatalf("Warning %q is not 299 kpool \"…\"", h)
				}
				field, _, _ := strings.Cut(text, " ")
				if field != "preflight" { // no facts learnt here: TestPreflight has them
					out[field] = text
				}
			}
			return out
		}
		r := a.as(user, "POST", "/api/v1/clusters/"+c.ID+"/nodepools", `{"name":"web","spec":{"platform":{"azure":{"vmSize":"Standard_D4s_v5"}},
			"autoscaling":{"enabled":true,"minNodes":1,"maxNodes":5,"targetCPUUtilization":70,"targetMemoryUtilization":80,"scaleDownDelay":"10m","scaleUpDelay":"3m"}}}`)
		want(t, r, http.StatusCreated)
		var p kpool.NodePool
		r.json(t, &p)
		w := warnings(r)
		for _, f := range []string{"targetCPUUtilization", "targetMemoryUtilization", "scaleDownDelay", "scaleUpDelay"} {
			if !strings.Contains(w["spec.autoscaling."+f], "is stored but not applied to the pool: AKS takes autoscaler targets and delays cluster-wide") {
				t.Errorf("create: no warning for %s: %v", f, w)
			}
		}
		if len(w) != 4 || p.Spec.Autoscaling.TargetCPUUtilization == nil || *p.Spec.Autoscaling.TargetCPUUtilization != 70 || p.Spec.Autoscaling.ScaleUpDelay != "3m" {
			t.Fatalf("create: %d warnings, stored %+v", len(w), p.Spec.Autoscaling)
		}
		path := "/api/v1/nodepools/" + p.ID
		want(t, a.as(aksController, "PUT", path+"/status", `{"controller_name":"aks-nodepool-controller","observed_generation":1,"metadata":{"exists":true}}`), http.StatusOK)

		// A change of one is planned advisory, not in place, and warned of.
		r = a.as(user, "PATCH", path+"?dry_run=true", `{"spec":{"autoscaling":{"targetCPUUtilization":60,"maxNodes":6}}}`)
		want(t, r, http.StatusOK)
		var dry DryRun
		r.json(t, &dry)
		classes := map[string]kpool.UpdateClass{}
		for _, ch := range dry.Plan.Changes {
			classes[ch.Field] = ch.Class
		}
		if len(classes) != 2 || classes["spec.autoscaling"] != kpool.UpdateInPlace || classes["spec.autoscaling.targetCPUUtilization"] != kpool.UpdateAdvisory ||
			len(advisory(dry.Plan.Warnings)) != 1 || len(warnings(r)) != 1 {
			t.Fatalf("plan: %s (warnings %v)", r.body, r.header.Values("Warning"))
		}
		r = a.as(user, "PATCH", path, `{"spec":{"autoscaling":{"targetCPUUtilization":60}}}`)
		want(t, r, http.StatusOK)
		if w := warnings(r); len(w) != 1 || w["spec.autoscaling.targetCPUUtilization"] == "" {
			t.Fatalf("PATCH: warnings %v", w)
		}
		// A PUT that sends one again sets it too; one that does not send
		// any is not warned, though the pool still has them.
		r = a.as(user, "PUT", path, `{"spec":{"autoscaling":{"scaleUpDelay":"3m"}}}`)
		want(t, r, http.StatusOK)
		if w := warnings(r); len(w) != 1 || w["spec.autoscaling.scaleUpDelay"] == "" {
			t.Fatalf("PUT of the same value: warnings %v", w)
		}
		r = a.as(user, "PUT", path, `{"spec":{"nodeCount":2}}`)
		want(t, r, http.StatusOK)
		if w := warnings(r); len(w) != 0 {
			t.Fatalf("PUT without them: warnings %v", w)
		}
		// Removing them is no warning either.
		r = a.as(user, "PATCH", path, `{"spec":{"autoscaling":{"targetCPUUtilization":null,"targetMemoryUtilization":null,"scaleDownDelay":null,"scaleUpDelay":null}}}`)
		want(t, r, http.StatusOK)
		var cleared kpool.NodePool
		r.json(t, &cleared)
		if w := warnings(r); len(w) != 0 || cleared.Spec.Autoscaling.TargetCPUUtilization != nil || !cleared.Spec.Autoscaling.On() {
			t.Fatalf("removing them: warnings %v, autoscaling %+v", w, cleared.Spec.Autoscaling)
		}
	})
}

// TestVersion: GET /version answers without authentication, with the
// binary's version, commit and Go version.
func TestVersion(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, testdb.SQLite)
	r := a.do("GET", "/version", "")
	want(t, r, http.StatusOK)
	var v Version
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatal(err)
	}
	if v != BuildVersion() || v.Version == "" || !strings.HasPrefix(v.Go, "go") {
		t.Errorf("GET /version = %+v, want %+v", v, BuildVersion())
	}
}

// TestForceDeletePool: a pool whose controller never confirms its delete
// (its cluster's endpoint is gone) stays Deleting; its owner cannot force
// it away; an admin can, at once, and the audit trail says the pool at
// the provider was left as it is.
func TestForceDeletePool(t *testing.T) {
	a := newTestAPI(t, testdb.SQLite)
	c := a.cluster(user, "gone", gcpCluster)
	p := a.pool(user, c.ID, "web")
	want(t, a.as(controller, "PUT", "/api/v1/nodepools/"+p.ID+"/status", `{"controller_name":"gcp-nodepool-controller","observed_generation":1,"conditions":[{"type":"Ready","status":"True"}]}`), http.StatusOK)
	want(t, a.as(user, "DELETE", "/api/v1/nodepools/"+p.ID, ""), http.StatusAccepted)
	want(t, a.as(user, "DELETE", "/api/v1/nodepools/"+p.ID, ""), http.StatusAccepted) // still Deleting
	wantError(t, a.as(user, "DELETE", "/api/v1/nodepools/"+p.ID+"?force=true", ""), http.StatusForbidden, kpool.CodeForbidden, "only admins")
	want(t, a.as(admin, "DELETE", "/api/v1/nodepools/"+p.ID+"?force=true", ""), http.StatusNoContent)
	want(t, a.as(user, "GET", "/api/v1/nodepools/"+p.ID, ""), http.StatusNotFound)
	evs := a.events(user, "?nodepool_id="+p.ID+"&type=nodepool.deleted")
	if len(evs.Events) != 1 || evs.Events[0].Actor != admin || !strings.Contains(evs.Events[0].Detail, "left as it is") {
		t.Fatalf("audit: %+v", evs.Events)
	}
	a.pool(user, c.ID, "web") // the name is free again
}

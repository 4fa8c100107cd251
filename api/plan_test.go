package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/store/testdb"
)

func TestChangePlan(t *testing.T) {
	a := newTestAPI(t, testdb.SQLite)
	c := a.cluster(user, "aks", aksCluster)
	r := a.as(user, "POST", "/api/v1/clusters/"+c.ID+"/nodepools", `{"name":"gpu-workers","spec":{"platform":{"azure":{"vmSize":"Standard_D4s_v5"}},"zones":["westeurope-1"],"nodeCount":2}}`)
	want(t, r, http.StatusCreated)
	var p kpool.NodePool
	r.json(t, &p)
	if p.ProviderName != "gpuworkers" || strings.Join(p.Spec.Zones, ",") != "1" {
		t.Fatalf("provider name %q, zones %v", p.ProviderName, p.Spec.Zones)
	}

	// While no controller reports that the pool exists at AKS, it has no
	// in-place limits: a new vmSize is planned in place.
	r = a.as(user, "PATCH", "/api/v1/nodepools/"+p.ID+"?dry_run=true", `{"spec":{"platform":{"azure":{"vmSize":"Standard_D8s_v5"}}}}`)
	want(t, r, http.StatusOK)
	var before DryRun
	r.json(t, &before)
	if len(before.Plan.Changes) != 1 || before.Plan.Changes[0].Class != kpool.UpdateInPlace {
		t.Fatalf("plan of a pool not at the provider: %+v", before.Plan)
	}
	want(t, a.as(aksController, "PUT", "/api/v1/nodepools/"+p.ID+"/status", `{"controller_name":"aks-nodepool-controller","observed_generation":1,"metadata":{"exists":true}}`), http.StatusOK)
	a.as(user, "GET", "/api/v1/nodepools/"+p.ID, "").json(t, &p)

	// Once one does, vmSize and zones cannot change on AKS: 400 naming
	// each field.
	r = a.as(user, "PATCH", "/api/v1/nodepools/"+p.ID, `{"spec":{"platform":{"azure":{"vmSize":"Standard_D8s_v5"}},"zones":["1","2"]}}`)
	e := wantError(t, r, http.StatusBadRequest, kpool.CodeValidation, "azure")
	fields := map[string]bool{}
	for _, f := range e.Fields {
		fields[f.Field] = true
	}
	if !fields["spec.platform.azure.vmSize"] || !fields["spec.zones"] {
		t.Fatalf("fields %+v", e.Fields)
	}

	// A dry run returns the plan and the pool, and stores nothing.
	r = a.as(user, "PATCH", "/api/v1/nodepools/"+p.ID+"?dry_run=true", `{"spec":{"nodeCount":5,"kubernetesVersion":"1.31"}}`)
	want(t, r, http.StatusOK)
	var dry DryRun
	r.json(t, &dry)
	if !dry.DryRun || dry.NodePool == nil || dry.NodePool.Spec.Count() != 5 || dry.NodePool.Generation != 2 || dry.Plan == nil || len(dry.Plan.Changes) != 2 {
		t.Fatalf("dry run: %s", r.body)
	}
	classes := map[string]kpool.UpdateClass{}
	for _, ch := range dry.Plan.Changes {
		classes[ch.Field] = ch.Class
	}
	if classes["spec.nodeCount"] != kpool.UpdateInPlace || classes["spec.kubernetesVersion"] != kpool.UpdateRollsNodes || dry.Plan.Provider != "azure" || dry.Plan.ProviderName != "gpuworkers" {
		t.Fatalf("plan %+v", dry.Plan)
	}
	var stored kpool.NodePool
	a.as(user, "GET", "/api/v1/nodepools/"+p.ID, "").json(t, &stored)
	if stored.Generation != 1 || stored.Spec.Count() != 2 || stored.ResourceVersion != p.ResourceVersion {
		t.Fatalf("a dry run stored something: %+v", stored)
	}
	// A dry run of a change the write refuses answers 200 with the plan,
	// the replace rows and their reasons (what a dry run is for), the pool
	// as it stays, and the error the write would answer with.
	for _, body := range []string{`{"spec":{"zones":["2"]}}`, `{"spec":{"zones":["2"],"nodeCount":4}}`} {
		r = a.as(user, "PATCH", "/api/v1/nodepools/"+p.ID+"?dry_run=true", body)
		want(t, r, http.StatusOK)
		var refused DryRun
		r.json(t, &refused)
		var replace *kpool.Change
		for i, ch := range refused.Plan.Changes {
			if ch.Field == "spec.zones" {
				replace = &refused.Plan.Changes[i]
			}
		}
		if replace == nil || replace.Class != kpool.UpdateReplace || !strings.Contains(replace.Reason, "availabilityZones") ||
			refused.Refused == nil || refused.Refused.Code != kpool.CodeValidation || len(refused.Refused.Fields) != 1 || refused.Refused.Fields[0].Field != "spec.zones" ||
			refused.NodePool == nil || refused.NodePool.Generation != 1 || strings.Join(refused.NodePool.Spec.Zones, ",") != "1" || r.header.Get("ETag") != "" {
			t.Fatalf("dry run of a replace %s: %s", body, r.body)
		}
		// The write itself is refused as before.
		wantError(t, a.as(user, "PATCH", "/api/v1/nodepools/"+p.ID, body), http.StatusBadRequest, kpool.CodeValidation, "spec.zones")
	}
	// A dry run that the write takes has no refusal.
	if strings.Contains(string(a.as(user, "PATCH", "/api/v1/nodepools/"+p.ID+"?dry_run=true", `{"spec":{"nodeCount":4}}`).body), "refused") {
		t.Fatal("a dry run the write takes says refused")
	}
	// Dry-run create and delete.
	r = a.as(user, "POST", "/api/v1/nodepools?dry_run=true", `{"name":"more","cluster_id":"`+c.ID+`","spec":{"platform":{"azure":{"vmSize":"Standard_D4s_v5"}}}}`)
	want(t, r, http.StatusOK)
	r.json(t, &dry)
	if dry.NodePool == nil || dry.NodePool.ProviderName != "more" || r.header.Get("Location") != "" {
		t.Fatalf("dry-run create: %s", r.body)
	}
	want(t, a.as(user, "GET", "/api/v1/nodepools?cluster_id="+c.ID, ""), http.StatusOK)
	var l NodePoolList
	a.as(user, "GET", "/api/v1/nodepools?cluster_id="+c.ID, "").json(t, &l)
	if l.Total != 1 {
		t.Fatalf("dry-run create stored a pool: %d", l.Total)
	}
	r = a.as(user, "DELETE", "/api/v1/nodepools/"+p.ID+"?dry_run=true", "")
	want(t, r, http.StatusOK)
	r.json(t, &dry)
	if dry.Gone || dry.NodePool == nil || dry.NodePool.Status.Phase != kpool.PhaseDeleting {
		t.Fatalf("dry-run delete of a reported pool: %s", r.body)
	}
	want(t, a.as(user, "GET", "/api/v1/nodepools/"+p.ID, ""), http.StatusOK)
	wantError(t, a.as(user, "DELETE", "/api/v1/nodepools/"+p.ID+"?dry_run=maybe", ""), http.StatusBadRequest, kpool.CodeValidation, "dry_run")
}

func TestCapabilityBoundaries(t *testing.T) {
	a := newTestAPI(t, testdb.SQLite)
	civo := a.cluster(user, "civo", `{"platform":{"type":"civo","civo":{"region":"LON1","clusterId":"7c9e6679-7425-40de-944b-e07fc1f90ae7"}}}`)
	wantError(t, a.as(user, "POST", "/api/v1/clusters/"+civo.ID+"/nodepools", `{"name":"x","spec":{"platform":{"civo":{"size":"g4s.kube.medium"}},"zones":["1"]}}`),
		http.StatusNotImplemented, kpool.CodeNotImplemented, "zones")
	r := a.as(user, "POST", "/api/v1/clusters/"+civo.ID+"/nodepools", `{"name":"x","spec":{"platform":{"civo":{"size":"g4s.kube.medium"}}}}`)
	want(t, r, http.StatusCreated)
	var p kpool.NodePool
	r.json(t, &p)
	wantError(t, a.as(user, "PATCH", "/api/v1/nodepools/"+p.ID, `{"spec":{"kubernetesVersion":"1.31"}}`), http.StatusNotImplemented, kpool.CodeNotImplemented, "kubernetesVersion")
	// A report without metadata.exists says nothing of it: the pool may
	// exist, so a new size needs a new pool.
	want(t, a.as(controller, "PUT", "/api/v1/nodepools/"+p.ID+"/status", `{"controller_name":"civo-controller","observed_generation":1}`), http.StatusOK)
	wantError(t, a.as(user, "PATCH", "/api/v1/nodepools/"+p.ID, `{"spec":{"platform":{"civo":{"size":"g4s.kube.large"}}}}`), http.StatusBadRequest, kpool.CodeValidation, "civo")
	aws := a.cluster(user, "aws", `{"platform":{"type":"aws","aws":{"region":"us-west-2","clusterName":"eks","nodeRoleArn":"arn:aws:iam::123456789012:role/n","subnets":{"us-west-2a":"subnet-0123456789abcdef0"}}}}`)
	wantError(t, a.as(user, "POST", "/api/v1/clusters/"+aws.ID+"/nodepools", `{"name":"x","spec":{"platform":{"aws":{"instanceType":"m5.large","availabilityZones":["us-west-2b"]}}}}`),
		http.StatusBadRequest, kpool.CodeValidation, "subnet")
}

// condition returns a status's condition of type t.
func condition(st kpool.NodePoolStatus, t string) kpool.Condition {
	for _, c := range st.Conditions {
		if c.Type == t {
			return c
		}
	}
	return kpool.Condition{}
}

package api

import (
	"context"
	"strings"
	"time"

	"github.com/kpool/kpool"
)

// lists pages through clusters and pools with every parameter, as callers
// who see different things.
func (cf *conformance) lists() {
	t, a, gke, clusterSpecs := cf.t, cf.a, cf.gke, cf.clusterSpecs
	r := a.expect(200, oaOwner, "GET", "/api/v1/clusters?limit=3", "")
	var cl ClusterList
	r.decode(t, &cl)
	if cl.Next == "" || len(cl.Clusters) != 3 || cl.Total != len(clusterSpecs) {
		t.Fatalf("first page of clusters: %s", clip(r.body))
	}
	a.expect(200, oaOwner, "GET", "/api/v1/clusters?limit=3&after="+cl.Next, "")
	a.expect(200, oaOwner, "GET", "/api/v1/clusters?offset=5&limit=100", "")
	a.expect(200, oaStranger, "GET", "/api/v1/clusters", "")
	a.expect(200, oaAdmin, "GET", "/api/v1/clusters", "")
	r = a.expect(200, oaOwner, "GET", "/api/v1/nodepools?limit=2", "")
	var pl NodePoolList
	r.decode(t, &pl)
	if pl.Next == "" {
		t.Fatalf("first page of pools: %s", clip(r.body))
	}
	a.expect(200, oaOwner, "GET", "/api/v1/nodepools?limit=2&after="+pl.Next, "")
	a.expect(200, oaOwner, "GET", "/api/v1/nodepools?offset=1&limit=10&status=pending&health=UNKNOWN&cluster_id="+gke.ID+"&clusterId="+gke.ID, "")
	a.expect(200, oaOwner, "GET", "/api/v1/nodepools?clusterId="+gke.ID, "")
	a.expect(200, oaOwner, "GET", "/api/v1/nodepools?status=Ready&health=healthy", "")
	a.expect(200, oaController, "GET", "/api/v1/nodepools", "")
	a.expect(200, oaOwner, "GET", "/api/v1/clusters/"+gke.ID+"/nodepools?limit=1&offset=1&status=Pending&health=unknown", "")
	r = a.expect(200, oaOwner, "GET", "/api/v1/clusters/"+gke.ID+"/nodepools?limit=1", "")
	r.decode(t, &pl)
	a.expect(200, oaOwner, "GET", "/api/v1/clusters/"+gke.ID+"/nodepools?limit=1&after="+pl.Next, "")
}

// reads gets a cluster and a pool, and returns the pool's ETag.
func (cf *conformance) reads() string {
	a, gke, pools := cf.a, cf.gke, cf.pools
	var r oaReply
	a.expect(200, oaOwner, "GET", "/api/v1/clusters/"+gke.ID, "")
	a.expect(200, oaController, "GET", "/api/v1/clusters/"+gke.ID, "")
	// What the cluster offers: nothing learnt yet, then a report (with no
	// catalogue, which leaves the later stages' pools unchecked).
	a.expect(404, oaOwner, "GET", "/api/v1/clusters/"+gke.ID+"/facts", "")
	facts := &kpool.ClusterFacts{LearnedAt: time.Now(), Version: "1.31.2", Zones: []string{"1", "2", "3"}}
	if err := cf.svc.ReportClusterFacts(kpool.WithIdentity(context.Background(), &kpool.Identity{Email: oaController, Controller: true}), gke.ID, facts); err != nil {
		cf.t.Fatal(err)
	}
	a.expect(200, oaOwner, "GET", "/api/v1/clusters/"+gke.ID+"/facts", "")
	gpu := pools["gpu"]
	r = a.expect(200, oaOwner, "GET", "/api/v1/nodepools/"+gpu.ID, "")
	etag := r.header.Get("ETag")
	cf.gpu = gpu
	return etag
}

// updates PUTs and PATCHes pools and clusters: If-Match and
// resource_version, merge patches that remove fields, a PUT's null, a GET's
// output sent back.
func (cf *conformance) updates(etag string) {
	t, a, gke, gpu, pools, clusters := cf.t, cf.a, cf.gke, cf.gpu, cf.pools, cf.clusters
	var r oaReply
	r = a.expect(200, oaOwner, "PUT", "/api/v1/nodepools/"+gpu.ID, `{"spec":{"nodeCount":4}}`, "If-Match: "+etag)
	stale := etag
	etag = r.header.Get("ETag")
	a.expect(409, oaOwner, "PUT", "/api/v1/nodepools/"+gpu.ID, `{"spec":{"nodeCount":4}}`, "If-Match: "+stale)
	a.expect(409, oaOwner, "PATCH", "/api/v1/nodepools/"+gpu.ID, `{"resource_version":"0000000000000000","spec":{"nodeCount":4}}`)
	a.expect(400, oaOwner, "PUT", "/api/v1/nodepools/"+gpu.ID, `{"resource_version":"a","spec":{}}`, `If-Match: "b"`)
	// A merge patch that removes fields with null. (Not the accelerators:
	// GKE fixes them when the pool is created, so that change is a 400 once
	// a controller reports that the pool exists.)
	r = a.expect(200, oaController, "PUT", "/api/v1/nodepools/"+gpu.ID+"/status", `{"controller_name":"gcp-nodepool-controller","observed_generation":2,"metadata":{"exists":true}}`)
	etag = ""
	a.expect(400, oaOwner, "PATCH", "/api/v1/nodepools/"+gpu.ID, `{"spec":{"platform":{"gcp":{"accelerators":null}}}}`,
		"Content-Type: application/merge-patch+json")
	r = a.expect(200, oaOwner, "PATCH", "/api/v1/nodepools/"+gpu.ID,
		`{"spec":{"autoscaling":null,"platform":{"gcp":{"diskType":null}},"labels":{"environment":null},"tags":null}}`,
		"Content-Type: application/merge-patch+json")
	var patched kpool.NodePool
	r.decode(t, &patched)
	if patched.Spec.Autoscaling != nil || patched.Spec.Platform.GCP.DiskType != "" || patched.Spec.Labels != nil || patched.Generation != 3 {
		t.Fatalf("merge patch: %s", clip(r.body))
	}
	// A PUT's null leaves a field alone; a whole GET output is a valid PUT.
	a.expect(200, oaOwner, "PUT", "/api/v1/nodepools/"+gpu.ID, `{"spec":{"mode":null,"nodeCount":4},"name":"gpu","cluster_id":"`+gke.ID+`"}`, "If-Match: *")
	r = a.expect(200, oaOwner, "GET", "/api/v1/nodepools/"+gpu.ID, "")
	a.expect(200, oaOwner, "PUT", "/api/v1/nodepools/"+gpu.ID, string(r.body))
	a.expect(200, oaAdmin, "PATCH", "/api/v1/nodepools/"+pools["workers"].ID, `{"spec":{"autoscaling":{"enabled":true,"minNodes":1,"maxNodes":6}}}`)
	a.expect(200, oaOwner, "PATCH", "/api/v1/nodepools/"+pools["flex"].ID, `{"spec":{"platform":{"oci":{"ocpus":4}}}}`)
	a.expect(200, oaOwner, "PUT", "/api/v1/nodepools/"+pools["small"].ID, `{"spec":{"platform":{"civo":{"labels":{"tier":"edge"}}}}}`)
	a.expect(200, oaOwner, "PUT", "/api/v1/nodepools/"+pools["agents"].ID, `{"spec":null}`)
	a.expect(200, oaOwner, "PUT", "/api/v1/clusters/"+gke.ID, `{"spec":{"endpoint":"https://gke.example.com"}}`)
	r = a.expect(200, oaOwner, "PATCH", "/api/v1/clusters/"+gke.ID, `{"spec":{"endpoint":null}}`, "Content-Type: application/merge-patch+json")
	a.expect(200, oaOwner, "PUT", "/api/v1/clusters/"+gke.ID, string(r.body))
	a.expect(200, oaOwner, "PATCH", "/api/v1/clusters/"+clusters["eks"].ID, `{"spec":{"platform":{"aws":{"subnets":{"us-west-2c":"subnet-0123456789abcdef2"}}}}}`)
	a.expect(200, oaOwner, "PATCH", "/api/v1/clusters/"+clusters["oke"].ID, `{"spec":{"platform":{"oci":{"imageId":null}}}}`)
	a.expect(200, oaOwner, "PUT", "/api/v1/clusters/"+clusters["edge"].ID, `{"name":"edge"}`)
	a.expect(409, oaOwner, "PUT", "/api/v1/clusters/"+gke.ID, `{"spec":{}}`, `If-Match: "0000000000000000"`)
}

// dryRuns: dry runs of every write, and what each provider can do.
func (cf *conformance) dryRuns() {
	planned, cp := cf.dryRunClusters()
	cf.aksPlans(planned, cp)
	cf.civoLimits()
}

// dryRunClusters dry-runs a cluster's create, update and delete, checks
// that they stored nothing, and returns the cluster then created (and its
// path) for the pools' dry runs.
func (cf *conformance) dryRunClusters() (kpool.Cluster, string) {
	t, a, dryRun := cf.t, cf.a, cf.dryRun
	var r oaReply
	aks := `{"name":"planned","spec":{"platform":{"type":"azure","azure":{"subscriptionId":"0b1f6471-1bf0-4dda-aec3-111122223333",
		"resourceGroup":"rg","clusterName":"aks","location":"westeurope"}}}}`
	if d := dryRun(a.expect(200, oaOwner, "POST", "/api/v1/clusters?dry_run=true", aks)); d.Cluster == nil || d.Cluster.Name != "planned" || d.Plan != nil {
		t.Fatalf("dry-run cluster create: %+v", d)
	}
	r = a.expect(201, oaOwner, "POST", "/api/v1/clusters", aks) // the dry run stored nothing
	var planned kpool.Cluster
	r.decode(t, &planned)
	cp := "/api/v1/clusters/" + planned.ID
	if d := dryRun(a.expect(200, oaOwner, "PUT", cp+"?dry_run=true", `{"spec":{"endpoint":"https://aks.example.com"}}`)); d.Cluster == nil || d.Cluster.Spec.Endpoint != "https://aks.example.com" {
		t.Fatalf("dry-run cluster PUT: %+v", d)
	}
	dryRun(a.expect(200, oaOwner, "PATCH", cp+"?dry_run=1", `{"spec":{"endpoint":"https://aks.example.com"}}`, "Content-Type: application/merge-patch+json"))
	if d := dryRun(a.expect(200, oaOwner, "DELETE", cp+"?dry_run=true", "")); !d.Gone || d.Cluster == nil {
		t.Fatalf("dry-run delete of an empty cluster: %+v", d)
	}
	r = a.expect(200, oaOwner, "GET", cp, "")
	r.decode(t, &planned)
	if planned.Spec.Endpoint != "" || planned.Generation != 1 {
		t.Fatalf("dry runs changed the cluster: %s", clip(r.body))
	}
	a.expect(400, oaOwner, "PATCH", cp+"?dry_run=maybe", `{}`)
	return planned, cp
}

// aksPlans dry-runs a pool's writes on the AKS cluster planned: the plan
// before and after a controller reports the pool exists, the refusal of a
// change that needs a new pool, and that nothing was stored.
func (cf *conformance) aksPlans(planned kpool.Cluster, cp string) {
	t, a, dryRun := cf.t, cf.a, cf.dryRun
	var r oaReply
	gpuWorkers := `{"name":"gpu-workers","spec":{"platform":{"azure":{"vmSize":"Standard_D4s_v5"}},"zones":["westeurope-1"],"nodeCount":2}}`
	d := dryRun(a.expect(200, oaOwner, "POST", cp+"/nodepools?dry_run=true", gpuWorkers))
	if d.NodePool == nil || d.NodePool.ProviderName != "gpuworkers" || strings.Join(d.NodePool.Spec.Zones, ",") != "1" ||
		d.Plan == nil || d.Plan.Provider != "azure" || d.Plan.ProviderName != "gpuworkers" || len(d.Plan.Changes) != 0 {
		t.Fatalf("dry-run pool create: %+v", d)
	}
	dryRun(a.expect(200, oaOwner, "POST", "/api/v1/nodepools?dry_run=true",
		`{"name":"more","cluster_id":"`+planned.ID+`","spec":{"platform":{"azure":{"vmSize":"Standard_D4s_v5"}}}}`))
	r = a.expect(201, oaOwner, "POST", cp+"/nodepools", gpuWorkers)
	var gw kpool.NodePool
	r.decode(t, &gw)
	if gw.ProviderName != "gpuworkers" || strings.Join(gw.Spec.Zones, ",") != "1" {
		t.Fatalf("pool with logical zones: %s", clip(r.body))
	}
	gp := "/api/v1/nodepools/" + gw.ID
	if d := dryRun(a.expect(200, oaOwner, "DELETE", gp+"?dry_run=true", "")); !d.Gone || d.NodePool == nil || d.Plan != nil {
		t.Fatalf("dry-run delete of an unreported pool: %+v", d)
	}
	// A pool no controller reports as existing at AKS has no in-place
	// limits: a new vmSize is planned in place.
	d = dryRun(a.expect(200, oaOwner, "PATCH", gp+"?dry_run=true", `{"spec":{"platform":{"azure":{"vmSize":"Standard_D8s_v5"}}}}`))
	if len(d.Plan.Changes) != 1 || d.Plan.Changes[0].Class != kpool.UpdateInPlace || !strings.Contains(d.Plan.Changes[0].Reason, "does not exist at the provider") {
		t.Fatalf("vmSize of a pool not at the provider: %+v", d.Plan)
	}
	// Once a controller reports that it exists, AKS's own limits hold.
	a.expect(200, oaAKSController, "PUT", gp+"/status", `{"controller_name":"aks-nodepool-controller","observed_generation":1,"metadata":{"exists":true}}`)
	r = a.expect(200, oaOwner, "GET", gp, "")
	r.decode(t, &gw)
	d = dryRun(a.expect(200, oaOwner, "PATCH", gp+"?dry_run=true", `{"spec":{"nodeCount":5,"kubernetesVersion":"1.31"}}`))
	classes := map[string]kpool.UpdateClass{}
	for _, c := range d.Plan.Changes {
		classes[c.Field] = c.Class
	}
	if len(classes) != 2 || classes["spec.nodeCount"] != kpool.UpdateInPlace || classes["spec.kubernetesVersion"] != kpool.UpdateRollsNodes ||
		d.NodePool == nil || d.NodePool.Generation != 2 {
		t.Fatalf("dry-run PATCH: %+v", d)
	}
	// Changes from and to nothing (null), objects and lists.
	d = dryRun(a.expect(200, oaOwner, "PUT", gp+"?dry_run=true", `{"spec":{"autoscaling":{"enabled":true,"minNodes":1,"maxNodes":4},
		"labels":{"tier":"gpu"},"taints":[{"key":"gpu","effect":"NoSchedule"}],"tags":{"team":"ml"},"mode":"system"}}`, "If-Match: "+`"`+gw.ResourceVersion+`"`))
	if len(d.Plan.Changes) != 5 {
		t.Fatalf("dry-run PUT: %+v", d.Plan)
	}
	dryRun(a.expect(200, oaOwner, "PUT", gp+"?dry_run=true", `{"spec":null}`))
	// A change AKS makes only with a new pool is a 400 naming the field;
	// its dry run is the plan with the replace row, and the refusal.
	r = a.expect(400, oaOwner, "PATCH", gp, `{"spec":{"platform":{"azure":{"vmSize":"Standard_D8s_v5"}}}}`)
	var e ErrorBody
	r.decode(t, &e)
	if len(e.Error.Fields) != 1 || e.Error.Fields[0].Field != "spec.platform.azure.vmSize" {
		t.Fatalf("vmSize change: %s", clip(r.body))
	}
	d = dryRun(a.expect(200, oaOwner, "PATCH", gp+"?dry_run=true", `{"spec":{"platform":{"azure":{"vmSize":"Standard_D8s_v5"}}}}`))
	if len(d.Plan.Changes) != 1 || d.Plan.Changes[0].Class != kpool.UpdateReplace || d.Refused == nil || d.Refused.Code != kpool.CodeValidation ||
		len(d.Refused.Fields) != 1 || d.Refused.Fields[0].Field != "spec.platform.azure.vmSize" {
		t.Fatalf("vmSize change, dry run: %+v", d)
	}
	a.expect(400, oaOwner, "PUT", gp, `{"spec":{"zones":["2"]}}`)
	r = a.expect(200, oaOwner, "GET", gp, "")
	var still kpool.NodePool
	r.decode(t, &still)
	if still.Generation != 1 || still.ResourceVersion != gw.ResourceVersion || still.Spec.Count() != 2 {
		t.Fatalf("dry runs changed the pool: %s", clip(r.body))
	}
}

// civoLimits: what Civo cannot do at all is a 501 (dry run too), a new size
// needs a new pool even when a report says nothing of the pool, and a pool
// in zones is a 501.
func (cf *conformance) civoLimits() {
	t, a, pools, clusters := cf.t, cf.a, cf.pools, cf.clusters
	var r oaReply
	// What Civo cannot do at all is a 501; a new size needs a new pool.
	for _, c := range []struct{ method, query string }{{"PATCH", ""}, {"PUT", ""}, {"PATCH", "?dry_run=true"}} {
		r = a.expect(501, oaOwner, c.method, "/api/v1/nodepools/"+pools["small"].ID+c.query, `{"spec":{"kubernetesVersion":"1.31"}}`)
		if !strings.Contains(string(r.body), "spec.kubernetesVersion") {
			t.Fatalf("civo version change: %s", clip(r.body))
		}
	}
	// A report without metadata.exists says nothing of it: the pool may
	// exist, and a new size still needs a new pool.
	a.expect(200, oaController, "PUT", "/api/v1/nodepools/"+pools["small"].ID+"/status", `{"controller_name":"inventory","observed_generation":1}`)
	a.expect(400, oaOwner, "PUT", "/api/v1/nodepools/"+pools["small"].ID, `{"spec":{"platform":{"civo":{"size":"g4s.kube.large"}}}}`)
	a.expect(501, oaOwner, "POST", "/api/v1/clusters/"+clusters["civo"].ID+"/nodepools?dry_run=true",
		`{"name":"zoned","spec":{"platform":{"civo":{"size":"g4s.kube.medium"}},"zones":["1"]}}`)
}

package api

import (
	"fmt"
	"strings"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/placement"
)

// statusReports has controllers report on pools (current, stale, of the
// future) and reads the status back; it returns gpu as read before the
// reports, whose generation the deletes' final reports observe.
func (cf *conformance) statusReports() kpool.NodePool {
	t, a, gpu, pools := cf.t, cf.a, cf.gpu, cf.pools
	var r oaReply
	a.expect(200, oaOwner, "GET", "/api/v1/nodepools/"+gpu.ID+"/status", "")
	report := func(gen int, conditions string) string {
		return fmt.Sprintf(`{"controller_name":"gcp-nodepool-controller","observed_generation":%d,"conditions":%s,
			"metadata":{"platform":"gcp","region":"us-central1","active_nodes":3,"desired_nodes":3}}`, gen, conditions)
	}
	r = a.expect(200, oaOwner, "GET", "/api/v1/nodepools/"+gpu.ID, "")
	var now kpool.NodePool
	r.decode(t, &now)
	ready := `[{"type":"Ready","status":"True","lastTransitionTime":"2025-10-17T10:30:00Z","reason":"NodesReady","message":"All nodes are ready"}]`
	a.expect(200, oaController, "PUT", "/api/v1/nodepools/"+gpu.ID+"/status", report(int(now.Generation), ready))
	a.expect(200, oaController, "PUT", "/api/v1/nodepools/"+gpu.ID+"/status", `{"controller_name":"drift-watcher","observed_generation":1}`)
	r = a.expect(200, oaController, "PUT", "/api/v1/nodepools/"+gpu.ID+"/status", report(1, "[]"))
	if !strings.Contains(r.header.Get("Warning"), "ignored") {
		t.Fatalf("a stale report has no Warning: %v", r.header)
	}
	a.expect(200, oaController, "PUT", "/api/v1/nodepools/"+pools["workers"].ID+"/status",
		`{"controller_name":"aws-nodegroup-controller","observed_generation":1,"conditions":[{"type":"Ready","status":"False","reason":"Provisioning"},{"type":"Progressing","status":"True"}],"metadata":null}`)
	a.expect(200, oaController, "PUT", "/api/v1/nodepools/"+pools["small"].ID+"/status",
		`{"controller_name":"civo-controller","observed_generation":1,"conditions":[{"type":"Supported","status":"False","reason":"NoCapacity","message":"no capacity in LON1"}]}`)
	a.expect(200, oaController, "GET", "/api/v1/nodepools/"+gpu.ID+"/status", "")
	a.expect(400, oaController, "PUT", "/api/v1/nodepools/"+gpu.ID+"/status", report(99, "[]"))
	a.expect(403, oaOwner, "PUT", "/api/v1/nodepools/"+gpu.ID+"/status", report(1, "[]"))
	return now
}

// placements places manifests on the GKE cluster, creates a zonal pool and
// imports pools the controllers found there.
func (cf *conformance) placements() {
	t, a, gke, svc := cf.t, cf.a, cf.gke, cf.svc
	var r oaReply
	r = a.expect(200, oaOwner, "POST", "/api/v1/clusters/"+gke.ID+"/placements", `{
		"manifests": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: trainer\n  annotations: {kompox.dev/pool: gpu}\nspec:\n  replicas: 9\n  template:\n    spec:\n      containers: [{name: t, image: t:1}]\n---\napiVersion: v1\nkind: Service\nmetadata: {name: trainer}\n",
		"zone": "us-central1-b", "app": {"pool": "quiet"}, "default_pool": "", "no_tolerations": false}`)
	var placed placement.Result
	r.decode(t, &placed)
	if placed.Placed != 1 || !strings.Contains(placed.Manifests, "key: nvidia.com/gpu") ||
		!strings.Contains(placed.Manifests, "topology.kubernetes.io/zone: us-central1-b") ||
		!strings.HasSuffix(placed.Manifests, "---\napiVersion: v1\nkind: Service\nmetadata: {name: trainer}\n") || len(placed.Warnings) == 0 {
		t.Errorf("placement: %s", clip(r.body))
	}
	zr := a.expect(201, oaOwner, "POST", "/api/v1/clusters/"+gke.ID+"/zonal-nodepools",
		`{"name":"zonal","spec":{"platform":{"gcp":{"machineType":"e2-small"}},"nodeCount":1,"zones":["1","2"]}}`)
	var zl NodePoolList
	zr.decode(t, &zl)
	if len(zl.NodePools) != 2 || zl.NodePools[0].Name != "zonal-1" || zl.NodePools[1].Spec.PlacementPool != "zonal" || len(zl.NodePools[1].Spec.Zones) != 1 {
		t.Errorf("zonal pools: %+v", zl.NodePools)
	}
	a.expect(200, oaAdmin, "POST", "/api/v1/clusters/"+gke.ID+"/placements", `{"manifests": "{\"kind\": \"ConfigMap\", \"apiVersion\": \"v1\"}", "pools": ["gpu", "quiet"], "zones": ["1"]}`)
	oaImports(t, a, svc, gke.ID)
}

// deletes deletes pools and clusters: at once, after the controllers'
// final reports, forced, and refused while a cluster still has pools. now
// is gpu as statusReports read it.
func (cf *conformance) deletes(now kpool.NodePool) {
	t, a, gpu, pools, clusters, dryRun := cf.t, cf.a, cf.gpu, cf.pools, cf.clusters, cf.dryRun
	var r oaReply
	a.expect(204, oaOwner, "DELETE", "/api/v1/nodepools/"+pools["quiet"].ID, "")
	a.expect(409, oaOwner, "DELETE", "/api/v1/nodepools/"+gpu.ID, "", `If-Match: "0000000000000000"`)
	if d := dryRun(a.expect(200, oaOwner, "DELETE", "/api/v1/nodepools/"+gpu.ID+"?dry_run=true", "")); d.Gone || d.NodePool == nil ||
		d.NodePool.DeletionTimestamp == nil || d.NodePool.Status.Phase != kpool.PhaseDeleting {
		t.Fatalf("dry-run delete of a reported pool: %+v", d)
	}
	r = a.expect(202, oaOwner, "DELETE", "/api/v1/nodepools/"+gpu.ID, "")
	var deleting kpool.NodePool
	r.decode(t, &deleting)
	if deleting.DeletionTimestamp == nil || deleting.Status.Phase != kpool.PhaseDeleting {
		t.Fatalf("deleting pool: %s", clip(r.body))
	}
	a.expect(409, oaOwner, "PATCH", "/api/v1/nodepools/"+gpu.ID, `{"spec":{"nodeCount":1}}`)
	a.expect(200, oaOwner, "GET", "/api/v1/nodepools?status=Deleting", "")
	deleted := `[{"type":"Deleted","status":"True","reason":"DeletedAtProvider"}]`
	a.expect(200, oaController, "PUT", "/api/v1/nodepools/"+gpu.ID+"/status",
		`{"controller_name":"gcp-nodepool-controller","observed_generation":`+fmt.Sprint(now.Generation)+`,"conditions":`+deleted+`}`)
	r = a.expect(200, oaController, "PUT", "/api/v1/nodepools/"+gpu.ID+"/status",
		`{"controller_name":"drift-watcher","observed_generation":1,"conditions":`+deleted+`}`)
	var final service.StatusDocument
	r.decode(t, &final)
	if !final.Deleted {
		t.Fatalf("final report: %s", clip(r.body))
	}
	a.expect(404, oaOwner, "GET", "/api/v1/nodepools/"+gpu.ID, "")
	a.expect(409, oaOwner, "DELETE", "/api/v1/clusters/"+clusters["eks"].ID, "")
	a.expect(409, oaOwner, "DELETE", "/api/v1/clusters/"+clusters["eks"].ID+"?dry_run=true", "")
	if d := dryRun(a.expect(200, oaOwner, "DELETE", "/api/v1/clusters/"+clusters["eks"].ID+"?force=true&dry_run=true", "")); d.Gone || d.Cluster == nil ||
		d.Cluster.Status.Phase != kpool.ClusterDeleting {
		t.Fatalf("dry-run forced delete: %+v", d)
	}
	r = a.expect(202, oaOwner, "DELETE", "/api/v1/clusters/"+clusters["eks"].ID+"?force=true", "")
	var dc kpool.Cluster
	r.decode(t, &dc)
	if dc.DeletionTimestamp == nil || dc.Status.Phase != kpool.ClusterDeleting {
		t.Fatalf("deleting cluster: %s", clip(r.body))
	}
	a.expect(200, oaOwner, "GET", "/api/v1/clusters/"+clusters["eks"].ID, "")
	a.expect(409, oaOwner, "PATCH", "/api/v1/clusters/"+clusters["eks"].ID, `{"spec":{"endpoint":"https://eks.example.com"}}`)
	a.expect(409, oaOwner, "POST", "/api/v1/nodepools", `{"name":"late","cluster_id":"`+clusters["eks"].ID+`","spec":{"platform":{"aws":{"instanceType":"m5.large"}}}}`)
	a.expect(204, oaOwner, "DELETE", "/api/v1/clusters/"+clusters["aks"].ID+"?force=1", "")
	a.expect(204, oaOwner, "DELETE", "/api/v1/clusters/"+clusters["lab"].ID+"?force=false", "", "If-Match: *")
}

// audit pages through the audit trail of all the above.
func (cf *conformance) audit() {
	t, a := cf.t, cf.a
	var r oaReply
	var events EventList
	r = a.expect(200, oaOwner, "GET", "/api/v1/events?limit=3&type=nodepool.", "")
	r.decode(t, &events)
	if len(events.Events) != 3 || events.Next == "" {
		t.Errorf("events: %s", r.body)
	}
	a.expect(200, oaOwner, "GET", "/api/v1/events?limit=3&type=nodepool.&after="+events.Next, "")
}

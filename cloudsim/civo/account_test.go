package civo_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/cloudsim/civo"
	"github.com/kpool/kpool/cloudsim/sim"
)

// TestDefaultRegion: a call that names no region is served in the
// account's default region, which /v2/regions marks.
func TestDefaultRegion(t *testing.T) {
	emu := civo.New(civo.Options{Keys: []string{key}, DefaultRegion: "lon1"})
	emu.AddCluster(civo.Cluster{ID: cid, Name: "prod", Region: "lon1"})
	e := &env{t: t, emu: emu}
	if a := e.do("GET", pools, key, ""); a.status != 200 {
		t.Fatalf("no region, the default's cluster: %d %s", a.status, a.body)
	}
	if a := e.do("GET", pools+"?region=FRA1", key, ""); a.code() != "database_kubernetes_cluster_not_found" {
		t.Fatalf("another region: %d %s", a.status, a.body)
	}
	var regions []civo.Region
	if err := json.Unmarshal(e.do("GET", "/v2/regions", key, "").body, &regions); err != nil {
		t.Fatal(err)
	}
	var defaults []string
	for _, r := range regions {
		if r.Default {
			defaults = append(defaults, r.Code)
		}
	}
	if len(regions) != 5 || strings.Join(defaults, ",") != "LON1" || !regions[1].Features.Kubernetes {
		t.Fatalf("regions: %+v", regions)
	}
}

// TestQuota: nodes beyond the account's quota, in any region, are refused
// with quota_limit_reached at a create and at a scale up; a scale down and
// a delete free it once their nodes are gone.
func TestQuota(t *testing.T) {
	clock := sim.NewManualClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	emu := civo.New(civo.Options{Engine: sim.Options{Clock: clock, OperationTime: 30 * time.Second, NodeTime: 10 * time.Second}, Keys: []string{key},
		Quota: civo.Quota{Instances: 5, CPUCores: 8}})
	emu.AddCluster(civo.Cluster{ID: cid, Name: "prod", Region: region})
	emu.AddCluster(civo.Cluster{ID: "other", Name: "ny", Region: "NYC1"})
	e := &env{t: t, emu: emu, clock: clock}
	quota := func(a answer, what string) {
		t.Helper()
		var body struct{ Code, Reason, Details string }
		_ = json.Unmarshal(a.body, &body)
		if a.status != http.StatusBadRequest || body.Code != "quota_limit_reached" ||
			body.Reason != "Failed to perform this action due to a quota being at the limit" || !strings.Contains(body.Details, "instance_count_limit 5") {
			t.Fatalf("%s: %d %s", what, a.status, a.body)
		}
	}
	// g4s.kube.medium: 2 cores a node.
	if a := e.do("POST", "/v2/kubernetes/clusters/other/pools?region=NYC1", key, `{"id":"ny","count":2,"size":"g4s.kube.small"}`); a.status != 200 {
		t.Fatalf("a pool in NYC1: %d %s", a.status, a.body)
	}
	quota(e.do("POST", pools+"?region=LON1", key, `{"id":"web","count":4,"size":"g4s.kube.small"}`), "2 + 4 nodes of 5")
	if a := e.do("POST", pools+"?region=LON1", key, `{"id":"web","count":3,"size":"g4s.kube.medium"}`); a.status != 200 {
		t.Fatalf("2 + 3 nodes, 2 + 6 cores: %d %s", a.status, a.body)
	}
	clock.Advance(time.Hour)
	quota(e.do("PUT", pools+"/web?region=LON1", key, `{"count":4}`), "a scale up to 6 nodes")
	if a := e.do("PUT", pools+"/web?region=LON1", key, `{"count":1}`); a.status != 200 {
		t.Fatalf("a scale down: %d %s", a.status, a.body)
	}
	if u := emu.Usage(); u.Instances != 5 {
		t.Fatalf("usage while nodes go: %+v", u)
	}
	clock.Advance(time.Hour)
	var q struct {
		Limit int `json:"instance_count_limit"`
		Usage int `json:"instance_count_usage"`
		Cores int `json:"cpu_core_usage"`
	}
	if err := json.Unmarshal(e.do("GET", "/v2/quota", key, "").body, &q); err != nil || q.Limit != 5 || q.Usage != 3 || q.Cores != 4 {
		t.Fatalf("quota after the scale down: %+v %v", q, err)
	}
	if a := e.do("PUT", pools+"/web?region=LON1", key, `{"count":3}`); a.status != 200 {
		t.Fatalf("a scale up within the quota: %d %s", a.status, a.body)
	}
}

// TestDeleteInstance: deleting one node of a pool lowers its count and
// removes that node, not the newest; a second one may follow while the
// first goes; one already going is a success again; a node the pool no
// longer has is 404; the last node is refused.
func TestDeleteInstance(t *testing.T) {
	e := newEnv(t)
	e.do("POST", pools+"?region=LON1", key, `{"id":"web","count":3,"size":"g4s.kube.small"}`)
	e.clock.Advance(time.Hour)
	before := e.pool("web")
	victim := before.Instances[1].ID
	target := pools + "/web/instances/" + victim + "?region=LON1"
	if a := e.do("DELETE", target, key, ""); a.status != 200 || !strings.Contains(string(a.body), `"result":"success"`) {
		t.Fatalf("delete a node: %d %s", a.status, a.body)
	}
	if p := e.pool("web"); p.Count != 2 || statuses(p) != "ACTIVE,ACTIVE,DELETING" || p.Instances[2].ID != victim {
		t.Fatalf("deleting the node: %+v", p)
	}
	if a := e.do("DELETE", target, key, ""); a.status != 200 {
		t.Fatalf("the node being deleted, again: %d %s", a.status, a.body)
	}
	if a := e.do("DELETE", pools+"/web/instances/"+before.Instances[0].ID+"?region=LON1", key, ""); a.status != 200 {
		t.Fatalf("a second delete while one runs: %d %s", a.status, a.body)
	}
	if p := e.pool("web"); p.Count != 1 || statuses(p) != "ACTIVE,DELETING,DELETING" || p.Instances[0].ID != before.Instances[2].ID {
		t.Fatalf("deleting two nodes: %+v", p)
	}
	if a := e.do("PUT", pools+"/web?region=LON1", key, `{"count":3}`); a.code() != "cannot_scale_already_rescaling_cluster" {
		t.Fatalf("a scale while nodes go: %d %s", a.status, a.body)
	}
	e.clock.Advance(time.Hour)
	p := e.pool("web")
	if statuses(p) != "ACTIVE" || p.Instances[0].ID != before.Instances[2].ID {
		t.Fatalf("after: %+v", p)
	}
	if a := e.do("DELETE", target, key, ""); a.status != 404 || a.code() != "database_cluster_pool_instance_not_found" {
		t.Fatalf("the deleted node again: %d %s", a.status, a.body)
	}
	if a := e.do("DELETE", pools+"/web/instances/"+p.Instances[0].ID+"?region=LON1", key, ""); a.status != 400 {
		t.Fatalf("the last node: %d %s", a.status, a.body)
	}
}

// TestClusters: the clusters of a region, a page at a time, with their
// pools as the civo CLI finds them (required_pools).
func TestClusters(t *testing.T) {
	e := newEnv(t)
	e.emu.AddCluster(civo.Cluster{ID: "c2", Name: "staging", Region: region})
	e.emu.AddCluster(civo.Cluster{ID: "c3", Name: "ny", Region: "NYC1"})
	e.do("POST", pools+"?region=LON1", key, `{"id":"web","count":2,"size":"g4s.kube.small"}`)
	var list struct {
		Page, PerPage, Pages int
		Items                []struct{ ID, Name string }
	}
	a := e.do("GET", "/v2/kubernetes/clusters?region=LON1&per_page=1&page=2", key, "")
	if err := json.Unmarshal(a.body, &list); err != nil || list.Pages != 2 || len(list.Items) != 1 || list.Items[0].Name != "staging" {
		t.Fatalf("page 2 of LON1's clusters: %s", a.body)
	}
	var c struct {
		Status         string
		NumTargetNodes int `json:"num_target_nodes"`
		RequiredPools  []struct {
			ID    string
			Count int
		} `json:"required_pools"`
		Pools     []civo.Pool
		Instances []civo.Instance
	}
	a = e.do("GET", "/v2/kubernetes/clusters/"+cid+"?region=LON1", key, "")
	if err := json.Unmarshal(a.body, &c); err != nil || c.Status != "ACTIVE" || c.NumTargetNodes != 2 || len(c.RequiredPools) != 1 ||
		c.RequiredPools[0].ID != "web" || len(c.Pools) != 1 || len(c.Instances) != 2 || c.Instances[0].Region != "lon1" {
		t.Fatalf("the cluster: %s", a.body)
	}
	if a := e.do("GET", "/v2/kubernetes/clusters/c3?region=LON1", key, ""); a.code() != "database_kubernetes_cluster_not_found" {
		t.Fatalf("a NYC1 cluster asked in LON1: %d %s", a.status, a.body)
	}
}

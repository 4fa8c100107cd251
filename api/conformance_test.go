package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/store"
	"github.com/kpool/kpool/store/sqlite"
)

// The callers of the conformance test: a cluster owner, a caller who sees
// none of its clusters, an admin and two controllers.
const (
	oaOwner      = "owner@example.com"
	oaStranger   = "stranger@example.com"
	oaAdmin      = "admin@example.com"
	oaController = "ctl@example.com"
	// oaAKSController is granted the built-in AKS controller's name.
	oaAKSController = "aks-ctl@example.com"
)

// oaAPI is a client of the server under test, as any caller.
type oaAPI struct {
	t   *testing.T
	url string
}

// oaReply is an answer: its status, headers and body.
type oaReply struct {
	status int
	header http.Header
	body   []byte
}

// call sends a request; headers are "Name: value" strings, and a body goes
// with Content-Type application/json unless a header says otherwise.
func (a *oaAPI) call(who, method, path, body string, headers ...string) oaReply {
	a.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, a.url+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	if who != "" {
		req.Header.Set("X-User-Email", who)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	return oaReply{status: resp.StatusCode, header: resp.Header, body: b}
}

// expect sends a request and fails unless the answer has the given status
// (and, for an error, code).
func (a *oaAPI) expect(status int, who, method, path, body string, headers ...string) oaReply {
	a.t.Helper()
	r := a.call(who, method, path, body, headers...)
	if r.status != status {
		a.t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.status, status, clip(r.body))
	}
	return r
}

// decode decodes the answer's JSON body into v, failing t if it cannot.
func (r oaReply) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %s: %v", clip(r.body), err)
	}
}

// TestOpenAPIConformance drives every operation through checkOpenAPI against
// an SQLite store: each platform, each filter, each kind of update, the
// status protocol, both kinds of delete and every error status. It then
// checks that every operation answered each of its success statuses and that
// every documented error status was seen, so the document is proven on
// every response it describes.
func TestOpenAPIConformance(t *testing.T) {
	cf := newConformance(t)
	cf.server()
	cf.createClusters()
	cf.createPools()
	cf.lists()
	etag := cf.reads()
	cf.updates(etag)
	cf.dryRuns()
	now := cf.statusReports()
	cf.replacements()
	cf.placements()
	cf.logicalPools()
	cf.deletes(now)
	cf.audit()
	cf.nodes()
	cf.errorAnswers()
	cf.rateLimit()
	cf.failures()
	cf.everyResponseSeen()
}

// conformance is what the stages of TestOpenAPIConformance share: the store
// and service behind the server under test, a client of that server, the
// statuses each operation answered, and the clusters and pools the stages
// made. Each stage works on what the ones before it left.
type conformance struct {
	t      *testing.T
	store  *store.DB
	closed bool // the store was closed, by the failures stage
	broken *brokenStore
	access *auth.Access
	svc    *service.Service
	a      *oaAPI

	mu   sync.Mutex
	seen map[string]map[int]bool // statuses by operation ("" for none)

	clusterSpecs []struct{ name, spec string }
	clusters     map[string]kpool.Cluster  // by name
	gke          kpool.Cluster             // clusters["gke"]
	pools        map[string]kpool.NodePool // by name
	gpu          kpool.NodePool            // pools["gpu"]
}

// newConformance serves an SQLite store, behind a brokenStore that can be
// made to fail, through checkOpenAPIWith, recording each exchange's status.
func newConformance(t *testing.T) *conformance {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "kpool.db"))
	if err != nil {
		t.Fatal(err)
	}
	cf := &conformance{t: t, store: store, seen: map[string]map[int]bool{}}
	t.Cleanup(func() {
		if !cf.closed {
			store.Close()
		}
	})
	access, err := auth.NewAccess([]string{oaAdmin}, []string{oaController, oaAKSController + "=aks-nodepool-controller"})
	if err != nil {
		t.Fatal(err)
	}
	broken := &brokenStore{Store: store}
	svc := service.New(broken, catalog.Registry())
	svc.Nodes, svc.Kube = staticNodes{}, staticNodes{}
	svc.Endpoints, _ = kpool.ParseOrigins([]string{"https://container.googleapis.com", "https://gke.example.com", "https://aks.example.com", "https://eks.example.com"})
	h := NewServer(svc, access, slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv := httptest.NewServer(checkOpenAPIWith(t, h, cf.record))
	t.Cleanup(srv.Close)
	cf.access, cf.broken, cf.svc = access, broken, svc
	cf.a = &oaAPI{t: t, url: srv.URL}
	return cf
}

// record notes that op answered status: what everyResponseSeen checks.
func (cf *conformance) record(op string, status int) {
	cf.mu.Lock()
	defer cf.mu.Unlock()
	if cf.seen[op] == nil {
		cf.seen[op] = map[int]bool{}
	}
	cf.seen[op][status] = true
}

// dryRun decodes a dry run's answer and fails unless it is one: dry_run
// set, and neither ETag nor Location (nothing was stored).
func (cf *conformance) dryRun(r oaReply) DryRun {
	t := cf.t
	t.Helper()
	var d DryRun
	r.decode(t, &d)
	if !d.DryRun || r.header.Get("ETag") != "" || r.header.Get("Location") != "" {
		t.Fatalf("dry run: ETag %q, Location %q: %s", r.header.Get("ETag"), r.header.Get("Location"), clip(r.body))
	}
	return d
}

// server: the probes, the version and the document, unauthenticated.
func (cf *conformance) server() {
	a := cf.a
	a.expect(200, "", "GET", "/healthz", "", "X-Request-ID: trace-123")
	a.expect(200, "", "GET", "/readyz", "")
	a.expect(200, "", "GET", "/version", "")
	a.expect(200, "", "GET", "/api/v1/openapi.json", "")
}

// createClusters registers a cluster of each platform.
func (cf *conformance) createClusters() {
	t, a := cf.t, cf.a
	clusterSpecs := []struct{ name, spec string }{
		{"gke", `{"platform":{"type":"gcp","gcp":{"projectId":"acme-prod","location":"us-central1","clusterName":"prod"}},"endpoint":"https://container.googleapis.com"}`},
		{"eks", `{"platform":{"type":"aws","aws":{"region":"us-west-2","clusterName":"prod","nodeRoleArn":"arn:aws:iam::123456789012:role/eks-nodes",
			"subnets":{"us-west-2a":"subnet-0123456789abcdef0","us-west-2b":"subnet-0123456789abcdef1"}}}}`},
		{"aks", `{"platform":{"type":"azure","azure":{"subscriptionId":"0b1f6471-1bf0-4dda-aec3-111122223333","resourceGroup":"rg-prod","clusterName":"prod","location":"westeurope"}}}`},
		{"oke", `{"platform":{"type":"oci","oci":{"region":"us-ashburn-1","compartmentId":"ocid1.compartment.oc1..aaaaexample",
			"clusterId":"ocid1.cluster.oc1.iad.aaaaexample","imageId":"ocid1.image.oc1.iad.aaaaexample",
			"subnets":{"Uocm:US-ASHBURN-AD-1":"ocid1.subnet.oc1.iad.aaaaexample"}}}}`},
		{"civo", `{"platform":{"type":"civo","civo":{"region":"LON1","clusterId":"7c9e6679-7425-40de-944b-e07fc1f90ae7"}}}`},
		{"edge", `{"platform":{"type":"k3s","k3s":{}}}`},
		{"lab", `{"platform":{"type":"microvm"}}`},
	}
	clusters := map[string]kpool.Cluster{}
	for i, c := range clusterSpecs {
		body := fmt.Sprintf(`{"name":%q,"spec":%s}`, c.name, c.spec)
		if i == 0 {
			body = fmt.Sprintf(`{"id":"550e8400-e29b-41d4-a716-446655440000","name":%q,"spec":%s}`, c.name, c.spec)
		}
		r := a.expect(201, oaOwner, "POST", "/api/v1/clusters", body)
		var cl kpool.Cluster
		r.decode(t, &cl)
		clusters[c.name] = cl
	}
	gke := clusters["gke"]
	cf.clusterSpecs, cf.clusters, cf.gke = clusterSpecs, clusters, gke
}

// createPools creates a node pool on each platform that has them; the
// others answer 501 to every way of making one.
func (cf *conformance) createPools() {
	t, a, clusters, gke := cf.t, cf.a, cf.clusters, cf.gke
	pools := map[string]kpool.NodePool{}
	pool := func(r oaReply, name string) {
		var p kpool.NodePool
		r.decode(t, &p)
		pools[name] = p
	}
	pool(a.expect(201, oaOwner, "POST", "/api/v1/clusters/"+gke.ID+"/nodepools", `{
		"id": "123e4567-e89b-12d3-a456-426614174000",
		"name": "gpu",
		"cluster_id": "`+gke.ID+`",
		"spec": {
			"nodeCount": 2,
			"autoscaling": {"enabled": true, "minNodes": 1, "maxNodes": 4, "targetCPUUtilization": 70,
				"targetMemoryUtilization": 80, "scaleDownDelay": "10m", "scaleUpDelay": "3m"},
			"platform": {"type": "gcp", "gcp": {"machineType": "n1-standard-4", "diskSize": 100, "diskType": "pd-ssd",
				"zones": ["us-central1-a", "us-central1-b"], "preemptible": true,
				"accelerators": [{"type": "nvidia-tesla-v100", "count": 1}],
				"labels": {"team": "platform"}, "taints": [{"key": "workload-type", "value": "gpu", "effect": "NoSchedule"}]}},
			"mode": "user",
			"kubernetesVersion": "1.30",
			"labels": {"environment": "production"},
			"taints": [{"key": "dedicated", "effect": "PreferNoSchedule"}],
			"tags": {"cost-center": "platform"}
		}}`), "gpu")
	pool(a.expect(201, oaOwner, "POST", "/api/v1/clusters/"+gke.ID+"/nodepools",
		`{"name":"quiet","spec":{"platform":{"gcp":{"machineType":"e2-small"}}}}`), "quiet")
	pool(a.expect(201, oaOwner, "POST", "/api/v1/nodepools", `{"name":"workers","cluster_id":"`+clusters["eks"].ID+`","spec":{
			"platform": {"type": "aws", "aws": {"instanceType": "m5.xlarge", "volumeSize": 100, "volumeType": "gp3",
				"availabilityZones": ["us-west-2a", "us-west-2b"], "spotInstances": true, "userData": "#!/bin/bash\necho 'Custom initialization'"}},
			"mode": "system", "nodeCount": 3}}`), "workers")
	pool(a.expect(201, oaOwner, "POST", "/api/v1/nodepools", `{"name":"agents","cluster_id":"`+clusters["aks"].ID+`","spec":{
			"platform": {"type": "azure", "azure": {"vmSize": "Standard_D4s_v3", "osDiskSizeGB": 100, "osDiskType": "Premium_LRS",
				"availabilityZones": ["1", "2"], "spotInstances": false}}}}`), "agents")
	pool(a.expect(201, oaOwner, "POST", "/api/v1/clusters/"+clusters["oke"].ID+"/nodepools", `{"name":"flex","spec":{
			"platform": {"oci": {"shape": "VM.Standard.E4.Flex", "ocpus": 2.5, "memoryInGBs": 32, "bootVolumeSizeInGBs": 100,
				"availabilityDomains": ["Uocm:US-ASHBURN-AD-1"], "imageId": "ocid1.image.oc1.iad.bbbbexample", "preemptible": true,
				"labels": {"tier": "batch"}}},
			"nodeCount": 2}}`), "flex")
	pool(a.expect(201, oaOwner, "POST", "/api/v1/clusters/"+clusters["civo"].ID+"/nodepools", `{"name":"small","spec":{
			"platform": {"type": "civo", "civo": {"size": "g4s.kube.medium", "labels": {"tier": "web"},
				"taints": [{"key": "web", "value": "true", "effect": "NoExecute"}]}}, "nodeCount": 2}}`), "small")
	for _, name := range []string{"edge", "lab"} {
		a.expect(501, oaOwner, "POST", "/api/v1/clusters/"+clusters[name].ID+"/nodepools", `{"name":"x","spec":{"nodeCount":1}}`)
		a.expect(501, oaOwner, "POST", "/api/v1/nodepools", `{"name":"x","cluster_id":"`+clusters[name].ID+`","spec":{"nodeCount":1}}`)
		a.expect(501, oaOwner, "POST", "/api/v1/clusters/"+clusters[name].ID+"/placements", `{"manifests":"kind: Pod\nmetadata: {name: p}\n"}`)
		a.expect(501, oaOwner, "POST", "/api/v1/clusters/"+clusters[name].ID+"/zonal-nodepools", `{"name":"z","spec":{"nodeCount":1,"zones":["1"]}}`)
	}
	cf.pools = pools
}

package civo_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim"
	"github.com/kpool/kpool/cloudsim/civo"
	"github.com/kpool/kpool/cloudsim/internal/simtest"
	"github.com/kpool/kpool/cloudsim/sim"
)

const (
	cid    = "0f4c7a52-3b1e-4d6a-8c9f-1a2b3c4d5e6f"
	key    = "k1"
	pools  = "/v2/kubernetes/clusters/" + cid + "/pools"
	region = "LON1"
)

type env struct {
	t     *testing.T
	emu   *civo.Server
	clock *sim.ManualClock
}

func newEnv(t *testing.T) *env {
	clock := sim.NewManualClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	emu := civo.New(civo.Options{Engine: sim.Options{Clock: clock, OperationTime: 30 * time.Second, NodeTime: 10 * time.Second}, Keys: []string{key}})
	emu.AddCluster(civo.Cluster{ID: cid, Name: "prod", Region: region, Version: "1.30.5-k3s1"})
	return &env{t: t, emu: emu, clock: clock}
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) code() string {
	var e struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(a.body, &e)
	return e.Code
}

// do sends a request with the key (auth "" sends none).
func (e *env) do(method, target, auth, body string) answer {
	var rd *bytes.Reader
	if body != "" {
		rd = bytes.NewReader([]byte(body))
	} else {
		rd = bytes.NewReader(nil)
	}
	req := httptest.NewRequest(method, target, rd)
	if auth != "" {
		req.Header.Set("Authorization", "bearer "+auth)
	}
	rec := httptest.NewRecorder()
	e.emu.ServeHTTP(rec, req)
	return answer{rec.Code, rec.Header(), rec.Body.Bytes()}
}

// tryDo sends a request with the key and returns its status; 0 for a
// connection the emulator dropped (a recorder cannot be hijacked: the
// engine panics).
func (e *env) tryDo(method, target, body string) (status int) {
	defer func() { _ = recover() }()
	return e.do(method, target, key, body).status
}

func (e *env) pool(id string) civo.Pool {
	e.t.Helper()
	a := e.do(http.MethodGet, pools+"/"+id+"?region="+region, key, "")
	if a.status != http.StatusOK {
		e.t.Fatalf("GET %s: %d %s", id, a.status, a.body)
	}
	var p civo.Pool
	if err := json.Unmarshal(a.body, &p); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func statuses(p civo.Pool) string {
	var s []string
	for _, in := range p.Instances {
		s = append(s, in.Status)
	}
	return strings.Join(s, ",")
}

const create = `{"id":"web","count":2,"size":"g4s.kube.small","labels":{"team":"a"},"taints":[],"region":"LON1"}`

func TestWire(t *testing.T) {
	for _, tc := range []struct {
		name, method, target, auth, body string
		status                           int
		code                             string
	}{
		{"no key", "GET", pools + "?region=LON1", "", "", 401, "authentication_invalid_key"},
		{"wrong key", "GET", pools + "?region=LON1", "nope", "", 401, "authentication_invalid_key"},
		{"list", "GET", pools + "?region=LON1", key, "", 200, ""},
		{"lowercase region", "GET", pools + "?region=lon1", key, "", 200, ""},
		// No region: the account's default (NYC1 here), where this
		// LON1 cluster is not.
		{"no region", "GET", pools, key, "", 404, "database_kubernetes_cluster_not_found"},
		{"no region in a post", "POST", pools, key, `{"id":"a","count":1,"size":"g4s.kube.small"}`, 404, "database_kubernetes_cluster_not_found"},
		{"no region in a put", "PUT", pools + "/a", key, `{"count":2}`, 404, "database_kubernetes_cluster_not_found"},
		{"region in the body only", "POST", pools, key, `{"id":"a","count":1,"size":"g4s.kube.small","region":"LON1"}`, 200, ""},
		{"the query's region first", "POST", pools + "?region=LON1", key, `{"id":"a","count":1,"size":"g4s.kube.small","region":"NYC1"}`, 200, ""},
		{"other region", "GET", pools + "?region=NYC1", key, "", 404, "database_kubernetes_cluster_not_found"},
		{"unknown region", "GET", pools + "?region=XYZ9", key, "", 404, "database_region_not_found"},
		{"unknown cluster", "GET", "/v2/kubernetes/clusters/x/pools?region=LON1", key, "", 404, "database_kubernetes_cluster_not_found"},
		{"unknown pool", "GET", pools + "/ghost?region=LON1", key, "", 404, "database_cluster_pool_not_found"},
		{"delete unknown pool", "DELETE", pools + "/ghost?region=LON1", key, "", 404, "database_cluster_pool_not_found"},
		{"put unknown pool", "PUT", pools + "/ghost?region=LON1", key, `{"count":2}`, 404, "database_cluster_pool_not_found"},
		{"count 0", "POST", pools + "?region=LON1", key, `{"id":"a","count":0,"size":"g4s.kube.small"}`, 400, "parameter_invalid"},
		{"no count", "POST", pools + "?region=LON1", key, `{"id":"a","size":"g4s.kube.small"}`, 400, "parameter_invalid"},
		{"no size", "POST", pools + "?region=LON1", key, `{"id":"a","count":1}`, 400, "parameter_size_missing"},
		{"bad size", "POST", pools + "?region=LON1", key, `{"id":"a","count":1,"size":"m5.large"}`, 400, "database_size_not_found"},
		{"an instance size of the catalogue", "POST", pools + "?region=LON1", key, `{"id":"a","count":1,"size":"g4s.medium"}`, 400, "database_size_not_found"},
		{"sizes", "GET", "/v2/sizes?region=LON1", key, "", 200, ""},
		{"sizes of an unknown region", "GET", "/v2/sizes?region=XYZ9", key, "", 404, "database_region_not_found"},
		{"versions", "GET", "/v2/kubernetes/versions?region=LON1", key, "", 200, ""},
		{"bad id", "POST", pools + "?region=LON1", key, `{"id":"-a","count":1,"size":"g4s.kube.small"}`, 400, "parameter_name_invalid"},
		{"id of 64", "POST", pools + "?region=LON1", key, `{"id":"` + strings.Repeat("a", 64) + `","count":1,"size":"g4s.kube.small"}`, 400, "parameter_name_invalid"},
		{"id as Terraform allows it", "POST", pools + "?region=LON1", key, `{"id":"Back_end.2","count":1,"size":"g4s.kube.small"}`, 200, ""},
		{"uuid id, as the CLI makes", "POST", pools + "?region=LON1", key, `{"id":"8a849cc5-bd51-45ce-814a-c378b09dcb06","count":1,"size":"g4s.kube.small"}`, 200, ""},
		{"bad label", "POST", pools + "?region=LON1", key, `{"id":"a","count":1,"size":"g4s.kube.small","labels":{"a b":"c"}}`, 400, "parameter_label_invalid"},
		{"civo label", "POST", pools + "?region=LON1", key, `{"id":"a","count":1,"size":"g4s.kube.small","labels":{"kubernetes.civo.com/x":"c"}}`, 400, "parameter_label_invalid"},
		{"bad taint", "POST", pools + "?region=LON1", key, `{"id":"a","count":1,"size":"g4s.kube.small","taints":[{"key":"k","effect":"Never"}]}`, 400, "parameter_invalid"},
		{"bad json", "POST", pools + "?region=LON1", key, `{"id":`, 400, "parameter_invalid"},
		{"other path: a page of text", "GET", "/v2/instances?region=LON1", key, "", 404, ""},
		{"other method: a page of text", "PATCH", pools + "?region=LON1", key, "", 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			a := e.do(tc.method, tc.target, tc.auth, tc.body)
			if a.status != tc.status || a.code() != tc.code {
				t.Fatalf("%s %s: %d %s, want %d %s", tc.method, tc.target, a.status, a.body, tc.status, tc.code)
			}
			if tc.code == "" && tc.status == 404 && !strings.HasPrefix(a.header.Get("Content-Type"), "text/plain") {
				t.Fatalf("a route Civo does not have: %s, want Rails' page of text", a.header.Get("Content-Type"))
			}
		})
	}
}

func TestPoolLifecycle(t *testing.T) {
	e := newEnv(t)
	a := e.do("POST", pools+"?region=LON1", key, create)
	if a.status != 200 || !strings.Contains(string(a.body), `"result":"success"`) {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	if c := e.emu.Calls(); !c[len(c)-1].Created || c[len(c)-1].Resource != pools+"/web" {
		t.Fatalf("call log: %+v", c[len(c)-1])
	}
	if a := e.do("POST", pools+"?region=LON1", key, create); a.status != http.StatusConflict {
		t.Fatalf("duplicate id: %d %s", a.status, a.body)
	}
	p := e.pool("web")
	if p.Count != 2 || statuses(p) != "BUILDING,BUILDING" || p.Labels[civo.PoolLabel] != "web" || p.Labels["team"] != "a" ||
		len(p.InstanceNames) != 2 || !strings.HasPrefix(p.Instances[0].Hostname, "k3s-prod-") {
		t.Fatalf("new pool: %+v", p)
	}
	// 30 s of the operation's own, then a node every 10 s: one is up
	// at 40 s, both at 50 s.
	e.clock.Advance(39 * time.Second)
	if s := statuses(e.pool("web")); s != "BUILDING,BUILDING" {
		t.Fatalf("after 39 s: %s", s)
	}
	e.clock.Advance(time.Second)
	if s := statuses(e.pool("web")); s != "ACTIVE,BUILDING" {
		t.Fatalf("after 40 s: %s", s)
	}
	e.clock.Advance(time.Minute)
	if s := statuses(e.pool("web")); s != "ACTIVE,ACTIVE" {
		t.Fatalf("after the create: %s", s)
	}
	// Scale up and relabel.
	a = e.do("PUT", pools+"/web", key, `{"count":4,"labels":{"team":"b"},"taints":[{"key":"k","value":"v","effect":"NoSchedule"}],"region":"LON1"}`)
	if a.status != 200 {
		t.Fatalf("scale: %d %s", a.status, a.body)
	}
	p = e.pool("web")
	if p.Count != 4 || statuses(p) != "ACTIVE,ACTIVE,BUILDING,BUILDING" || p.Labels["team"] != "b" || len(p.Taints) != 1 {
		t.Fatalf("scaling: %+v", p)
	}
	if a := e.do("PUT", pools+"/web", key, `{"count":1,"region":"LON1"}`); a.status != http.StatusConflict || a.code() != "cannot_scale_already_rescaling_cluster" {
		t.Fatalf("a second scale while one runs: %d %s", a.status, a.body)
	}
	if a := e.do("PUT", pools+"/web", key, `{"labels":{"team":"c"},"region":"LON1"}`); a.status != 200 {
		t.Fatalf("labels while scaling: %d %s", a.status, a.body)
	}
	if a := e.do("PUT", pools+"/web", key, `{"size":"g4s.kube.large","region":"LON1"}`); a.status != 400 {
		t.Fatalf("size change: %d %s", a.status, a.body)
	}
	if a := e.do("PUT", pools+"/web", key, `{"public_ip_node_pool":true,"region":"LON1"}`); a.status != 400 {
		t.Fatalf("public IP change: %d %s", a.status, a.body)
	}
	e.clock.Advance(time.Hour)
	// Scale down: the extra nodes are DELETING, then gone.
	if a := e.do("PUT", pools+"/web", key, `{"count":1,"region":"LON1"}`); a.status != 200 {
		t.Fatalf("scale down: %d %s", a.status, a.body)
	}
	if s := statuses(e.pool("web")); s != "ACTIVE,DELETING,DELETING,DELETING" {
		t.Fatalf("scaling down: %s", s)
	}
	e.clock.Advance(time.Hour)
	if p := e.pool("web"); statuses(p) != "ACTIVE" || p.Labels["team"] != "c" {
		t.Fatalf("after the scale down: %+v", p)
	}
	// Delete.
	if a := e.do("DELETE", pools+"/web?region=LON1", key, ""); a.status != 200 {
		t.Fatalf("delete: %d %s", a.status, a.body)
	}
	if s := statuses(e.pool("web")); s != "DELETING" {
		t.Fatalf("deleting: %s", s)
	}
	if a := e.do("DELETE", pools+"/web?region=LON1", key, ""); a.status != 200 {
		t.Fatalf("delete again while deleting: %d %s", a.status, a.body)
	}
	e.clock.Advance(time.Hour)
	if a := e.do("GET", pools+"/web?region=LON1", key, ""); a.status != 404 {
		t.Fatalf("deleted: %d %s", a.status, a.body)
	}
}

func TestThrottling(t *testing.T) {
	e := newEnv(t)
	e.emu.SetRateLimit(0.5, 1)
	if a := e.do("GET", pools+"?region=LON1", key, ""); a.status != 200 {
		t.Fatal(a.status)
	}
	a := e.do("GET", pools+"?region=LON1", key, "")
	if a.status != http.StatusTooManyRequests || a.header.Get("Retry-After") != "2" {
		t.Fatalf("throttled: %d %v %s", a.status, a.header, a.body)
	}
	e.clock.Advance(2 * time.Second)
	if a := e.do("GET", pools+"?region=LON1", key, ""); a.status != 200 {
		t.Fatalf("after the wait: %d", a.status)
	}
	// A wrong key is refused before the rate limit.
	if a := e.do("GET", pools+"?region=LON1", "nope", ""); a.status != 401 {
		t.Fatalf("wrong key under throttling: %d", a.status)
	}
}

func TestFaults(t *testing.T) {
	e := newEnv(t)
	e.emu.SetFaultRate(1)
	seen := map[int]bool{}
	for range 30 {
		func() {
			defer func() { _ = recover() }() // a dropped answer aborts the handler
			a := e.do("GET", pools+"?region=LON1", key, "")
			seen[a.status] = true
		}()
	}
	if !seen[500] || !seen[503] {
		t.Fatalf("faults seen: %v", seen)
	}
	e.emu.SetFaultRate(0)
	// A failed create: half its nodes come up, the rest are ERROR until
	// they heal (or a PUT of the count rebuilds them).
	if !simtest.FailOperation(e.emu, 0.5, 200, func(int) bool { return e.tryDo("POST", pools, create) == 200 }, func(_ int, accepted bool) {
		if accepted {
			e.do("DELETE", pools+"/web?region=LON1", key, "")
			e.clock.Advance(time.Hour)
		}
	}) {
		t.Fatal("no create failed")
	}
	e.clock.Advance(55 * time.Second) // 30 s + 2 × 10 s
	if s := statuses(e.pool("web")); s != "ACTIVE,ERROR" {
		t.Fatalf("failed create: %s", s)
	}
	e.clock.Advance(time.Minute) // as long again
	if s := statuses(e.pool("web")); s != "ACTIVE,ACTIVE" {
		t.Fatalf("healed: %s", s)
	}
}

func TestRebuildByPut(t *testing.T) {
	e := newEnv(t)
	e.do("POST", pools, key, create)
	e.clock.Advance(time.Hour)
	if err := e.emu.Mutate(region, cid, "web", func(p *civo.Pool) { p.Labels["x"] = "y" }); err != nil {
		t.Fatal(err)
	}
	if st, ok := e.emu.PoolOf(region, cid, "web"); !ok || st.Labels["x"] != "y" || st.Operation != "" {
		t.Fatalf("mutated: %+v", st)
	}
	if _, ok := e.emu.PoolOf("NYC1", cid, "web"); ok {
		t.Fatal("PoolOf in another region")
	}
}

func TestDemo(t *testing.T) {
	s, err := civo.Demo(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs := s.Clusters("https://127.0.0.1:9")
	if len(cs) != 1 || cs[0].Name != "demo-civo" || cs[0].Spec.Platform.Type != kpool.PlatformCivo || cs[0].Spec.Platform.Civo.Region != civo.DemoRegion ||
		cs[0].Spec.Platform.Civo.ClusterID != civo.DemoClusterID || !kpool.IsUUID(civo.DemoClusterID) || cs[0].Spec.Endpoint != "https://127.0.0.1:9" {
		t.Fatalf("clusters: %+v", cs)
	}
	st, ok := s.PoolOf(civo.DemoRegion, civo.DemoClusterID, "default")
	if !ok || st.Count != 1 || st.Size != "g4s.kube.medium" || statuses(st.Pool) != "ACTIVE" {
		t.Fatalf("demo pool: %+v", st)
	}
	var b strings.Builder
	s.Describe(&b, "https://127.0.0.1:9")
	// What an outside client needs: the endpoint, the demo key (said to
	// be a demo-only constant), the region, the cluster id, and the civo
	// CLI's way to another URL (its config file's meta.url).
	for _, want := range []string{civo.DemoAPIKey, "the demo API key: a constant", "demo-civo", civo.DemoClusterID,
		"https://127.0.0.1:9/v2/kubernetes/clusters/" + civo.DemoClusterID + "/pools?region=LON1", "served in NYC1",
		`"meta":{"url":"https://127.0.0.1:9","default_region":"LON1"}`, "CIVO_CONFIG=", "civo apikey add kpool-demo " + civo.DemoAPIKey} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("describe lacks %q:\n%s", want, b.String())
		}
	}
}

var _ cloudsim.Emulator = (*civo.Server)(nil)

// TestFailedScaleDown: a scale down by one node that fails leaves that
// node in ERROR (not a pool quietly one node over its count) until it
// heals or a PUT of the count removes it.
func TestFailedScaleDown(t *testing.T) {
	for _, repair := range []string{"heal", "put"} {
		t.Run(repair, func(t *testing.T) {
			e := newEnv(t)
			e.do("POST", pools, key, create)
			e.clock.Advance(time.Hour)
			if !simtest.FailOperation(e.emu, 0.5, 200, func(int) bool { return e.tryDo("PUT", pools+"/web", `{"count":1,"region":"LON1"}`) == 200 },
				func(_ int, accepted bool) {
					if accepted {
						e.clock.Advance(time.Hour)
						e.do("PUT", pools+"/web", key, `{"count":2,"region":"LON1"}`)
						e.clock.Advance(time.Hour)
					}
				}) {
				t.Fatal("no scale down failed")
			}
			e.clock.Advance(45 * time.Second) // 30 s + 10 s
			if s := statuses(e.pool("web")); s != "ACTIVE,ERROR" {
				t.Fatalf("failed scale down: %s", s)
			}
			if repair == "heal" {
				e.clock.Advance(time.Minute)
			} else if a := e.do("PUT", pools+"/web", key, `{"count":1,"region":"LON1"}`); a.status != 200 {
				t.Fatalf("repair: %d %s", a.status, a.body)
			}
			if p := e.pool("web"); statuses(p) != "ACTIVE" || p.Count != 1 {
				t.Fatalf("repaired by %s: %+v", repair, p)
			}
		})
	}
}

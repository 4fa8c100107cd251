package gke_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/cloudsim/gke"
	"github.com/kpool/kpool/cloudsim/sim"
)

// TestProtoJSON: the emulator reads bodies as Google's front end reads
// proto3 JSON: enums by name or number, int64 as number or string, proto
// field names beside lowerCamelCase ones, null as absent; unknown fields
// and enum values are refused naming the field's proto path.
func TestProtoJSON(t *testing.T) {
	e := newEnv(t)
	body := `{"node_pool":{"name":"nums","initialNodeCount":"1","locations":["us-central1-a"],"config":{"machine_type":"e2-standard-4",` +
		`"diskSizeGb":50,"labels":null,"taints":[{"key":"a","value":"b","effect":3}]},` +
		`"autoscaling":{"enabled":true,"totalMinNodeCount":1,"totalMaxNodeCount":"4","locationPolicy":2}}}`
	if status, code, b := e.raw("POST", base+"/nodePools", "t", body); status != 200 {
		t.Fatalf("numbers, strings and proto names: %d %s %s", status, code, b)
	}
	st, _ := e.sim.Pool(project, region, name, "nums")
	if st.Config.Taints[0].Effect != "NO_EXECUTE" || st.Autoscaling.LocationPolicy != "ANY" || st.Config.DiskSizeGb != 50 ||
		st.Autoscaling.TotalMaxNodeCount != 4 || st.Config.MachineType != "e2-standard-4" {
		t.Fatalf("read as %+v %+v %+v", st.NodePool, st.Config, st.Autoscaling)
	}
	for _, tc := range []struct{ body, field string }{
		{`{"nodePool":{"name":"x","config":{"taints":[{"key":"a","effect":"NoSchedule"}]}}}`, "node_pool.config.taints[0].effect"},
		{`{"nodePool":{"name":"x","config":{"taints":[{"key":"a","effect":9}]}}}`, "node_pool.config.taints[0].effect"},
		{`{"nodePool":{"name":"x","initialNodeCount":"two"}}`, "node_pool.initial_node_count"},
		{`{"nodePool":{"name":"x","config":{"bogus":1}}}`, "node_pool.config"},
	} {
		status, code, b := e.raw("POST", base+"/nodePools", "t", tc.body)
		if status != 400 || code != "INVALID_ARGUMENT" || !strings.Contains(string(b), `"field":"`+tc.field+`"`) {
			t.Errorf("%s: %d %s %s, want a BadRequest on %s", tc.body, status, code, b, tc.field)
		}
	}
}

// TestGPUTaint: a GPU pool added to a cluster that runs a pool without
// GPUs gets GKE's nvidia.com/gpu taint, which an update of the taints
// keeps.
func TestGPUTaint(t *testing.T) {
	e := newEnv(t)
	e.create(`{"nodePool":{"name":"cpu","initialNodeCount":1,"locations":["us-central1-a"]}}`)
	e.create(`{"nodePool":{"name":"gpu","initialNodeCount":1,"locations":["us-central1-a"],"config":{"machineType":"n1-standard-4",` +
		`"accelerators":[{"acceleratorType":"nvidia-tesla-v100","acceleratorCount":"1"}],"taints":[{"key":"workload-type","value":"gpu","effect":"NO_SCHEDULE"}]}}}`)
	if got := e.taints("gpu"); got != "workload-type=gpu:NO_SCHEDULE,nvidia.com/gpu=present:NO_SCHEDULE" {
		t.Fatalf("GPU pool's taints: %s", got)
	}
	if got := e.taints("cpu"); got != "" {
		t.Fatalf("CPU pool's taints: %s", got)
	}
	e.update("gpu", `{"taints":{"taints":[{"key":"team","value":"ml","effect":"NO_EXECUTE"}]}}`)
	if got := e.taints("gpu"); got != "team=ml:NO_EXECUTE,nvidia.com/gpu=present:NO_SCHEDULE" {
		t.Fatalf("after a taint update: %s", got)
	}
}

// TestEmptySetIsNoSet: in nodePools.update an empty label, taint or
// resource label set is no set: it clears nothing, and an update of
// nothing else is refused.
func TestEmptySetIsNoSet(t *testing.T) {
	e := newEnv(t)
	e.create(`{"nodePool":{"name":"web","initialNodeCount":1,"locations":["us-central1-a"],"config":{"labels":{"a":"b"},` +
		`"taints":[{"key":"k","value":"v","effect":"NO_SCHEDULE"}],"resourceLabels":{"team":"web"}}}}`)
	for _, body := range []string{`{"labels":{"labels":{}}}`, `{"taints":{"taints":[]}}`, `{"resourceLabels":{}}`, `{"labels":{},"taints":{}}`} {
		status, code, b := e.raw("PUT", base+"/nodePools/web", "t", body)
		if status != 400 || code != "INVALID_ARGUMENT" || !strings.Contains(string(b), "must be specified") {
			t.Errorf("%s: %d %s %s", body, status, code, b)
		}
	}
	e.update("web", `{"machineType":"e2-standard-8","labels":{"labels":{}},"taints":{"taints":[]},"resourceLabels":{"labels":{}}}`)
	st, _ := e.sim.Pool(project, region, name, "web")
	if st.Config.MachineType != "e2-standard-8" || st.Config.Labels["a"] != "b" || len(st.Config.Taints) != 1 || st.Config.ResourceLabels["team"] != "web" {
		t.Fatalf("empty sets cleared something: %+v", st.Config)
	}
}

// TestClusterOperations: creating or deleting a pool is the cluster's
// operation: it waits for every other, and every other waits for it; two
// pools may be resized at once.
func TestClusterOperations(t *testing.T) {
	e := newEnv(t)
	e.raw("POST", base+"/nodePools", "t", `{"nodePool":{"name":"a","initialNodeCount":1,"locations":["us-central1-a"]}}`)
	status, code, b := e.raw("POST", base+"/nodePools", "t", `{"nodePool":{"name":"b","initialNodeCount":1}}`)
	if status != 400 || code != "FAILED_PRECONDITION" || !strings.Contains(string(b), `currently creating node pool \"a\" on cluster gke-prod`) {
		t.Fatalf("a second create: %d %s %s", status, code, b)
	}
	e.clock.Advance(time.Hour)
	e.raw("POST", base+"/nodePools", "t", `{"nodePool":{"name":"b","initialNodeCount":1,"locations":["us-central1-a"]}}`)
	if status, code, _ := e.raw("POST", base+"/nodePools/a:setSize", "t", `{"nodeCount":2}`); status != 400 || code != "FAILED_PRECONDITION" {
		t.Fatalf("a resize while another pool is created: %d %s", status, code)
	}
	e.clock.Advance(time.Hour)
	for _, p := range []string{"a", "b"} {
		if status, _, b := e.raw("POST", base+"/nodePools/"+p+":setSize", "t", `{"nodeCount":2}`); status != 200 {
			t.Fatalf("resizing %s beside the other: %s", p, b)
		}
	}
	if status, code, _ := e.raw("DELETE", base+"/nodePools/a", "t", ""); status != 400 || code != "FAILED_PRECONDITION" {
		t.Fatalf("a delete while pools are resized: %d %s", status, code)
	}
}

// TestLimits: node labels over 1,024 characters are refused; a pool over
// the cluster's limits or the region's CPUs is a quota error.
func TestLimits(t *testing.T) {
	e := newEnv(t)
	long := strings.Repeat("v", 60)
	labels := "{"
	for i := 0; i < 20; i++ {
		labels += `"k` + string(rune('a'+i)) + `":"` + long + `",`
	}
	labels = strings.TrimSuffix(labels, ",") + "}"
	status, code, _ := e.raw("POST", base+"/nodePools", "t", `{"nodePool":{"name":"l","initialNodeCount":1,"config":{"labels":`+labels+`}}}`)
	if status != 400 || code != "INVALID_ARGUMENT" {
		t.Fatalf("1,240 characters of labels: %d %s", status, code)
	}
	q := gke.New(gke.Options{Engine: sim.Options{Clock: e.clock}, Limits: gke.Limits{Pools: 1, ClusterNodes: 5000, RegionalCPUs: 24}})
	q.AddCluster(project, region, name, "1.30.5-gke.1014001")
	e.sim = q
	e.srv.Config.Handler = q
	status, code, b := e.raw("POST", base+"/nodePools", "t", `{"nodePool":{"name":"big","initialNodeCount":4,"config":{"machineType":"n2-standard-8"}}}`)
	if status != 403 || !strings.Contains(string(b), "Insufficient regional quota") {
		t.Fatalf("96 CPUs over a quota of 24: %d %s %s", status, code, b)
	}
	e.create(`{"nodePool":{"name":"one","initialNodeCount":1,"locations":["us-central1-a"]}}`)
	e.clock.Advance(time.Hour)
	status, code, b = e.raw("POST", base+"/nodePools", "t", `{"nodePool":{"name":"two","initialNodeCount":1,"locations":["us-central1-a"]}}`)
	if status != 429 || code != "RESOURCE_EXHAUSTED" || !strings.Contains(string(b), "QuotaFailure") {
		t.Fatalf("a second pool over a limit of one: %d %s %s", status, code, b)
	}
}

// create creates a pool with a raw body, failing the test on an error.
func (e *env) create(body string) {
	e.t.Helper()
	if status, _, b := e.raw("POST", base+"/nodePools", "t", body); status != 200 {
		e.t.Fatalf("create %s: %s", body, b)
	}
	e.clock.Advance(time.Hour)
}

// update updates a pool with a raw body and lets its operation end.
func (e *env) update(pool, body string) {
	e.t.Helper()
	if status, _, b := e.raw("PUT", base+"/nodePools/"+pool, "t", body); status != 200 {
		e.t.Fatalf("update %s: %s", body, b)
	}
	e.clock.Advance(time.Hour)
}

// taints are a pool's taints as key=value:EFFECT, in its order.
func (e *env) taints(pool string) string {
	st, _ := e.sim.Pool(project, region, name, pool)
	var out []string
	for _, t := range st.Config.Taints {
		out = append(out, t.Key+"="+t.Value+":"+t.Effect)
	}
	return strings.Join(out, ",")
}

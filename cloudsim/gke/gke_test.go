package gke_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	container "google.golang.org/api/container/v1"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/kpool/kpool/cloudsim/gke"
	"github.com/kpool/kpool/cloudsim/internal/simtest"
	"github.com/kpool/kpool/cloudsim/sim"
)

const (
	project = "kpool-prod-1"
	region  = "us-central1"
	name    = "gke-prod"
	base    = "/v1/projects/" + project + "/locations/" + region + "/clusters/" + name
)

var ctx = context.Background()

type env struct {
	t     *testing.T
	sim   *gke.Server
	clock *sim.ManualClock
	srv   *httptest.Server
	svc   *container.Service
}

func newEnv(t *testing.T) *env {
	clock := sim.NewManualClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	s := gke.New(gke.Options{Engine: sim.Options{Clock: clock, OperationTime: 30 * time.Second, NodeTime: 10 * time.Second}})
	s.AddCluster(project, region, name, "1.30.5-gke.1014001")
	srv := httptest.NewTLSServer(s)
	t.Cleanup(srv.Close)
	hc := &http.Client{Transport: &oauth2.Transport{Source: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "t"}), Base: srv.Client().Transport}}
	svc, err := container.NewService(ctx, option.WithHTTPClient(hc), option.WithEndpoint(srv.URL+"/"))
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, sim: s, clock: clock, srv: srv, svc: svc}
}

// raw sends a request with a bearer token (none when token is "") and
// returns the status and Google's error status.
func (e *env) raw(method, path, token, body string) (int, string, []byte) {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var g struct {
		Error struct {
			Code   int    `json:"code"`
			Status string `json:"status"`
		} `json:"error"`
	}
	_ = json.Unmarshal(b, &g)
	if g.Error.Code != 0 && g.Error.Code != resp.StatusCode {
		e.t.Fatalf("error body code %d on a %d", g.Error.Code, resp.StatusCode)
	}
	return resp.StatusCode, g.Error.Status, b
}

// TestWireRules checks the emulator's answers with raw HTTP: auth, the
// error body, codes, and GKE's refusals.
func TestWireRules(t *testing.T) {
	e := newEnv(t)
	pool := func(extra string) string {
		return `{"nodePool":{"name":"web","initialNodeCount":1,"locations":["us-central1-a"],"config":{"machineType":"e2-medium"` + extra + `}}}`
	}
	for _, tc := range []struct {
		name, method, path, token, body string
		status                          int
		code                            string
	}{
		{"no token", "GET", base + "/nodePools", "", "", 401, "UNAUTHENTICATED"},
		{"missing cluster", "GET", "/v1/projects/" + project + "/locations/" + region + "/clusters/nope/nodePools", "t", "", 404, "NOT_FOUND"},
		{"missing pool", "GET", base + "/nodePools/nope", "t", "", 404, "NOT_FOUND"},
		{"zone z", "POST", base + "/nodePools", "t", `{"nodePool":{"name":"a","initialNodeCount":1,"locations":["us-central1-z"]}}`, 400, "INVALID_ARGUMENT"},
		{"zone d of us-central1", "POST", base + "/nodePools", "t", `{"nodePool":{"name":"a","initialNodeCount":1,"locations":["us-central1-d"]}}`, 400, "INVALID_ARGUMENT"},
		{"zone 7", "POST", base + "/nodePools", "t", `{"nodePool":{"name":"a","initialNodeCount":1,"locations":["7"]}}`, 400, "INVALID_ARGUMENT"},
		{"disk type", "POST", base + "/nodePools", "t", pool(`,"diskType":"pd-fast"`), 400, "INVALID_ARGUMENT"},
		{"disk size", "POST", base + "/nodePools", "t", pool(`,"diskSizeGb":"5"`), 400, "INVALID_ARGUMENT"},
		{"accelerator", "POST", base + "/nodePools", "t", pool(`,"accelerators":[{"acceleratorType":"nvidia-tesla-z9","acceleratorCount":"1"}]`), 400, "INVALID_ARGUMENT"},
		{"taint effect", "POST", base + "/nodePools", "t", pool(`,"taints":[{"key":"a","effect":"NoSchedule"}]`), 400, "INVALID_ARGUMENT"},
		{"unknown field", "POST", base + "/nodePools", "t", pool(`,"bogus":1`), 400, "INVALID_ARGUMENT"},
		{"version format", "POST", base + "/nodePools", "t", `{"nodePool":{"name":"a","initialNodeCount":1,"version":"1.30.x"}}`, 400, "INVALID_ARGUMENT"},
		{"newer than the control plane", "POST", base + "/nodePools", "t", `{"nodePool":{"name":"a","initialNodeCount":1,"version":"1.31"}}`, 400, "INVALID_ARGUMENT"},
		{"per-zone and total bounds", "POST", base + "/nodePools", "t", `{"nodePool":{"name":"a","initialNodeCount":1,"autoscaling":{"enabled":true,"minNodeCount":1,"maxNodeCount":3,"totalMaxNodeCount":9}}}`, 400, "INVALID_ARGUMENT"},
		{"create", "POST", base + "/nodePools", "t", pool(""), 200, ""},
		{"spot is fixed", "PUT", base + "/nodePools/web", "t", `{"spot":true}`, 400, "INVALID_ARGUMENT"},
		{"again", "POST", base + "/nodePools", "t", pool(""), 409, "ALREADY_EXISTS"},
		{"second operation", "POST", base + "/nodePools/web:setSize", "t", `{"nodeCount":3}`, 400, "FAILED_PRECONDITION"},
		{"no such verb", "POST", base + "/nodePools/web:rollback", "t", `{}`, 501, "UNIMPLEMENTED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, code, body := e.raw(tc.method, tc.path, tc.token, tc.body)
			if status != tc.status || code != tc.code {
				t.Fatalf("%s %s: %d %s, want %d %s\n%s", tc.method, tc.path, status, code, tc.status, tc.code, body)
			}
		})
	}
	// Quota: 429 RESOURCE_EXHAUSTED with a RetryInfo and Retry-After.
	e.sim.SetRateLimit(0.001, 1)
	e.raw("GET", base+"/nodePools", "t", "")
	status, code, body := e.raw("GET", base+"/nodePools", "t", "")
	if status != 429 || code != "RESOURCE_EXHAUSTED" || !bytes.Contains(body, []byte("RetryInfo")) {
		t.Fatalf("throttled: %d %s %s", status, code, body)
	}
}

// TestSDKLifecycle drives the emulator with the unmodified client: create,
// operations PENDING/RUNNING/DONE, setSize, setAutoscaling, update,
// setManagement, delete, and the instance groups' counts.
func TestSDKLifecycle(t *testing.T) {
	e := newEnv(t)
	pools := e.svc.Projects.Locations.Clusters.NodePools
	parent := strings.TrimPrefix(base, "/v1/")
	op, err := pools.Create(parent, &container.CreateNodePoolRequest{NodePool: &container.NodePool{
		Name: "web", InitialNodeCount: 2, Locations: []string{"us-central1-a", "us-central1-f"},
		Config: &container.NodeConfig{MachineType: "n2-standard-4", DiskType: "hyperdisk-balanced"}}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	if op.Status != "PENDING" || op.OperationType != "CREATE_NODE_POOL" {
		t.Fatalf("create: %+v", op)
	}
	opName := "projects/" + project + "/locations/" + region + "/operations/" + op.Name
	e.clock.Advance(time.Second)
	if got, err := e.svc.Projects.Locations.Operations.Get(opName).Do(); err != nil || got.Status != "RUNNING" {
		t.Fatalf("operation: %+v, %v", got, err)
	}
	np, err := pools.Get(parent + "/nodePools/web").Do()
	if err != nil || np.Status != "PROVISIONING" || len(np.InstanceGroupUrls) != 2 || np.Config.DiskSizeGb != 100 {
		t.Fatalf("while provisioning: %+v, %v", np, err)
	}
	e.clock.Advance(time.Hour)
	if got, err := e.svc.Projects.Locations.Operations.Get(opName).Do(); err != nil || got.Status != "DONE" || got.Error != nil {
		t.Fatalf("operation: %+v, %v", got, err)
	}
	if st, _ := e.sim.Pool(project, region, name, "web"); st.Status != "RUNNING" || st.Nodes != 4 {
		t.Fatalf("created: %+v", st)
	}
	name := parent + "/nodePools/web"
	steps := []func() (*container.Operation, error){
		func() (*container.Operation, error) {
			return pools.SetSize(name, &container.SetNodePoolSizeRequest{NodeCount: 3}).Do()
		},
		func() (*container.Operation, error) {
			return pools.SetAutoscaling(name, &container.SetNodePoolAutoscalingRequest{Autoscaling: &container.NodePoolAutoscaling{
				Enabled: true, TotalMinNodeCount: 2, TotalMaxNodeCount: 10}}).Do()
		},
		func() (*container.Operation, error) {
			return pools.Update(name, &container.UpdateNodePoolRequest{MachineType: "n2-standard-8", Labels: &container.NodeLabels{Labels: map[string]string{"a": "b"}}}).Do()
		},
		func() (*container.Operation, error) {
			return pools.SetManagement(name, &container.SetNodePoolManagementRequest{Management: &container.NodeManagement{AutoRepair: true}}).Do()
		},
	}
	for i, step := range steps {
		if _, err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		np, _ := pools.Get(name).Do()
		if np.Status != "RECONCILING" {
			t.Fatalf("step %d: status %s", i, np.Status)
		}
		e.clock.Advance(time.Hour)
	}
	st, _ := e.sim.Pool(project, region, "gke-prod", "web")
	if st.PerZone != 3 || st.Config.MachineType != "n2-standard-8" || st.Config.Labels["a"] != "b" || !st.Autoscaling.Enabled || st.Management.AutoUpgrade {
		t.Fatalf("after the steps: %+v %+v", st, st.Config)
	}
	if _, err := pools.Delete(name).Do(); err != nil {
		t.Fatal(err)
	}
	if np, _ := pools.Get(name).Do(); np.Status != "STOPPING" {
		t.Fatalf("deleting: %s", np.Status)
	}
	e.clock.Advance(time.Hour)
	_, err = pools.Get(name).Do()
	if ge, ok := err.(*googleapi.Error); !ok || ge.Code != 404 {
		t.Fatalf("deleted pool: %v", err)
	}
}

// TestRunningWithErrorHeals: a resize whose instances fail to start leaves
// the pool RUNNING_WITH_ERROR; its instance groups keep trying, and as long
// again as the operation took, it is RUNNING.
func TestRunningWithErrorHeals(t *testing.T) {
	e := newEnv(t)
	pools := e.svc.Projects.Locations.Clusters.NodePools
	parent := strings.TrimPrefix(base, "/v1/")
	if _, err := pools.Create(parent, &container.CreateNodePoolRequest{NodePool: &container.NodePool{
		Name: "web", InitialNodeCount: 1, Locations: []string{"us-central1-a"}, Config: &container.NodeConfig{MachineType: "e2-standard-4"}}}).Do(); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	failed := simtest.FailOperation(e.sim, 0.5, 100, func(i int) bool {
		_, err := pools.SetSize(parent+"/nodePools/web", &container.SetNodePoolSizeRequest{NodeCount: int64(1 + (i+1)%3)}).Do()
		return err == nil
	}, func(int, bool) { e.clock.Advance(55*time.Second + time.Hour) })
	if !failed {
		t.Fatal("no resize failed in 100 tries")
	}
	e.clock.Advance(55 * time.Second) // the operation ends (30s + 10s a node, at most two), its healing has not
	if st, _ := e.sim.Pool(project, region, name, "web"); st.Status != "RUNNING_WITH_ERROR" || st.StatusMessage == "" {
		t.Fatalf("after a failed resize: %s %q", st.Status, st.StatusMessage)
	}
	e.clock.Advance(10 * time.Minute)
	np, err := pools.Get(parent + "/nodePools/web").Do()
	if err != nil {
		t.Fatal(err)
	}
	if np.Status != "RUNNING" || np.StatusMessage != "" {
		t.Fatalf("after the instance groups caught up: %s %q", np.Status, np.StatusMessage)
	}
}

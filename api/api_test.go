package api

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/store/storetest"
	"github.com/kpool/kpool/store/testdb"
)

const (
	user       = "user@example.com"
	other      = "other@example.com"
	admin      = "admin@example.com"
	controller = "gcp-controller@example.com"
	// aksController is granted the built-in AKS controller's name, which
	// the bare controller may not use.
	aksController = "aks-controller@example.com"
)

// testAPI is a kpool server on a loopback port, every exchange checked
// against the OpenAPI document.
type testAPI struct {
	t   *testing.T
	srv *httptest.Server
	// tokens is the store's token store: API tokens work beside
	// X-User-Email, as in kpool serve's header mode.
	tokens kpool.TokenStore
	// server is the API the test server serves, svc its service.
	server *Server
	svc    *service.Service
}

func newTestAPI(t *testing.T, open storetest.Opener) *testAPI {
	t.Helper()
	return newTestAPIOn(t, open, catalog.Registry())
}

// newTestAPIOn is newTestAPI with the platforms (and drivers) of reg.
func newTestAPIOn(t *testing.T, open storetest.Opener, reg *provider.Registry) *testAPI {
	t.Helper()
	access, err := auth.NewAccess([]string{admin}, []string{controller, aksController + "=aks-nodepool-controller"})
	if err != nil {
		t.Fatal(err)
	}
	st := open(t)
	ts, _ := st.(kpool.TokenStore)
	if ts != nil {
		access.WithTokens(ts)
	}
	svc := service.New(st, reg)
	h := NewServer(svc, access, slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv := httptest.NewServer(checkOpenAPI(t, h))
	t.Cleanup(srv.Close)
	return &testAPI{t: t, srv: srv, tokens: ts, server: h, svc: svc}
}

// forEachStore runs fn against a server on every available store.
func forEachStore(t *testing.T, fn func(t *testing.T, a *testAPI)) {
	for name, open := range testdb.Stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, newTestAPI(t, open))
		})
	}
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.body, err)
	}
}

func (r reply) errorBody(t *testing.T) ErrorDetail {
	t.Helper()
	var e ErrorBody
	r.json(t, &e)
	return e.Error
}

// do sends a request; headers are "Name: value" strings.
func (a *testAPI) do(method, path, body string, headers ...string) reply {
	a.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, a.srv.URL+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	resp, err := a.srv.Client().Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// token makes an API token for email, a user in groups, and returns the
// header that sends it.
func (a *testAPI) token(email string, groups ...string) string {
	a.t.Helper()
	tok, err := auth.CheckToken(auth.TokenRequest{User: email, Role: kpool.RoleUser, Groups: groups, CreatedBy: "test"}, time.Now())
	if err != nil {
		a.t.Fatal(err)
	}
	secret, hash := auth.NewTokenSecret()
	if err := a.tokens.CreateToken(context.Background(), tok, hash); err != nil {
		a.t.Fatal(err)
	}
	return "Authorization: Bearer " + secret
}

// as sends a JSON request as the given user.
func (a *testAPI) as(email, method, path, body string, headers ...string) reply {
	a.t.Helper()
	h := []string{"X-User-Email: " + email}
	if body != "" {
		h = append(h, "Content-Type: application/json")
	}
	h = append(h, headers...)
	return a.do(method, path, body, h...)
}

func want(t *testing.T, r reply, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
}

func wantError(t *testing.T, r reply, status int, code, contains string) ErrorDetail {
	t.Helper()
	want(t, r, status)
	e := r.errorBody(t)
	if e.Code != code || !strings.Contains(e.Message+" "+e.Details, contains) {
		t.Fatalf("error %+v, want code %s mentioning %q", e, code, contains)
	}
	return e
}

const guideClusterID = "550e8400-e29b-41d4-a716-446655440000"

// cluster registers a cluster of owner. The spec gcpCluster stands for a
// cloud cluster of the owner's and the name's own: one cloud cluster is
// registered once.
func (a *testAPI) cluster(owner, name, spec string) kpool.Cluster {
	a.t.Helper()
	if spec == gcpCluster {
		spec = strings.Replace(spec, `"clusterName":"prod"`, fmt.Sprintf(`"clusterName":"c%08x"`, crc32.ChecksumIEEE([]byte(owner+" "+name))), 1)
	}
	r := a.as(owner, "POST", "/api/v1/clusters", fmt.Sprintf(`{"name":%q,"spec":%s}`, name, spec))
	want(a.t, r, http.StatusCreated)
	var c kpool.Cluster
	r.json(a.t, &c)
	return c
}

const (
	gcpCluster = `{"platform":{"type":"gcp","gcp":{"projectId":"acme-prod","location":"us-central1","clusterName":"prod"}}}`
	gcpPool    = `{"platform":{"gcp":{"machineType":"n1-standard-4"}},"nodeCount":3}`
)

func (a *testAPI) pool(owner, clusterID, name string) kpool.NodePool {
	a.t.Helper()
	r := a.as(owner, "POST", "/api/v1/nodepools", fmt.Sprintf(`{"name":%q,"cluster_id":%q,"spec":%s}`, name, clusterID, gcpPool))
	want(a.t, r, http.StatusCreated)
	var p kpool.NodePool
	r.json(a.t, &p)
	return p
}

// TestGuideWorkflow runs every request of the NodePools user guide as the
// guide writes it (only the pool id that the server returns is substituted
// for the guide's example id).
func TestGuideWorkflow(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *testAPI) {
		r := a.as(user, "POST", "/api/v1/clusters", `{"id":"`+guideClusterID+`","name":"prod","spec":`+gcpCluster+`}`)
		want(t, r, http.StatusCreated)

		// 1. Create NodePool, the nested form with cluster_id in the body too.
		r = a.as(user, "POST", "/api/v1/clusters/"+guideClusterID+"/nodepools", `{
  "name": "worker-pool-1",
  "cluster_id": "550e8400-e29b-41d4-a716-446655440000",
  "spec": {
    "platform": {
      "type": "gcp",
      "gcp": {
        "machineType": "n1-standard-4",
        "diskSize": 100,
        "diskType": "pd-ssd",
        "zones": ["us-central1-a", "us-central1-b"],
        "preemptible": false
      }
    },
    "autoscaling": {
      "enabled": true,
      "minNodes": 1,
      "maxNodes": 10
    },
    "nodeCount": 3
  }
}`)
		want(t, r, http.StatusCreated)
		var first map[string]any
		r.json(t, &first)
		for _, k := range []string{"id", "name", "cluster_id", "generation", "resource_version", "spec", "created_at", "updated_at", "created_by"} {
			if _, ok := first[k]; !ok {
				t.Fatalf("create response lacks %q: %s", k, r.body)
			}
		}
		if first["generation"].(float64) != 1 || first["created_by"] != user || first["cluster_id"] != guideClusterID {
			t.Fatalf("create response: %s", r.body)
		}
		if loc := r.header.Get("Location"); loc != "/api/v1/nodepools/"+first["id"].(string) {
			t.Fatalf("Location %q", loc)
		}

		// Complete Example Workflow, 1: create with POST /api/v1/nodepools.
		r = a.do("POST", "/api/v1/nodepools", `{
    "name": "production-workers",
    "cluster_id": "550e8400-e29b-41d4-a716-446655440000",
    "spec": {
      "platform": {
        "type": "gcp",
        "gcp": {
          "machineType": "n1-standard-4",
          "diskSize": 100,
          "diskType": "pd-ssd",
          "zones": ["us-central1-a", "us-central1-b"]
        }
      },
      "autoscaling": {
        "enabled": true,
        "minNodes": 2,
        "maxNodes": 10
      },
      "nodeCount": 3
    }
  }`, "Content-Type: application/json", "X-User-Email: user@example.com")
		want(t, r, http.StatusCreated)
		var pw kpool.NodePool
		r.json(t, &pw)

		// 2. Monitor status.
		r = a.do("GET", "/api/v1/nodepools/"+pw.ID+"/status", "", "X-User-Email: user@example.com")
		want(t, r, http.StatusOK)
		var st service.StatusDocument
		r.json(t, &st)
		if st.NodePoolID != pw.ID || st.ControllerStatus == nil || len(st.ControllerStatus) != 0 || st.Status.Phase != kpool.PhasePending {
			t.Fatalf("status of a new pool: %s", r.body)
		}

		// 3. Scale the NodePool: a PUT with part of the spec keeps the rest.
		r = a.do("PUT", "/api/v1/nodepools/"+pw.ID, `{
    "name": "production-workers",
    "spec": {
      "platform": {
        "type": "gcp",
        "gcp": {
          "machineType": "n1-standard-4",
          "diskSize": 100
        }
      },
      "nodeCount": 6
    }
  }`, "Content-Type: application/json", "X-User-Email: user@example.com")
		want(t, r, http.StatusOK)
		var scaled kpool.NodePool
		r.json(t, &scaled)
		g := scaled.Spec.Platform.GCP
		if scaled.Generation != 2 || scaled.Spec.Count() != 6 || g.DiskType != "pd-ssd" || len(g.Zones) != 2 || !scaled.Spec.Autoscaling.On() {
			t.Fatalf("scaled pool: %s", r.body)
		}

		// Update NodePool Status (controllers only), the guide's body.
		r = a.do("PUT", "/api/v1/nodepools/"+pw.ID+"/status", `{
  "controller_name": "gcp-nodepool-controller",
  "observed_generation": 2,
  "conditions": [
    {
      "type": "Ready",
      "status": "True",
      "lastTransitionTime": "2025-10-17T10:30:00Z",
      "reason": "NodesReady",
      "message": "All nodes are ready and healthy"
    }
  ],
  "metadata": {
    "platform": "gcp",
    "region": "us-central1",
    "active_nodes": 5,
    "desired_nodes": 5,
    "node_ages": "2h30m,1h45m,1h15m,45m,30m"
  }
}`, "Content-Type: application/json", "X-User-Email: "+controller)
		want(t, r, http.StatusOK)
		r = a.as(user, "GET", "/api/v1/nodepools/"+pw.ID+"/status", "")
		r.json(t, &st)
		if len(st.ControllerStatus) != 1 || st.ControllerStatus[0].ObservedGeneration != 2 || st.Status.Phase != kpool.PhaseReady || st.Status.ObservedGeneration != 2 {
			t.Fatalf("status after the controller's report: %s", r.body)
		}
		var meta map[string]any
		if err := json.Unmarshal(st.ControllerStatus[0].Metadata, &meta); err != nil || meta["node_ages"] != "2h30m,1h45m,1h15m,45m,30m" {
			t.Fatalf("metadata not kept: %s", st.ControllerStatus[0].Metadata)
		}
		if c := st.ControllerStatus[0].Conditions[0]; c.LastTransitionTime.Format("2006-01-02T15:04:05Z") != "2025-10-17T10:30:00Z" {
			t.Fatalf("the controller's transition time was not kept: %+v", c)
		}

		// List with the guide's query.
		r = a.do("GET", "/api/v1/nodepools?limit=10&status=Ready", "", "X-User-Email: user@example.com")
		want(t, r, http.StatusOK)
		var list NodePoolList
		r.json(t, &list)
		if list.Total != 1 || list.Limit != 10 || list.Offset != 0 || list.NodePools[0].ID != pw.ID {
			t.Fatalf("list: %s", r.body)
		}
		r = a.as(user, "GET", "/api/v1/clusters/"+guideClusterID+"/nodepools", "")
		r.json(t, &list)
		if list.Total != 2 {
			t.Fatalf("nested list: %s", r.body)
		}

		// Get NodePool.
		r = a.as(user, "GET", "/api/v1/nodepools/"+pw.ID, "")
		want(t, r, http.StatusOK)
		if etag := r.header.Get("ETag"); etag == "" {
			t.Fatal("no ETag")
		}

		// 4. Update NodePool, the guide's body, renames the pool: refused.
		r = a.as(user, "PUT", "/api/v1/nodepools/"+first["id"].(string), `{
  "name": "worker-pool-1-updated",
  "spec": {
    "platform": {
      "type": "gcp",
      "gcp": {
        "machineType": "n1-standard-8",
        "diskSize": 200
      }
    },
    "nodeCount": 5
  }
}`)
		e := wantError(t, r, http.StatusBadRequest, kpool.CodeValidation, "immutable")
		if len(e.Fields) != 1 || e.Fields[0].Field != "name" {
			t.Fatalf("rename error fields: %+v", e.Fields)
		}
		// Nothing of that update was applied.
		r = a.as(user, "GET", "/api/v1/nodepools/"+first["id"].(string), "")
		var unchanged kpool.NodePool
		r.json(t, &unchanged)
		if unchanged.Generation != 1 || unchanged.Spec.Platform.GCP.MachineType != "n1-standard-4" {
			t.Fatalf("a refused update changed the pool: %s", r.body)
		}

		// Error Handling: the guide's conflict message.
		r = a.as(user, "POST", "/api/v1/nodepools", `{"name":"production-workers","cluster_id":"`+guideClusterID+`","spec":`+gcpPool+`}`)
		wantError(t, r, http.StatusConflict, kpool.CodeConflict, "NodePool with name 'production-workers' already exists in cluster")
		wantError(t, a.as(user, "GET", "/api/v1/nodepools/123e4567-e89b-12d3-a456-426614174000", ""), http.StatusNotFound, kpool.CodeNotFound, "NodePool not found")
		wantError(t, a.as(user, "POST", "/api/v1/nodepools", `{"cluster_id":"`+guideClusterID+`","spec":`+gcpPool+`}`), http.StatusBadRequest, kpool.CodeValidation, "name: required")

		// Autoscaling Configuration, applied to a pool.
		r = a.as(user, "PUT", "/api/v1/nodepools/"+pw.ID, `{"spec":{
    "autoscaling": {
      "enabled": true,
      "minNodes": 1,
      "maxNodes": 20,
      "targetCPUUtilization": 70,
      "targetMemoryUtilization": 80,
      "scaleDownDelay": "10m",
      "scaleUpDelay": "3m"
    }
  }}`)
		want(t, r, http.StatusOK)

		// 5. Delete NodePool: 204 for a pool no controller has reported on.
		r = a.as(user, "DELETE", "/api/v1/nodepools/"+first["id"].(string), "")
		want(t, r, http.StatusNoContent)
		// and 202 Deleting for one a controller manages.
		r = a.as(user, "DELETE", "/api/v1/nodepools/"+pw.ID, "")
		want(t, r, http.StatusAccepted)
		var del kpool.NodePool
		r.json(t, &del)
		if del.Status.Phase != kpool.PhaseDeleting {
			t.Fatalf("deleting pool: %s", r.body)
		}
	})
}

// TestGuidePlatformExamples creates a pool from each platform example of the
// guide on a cluster of that platform.
func TestGuidePlatformExamples(t *testing.T) {
	a := newTestAPI(t, testdb.SQLite)
	examples := []struct{ cluster, pool string }{
		{gcpCluster, `{
    "nodeCount": 2,
    "platform": {
      "type": "gcp",
      "gcp": {
        "machineType": "n1-standard-4",
        "diskSize": 100,
        "diskType": "pd-ssd",
        "zones": ["us-central1-a", "us-central1-b"],
        "preemptible": false,
        "accelerators": [
          {
            "type": "nvidia-tesla-v100",
            "count": 1
          }
        ],
        "labels": {
          "environment": "production",
          "team": "platform"
        },
        "taints": [
          {
            "key": "workload-type",
            "value": "gpu",
            "effect": "NoSchedule"
          }
        ]
      }
    }
  }`},
		{`{"platform":{"type":"aws","aws":{"region":"us-west-2","clusterName":"prod","nodeRoleArn":"arn:aws:iam::123456789012:role/eks-nodes",
			"subnets":{"us-west-2a":"subnet-0123456789abcdef0","us-west-2b":"subnet-0123456789abcdef1"}}}}`, `{
    "platform": {
      "type": "aws",
      "aws": {
        "instanceType": "m5.xlarge",
        "volumeSize": 100,
        "volumeType": "gp3",
        "availabilityZones": ["us-west-2a", "us-west-2b"],
        "spotInstances": false,
        "userData": "#!/bin/bash\necho 'Custom initialization'"
      }
    }
  }`},
		{`{"platform":{"type":"azure","azure":{"subscriptionId":"0b1f6471-1bf0-4dda-aec3-111122223333","resourceGroup":"rg","clusterName":"prod"}}}`, `{
    "platform": {
      "type": "azure",
      "azure": {
        "vmSize": "Standard_D4s_v3",
        "osDiskSizeGB": 100,
        "osDiskType": "Premium_LRS",
        "availabilityZones": ["1", "2"],
        "spotInstances": false
      }
    }
  }`},
	}
	for i, ex := range examples {
		c := a.cluster(user, fmt.Sprintf("c%d", i), ex.cluster)
		r := a.as(user, "POST", "/api/v1/clusters/"+c.ID+"/nodepools", `{"name":"example","spec":`+ex.pool+`}`)
		want(t, r, http.StatusCreated)
		var p kpool.NodePool
		r.json(t, &p)
		// The GKE example sets 2 nodes (GKE keeps as many in each of its two
		// zones); the others default to 1.
		wantCount := 1
		if ex.cluster == gcpCluster {
			wantCount = 2
		}
		if p.Spec.Count() != wantCount || p.Spec.Mode != kpool.ModeUser {
			t.Fatalf("defaults: %s", r.body)
		}
	}
}

func TestIdentity(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *testAPI) {
		c := a.cluster(user, "prod", gcpCluster)
		p := a.pool(user, c.ID, "workers")

		wantError(t, a.do("GET", "/api/v1/nodepools", ""), http.StatusUnauthorized, kpool.CodeUnauthorized, "X-User-Email")
		wantError(t, a.do("GET", "/api/v1/nodepools", "", "X-User-Email: not-an-address"), http.StatusUnauthorized, kpool.CodeUnauthorized, "not-an-address")
		wantError(t, a.do("GET", "/api/v1/nodepools", "", "X-User-Email: Joe <joe@example.com>"), http.StatusUnauthorized, kpool.CodeUnauthorized, "bare")

		// Another user sees nothing of it, and cannot tell it exists.
		for _, r := range []reply{
			a.as(other, "GET", "/api/v1/clusters/"+c.ID, ""),
			a.as(other, "GET", "/api/v1/nodepools/"+p.ID, ""),
			a.as(other, "GET", "/api/v1/nodepools/"+p.ID+"/status", ""),
			a.as(other, "PUT", "/api/v1/nodepools/"+p.ID, `{"spec":{"nodeCount":9}}`),
			a.as(other, "DELETE", "/api/v1/nodepools/"+p.ID, ""),
			a.as(other, "DELETE", "/api/v1/clusters/"+c.ID, ""),
			a.as(other, "GET", "/api/v1/clusters/"+c.ID+"/nodepools", ""),
			a.as(other, "POST", "/api/v1/clusters/"+c.ID+"/nodepools", `{"name":"x","spec":`+gcpPool+`}`),
		} {
			want(t, r, http.StatusNotFound)
		}
		var list NodePoolList
		a.as(other, "GET", "/api/v1/nodepools?cluster_id="+c.ID, "").json(t, &list)
		if list.Total != 0 || list.NodePools == nil {
			t.Fatalf("other user's list: total %d, items %v", list.Total, list.NodePools)
		}
		// The same user in other letter case is the same user.
		want(t, a.as("USER@Example.com", "GET", "/api/v1/nodepools/"+p.ID, ""), http.StatusOK)

		// Admins see and change everything.
		want(t, a.as(admin, "GET", "/api/v1/nodepools/"+p.ID, ""), http.StatusOK)
		want(t, a.as(admin, "PATCH", "/api/v1/nodepools/"+p.ID, `{"spec":{"nodeCount":4}}`), http.StatusOK)

		// Controllers read everything, write status, and change nothing else.
		want(t, a.as(controller, "GET", "/api/v1/nodepools/"+p.ID, ""), http.StatusOK)
		wantError(t, a.as(controller, "PUT", "/api/v1/nodepools/"+p.ID, `{"spec":{"nodeCount":5}}`), http.StatusForbidden, kpool.CodeForbidden, "controller")
		wantError(t, a.as(controller, "POST", "/api/v1/clusters", `{"name":"x","spec":`+gcpCluster+`}`), http.StatusForbidden, kpool.CodeForbidden, "controller")
		report := `{"controller_name":"gcp-nodepool-controller","observed_generation":1,"conditions":[],"metadata":{}}`
		want(t, a.as(controller, "PUT", "/api/v1/nodepools/"+p.ID+"/status", report), http.StatusOK)

		// Owners and admins may not write status.
		wantError(t, a.as(user, "PUT", "/api/v1/nodepools/"+p.ID+"/status", report), http.StatusForbidden, kpool.CodeForbidden, "controller")
		wantError(t, a.as(admin, "PUT", "/api/v1/nodepools/"+p.ID+"/status", report), http.StatusForbidden, kpool.CodeForbidden, "controller")
	})
}

func TestConcurrentPuts(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *testAPI) {
		c := a.cluster(user, "prod", gcpCluster)
		p := a.pool(user, c.ID, "workers")
		statuses := func(n int, body func(i int) string, headers ...string) map[int]int {
			out := map[int]int{}
			var mu sync.Mutex
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := a.as(user, "PUT", "/api/v1/nodepools/"+p.ID, body(i), headers...)
					mu.Lock()
					out[r.status]++
					mu.Unlock()
				}()
			}
			wg.Wait()
			return out
		}
		got := statuses(50, func(i int) string {
			return fmt.Sprintf(`{"resource_version":%q,"spec":{"nodeCount":%d}}`, p.ResourceVersion, 10+i)
		})
		if got[http.StatusOK] != 1 || got[http.StatusConflict] != 49 {
			t.Fatalf("same resource_version: %v", got)
		}
		var now kpool.NodePool
		a.as(user, "GET", "/api/v1/nodepools/"+p.ID, "").json(t, &now)
		got = statuses(50, func(i int) string { return fmt.Sprintf(`{"spec":{"nodeCount":%d}}`, 100+i) })
		if got[http.StatusOK] != 50 {
			t.Fatalf("without resource_version: %v", got)
		}
		var after kpool.NodePool
		a.as(user, "GET", "/api/v1/nodepools/"+p.ID, "").json(t, &after)
		if after.Generation != now.Generation+50 {
			t.Fatalf("generation %d after 50 changes from %d", after.Generation, now.Generation)
		}
		// A no-op PUT leaves the generation (and resource_version) alone.
		r := a.as(user, "PUT", "/api/v1/nodepools/"+p.ID, fmt.Sprintf(`{"spec":{"nodeCount":%d}}`, after.Spec.Count()))
		var noop kpool.NodePool
		r.json(t, &noop)
		if noop.Generation != after.Generation || noop.ResourceVersion != after.ResourceVersion {
			t.Fatalf("no-op PUT: generation %d→%d", after.Generation, noop.Generation)
		}
		// If-Match works as resource_version does.
		wantError(t, a.as(user, "PUT", "/api/v1/nodepools/"+p.ID, `{"spec":{"nodeCount":2}}`, `If-Match: "stale"`), http.StatusConflict, kpool.CodeConflict, "modified")
		r = a.as(user, "PUT", "/api/v1/nodepools/"+p.ID, `{"spec":{"nodeCount":2}}`, "If-Match: "+r.header.Get("ETag"))
		want(t, r, http.StatusOK)
	})
}

func TestReadOnlyFieldsRoundTrip(t *testing.T) {
	a := newTestAPI(t, testdb.SQLite)
	c := a.cluster(user, "prod", gcpCluster)
	p := a.pool(user, c.ID, "workers")
	// A GET's output, edited and sent back whole, is a valid PUT.
	r := a.as(user, "GET", "/api/v1/nodepools/"+p.ID, "")
	var obj map[string]any
	r.json(t, &obj)
	obj["spec"].(map[string]any)["nodeCount"] = 7
	body, _ := json.Marshal(obj)
	r = a.as(user, "PUT", "/api/v1/nodepools/"+p.ID, string(body))
	want(t, r, http.StatusOK)
	var up kpool.NodePool
	r.json(t, &up)
	if up.Spec.Count() != 7 || up.Generation != 2 {
		t.Fatalf("round trip: %s", r.body)
	}
	// Moving a pool to another cluster is refused.
	other := a.cluster(user, "other", gcpCluster)
	r = a.as(user, "PATCH", "/api/v1/nodepools/"+p.ID, `{"cluster_id":"`+other.ID+`"}`)
	e := wantError(t, r, http.StatusBadRequest, kpool.CodeValidation, "immutable")
	if e.Fields[0].Field != "cluster_id" {
		t.Fatalf("fields %+v", e.Fields)
	}
}

func TestBadRequests(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *testAPI) {
		c := a.cluster(user, "prod", gcpCluster)
		p := a.pool(user, c.ID, "workers")
		tests := []struct {
			name, method, path, body string
			headers                  []string
			status                   int
			code, field              string
		}{
			{"unknown field", "POST", "/api/v1/nodepools", `{"name":"x","cluster_id":"` + c.ID + `","spec":{"replicas":3}}`, nil, 400, kpool.CodeValidation, "spec.replicas"},
			{"unknown top-level field", "POST", "/api/v1/clusters", `{"name":"x","spec":` + gcpCluster + `,"owner":"me"}`, nil, 400, kpool.CodeValidation, "owner"},
			{"wrong type", "PUT", "/api/v1/nodepools/" + p.ID, `{"spec":{"nodeCount":"six"}}`, nil, 400, kpool.CodeValidation, "spec.nodeCount"},
			{"bad json", "PUT", "/api/v1/nodepools/" + p.ID, `{"spec":`, nil, 400, kpool.CodeValidation, "body"},
			{"empty body", "PUT", "/api/v1/nodepools/" + p.ID, ``, nil, 400, kpool.CodeValidation, "body"},
			{"cluster id mismatch", "POST", "/api/v1/clusters/" + c.ID + "/nodepools", `{"name":"x","cluster_id":"7c9e6679-7425-40de-944b-e07fc1f90ae7","spec":` + gcpPool + `}`, nil, 400, kpool.CodeValidation, "cluster_id"},
			{"cluster id missing", "POST", "/api/v1/nodepools", `{"name":"x","spec":` + gcpPool + `}`, nil, 400, kpool.CodeValidation, "cluster_id"},
			{"limit 0", "GET", "/api/v1/nodepools?limit=0", "", nil, 400, kpool.CodeValidation, "limit"},
			{"limit 101", "GET", "/api/v1/nodepools?limit=101", "", nil, 400, kpool.CodeValidation, "limit"},
			{"limit text", "GET", "/api/v1/clusters?limit=ten", "", nil, 400, kpool.CodeValidation, "limit"},
			{"offset negative", "GET", "/api/v1/nodepools?offset=-1", "", nil, 400, kpool.CodeValidation, "offset"},
			{"offset and after", "GET", "/api/v1/nodepools?offset=1&after=MTIzLjQ", "", nil, 400, kpool.CodeValidation, "after"},
			{"bad status", "GET", "/api/v1/nodepools?status=Running", "", nil, 400, kpool.CodeValidation, "status"},
			{"bad health", "GET", "/api/v1/nodepools?health=ok", "", nil, 400, kpool.CodeValidation, "health"},
			{"bad cluster filter", "GET", "/api/v1/nodepools?cluster_id=prod", "", nil, 400, kpool.CodeValidation, "cluster_id"},
			{"unknown parameter", "GET", "/api/v1/nodepools?clusterid=" + c.ID, "", nil, 400, kpool.CodeValidation, "clusterid"},
			{"repeated parameter", "GET", "/api/v1/nodepools?limit=1&limit=2", "", nil, 400, kpool.CodeValidation, "limit"},
			{"parameter on get", "GET", "/api/v1/nodepools/" + p.ID + "?verbose=1", "", nil, 400, kpool.CodeValidation, "verbose"},
			{"bad force", "DELETE", "/api/v1/clusters/" + c.ID + "?force=maybe", "", nil, 400, kpool.CodeValidation, "force"},
			{"id differs from path", "PUT", "/api/v1/nodepools/" + p.ID, `{"id":"7c9e6679-7425-40de-944b-e07fc1f90ae7","spec":{}}`, nil, 400, kpool.CodeValidation, "id"},
			{"cluster id differs from path", "PATCH", "/api/v1/clusters/" + c.ID, `{"id":"7c9e6679-7425-40de-944b-e07fc1f90ae7"}`, nil, 400, kpool.CodeValidation, "id"},
			{"urn cluster filter", "GET", "/api/v1/nodepools?cluster_id=urn:uuid:" + c.ID, "", nil, 400, kpool.CodeValidation, "cluster_id"},
			{"if-match disagrees", "PUT", "/api/v1/nodepools/" + p.ID, `{"resource_version":"a","spec":{}}`, []string{`If-Match: "b"`}, 400, kpool.CodeValidation, "resource_version"},
			{"status ahead", "PUT", "/api/v1/nodepools/" + p.ID + "/status", `{"controller_name":"c","observed_generation":9}`, nil, 400, kpool.CodeValidation, "observed_generation"},
			{"status bad condition", "PUT", "/api/v1/nodepools/" + p.ID + "/status", `{"controller_name":"c","observed_generation":1,"conditions":[{"type":"Ready","status":"yes"}]}`, nil, 400, kpool.CodeValidation, "conditions[0].status"},
			{"not a uuid", "GET", "/api/v1/nodepools/prod", "", nil, 400, kpool.CodeValidation, "id"},
			{"cluster not a uuid", "GET", "/api/v1/clusters/prod", "", nil, 400, kpool.CodeValidation, "id"},
			{"cluster pools not a uuid", "GET", "/api/v1/clusters/prod/nodepools", "", nil, 400, kpool.CodeValidation, "id"},
			{"status not a uuid", "GET", "/api/v1/nodepools/not-a-uuid/status", "", nil, 400, kpool.CodeValidation, "id"},
			{"status report not a uuid", "PUT", "/api/v1/nodepools/not-a-uuid/status", `{"controller_name":"c","observed_generation":1}`, nil, 400, kpool.CodeValidation, "id"},
			{"put not a uuid", "PUT", "/api/v1/nodepools/not-a-uuid", `{"spec":{}}`, nil, 400, kpool.CodeValidation, "id"},
			{"patch cluster not a uuid", "PATCH", "/api/v1/clusters/x", `{}`, nil, 400, kpool.CodeValidation, "id"},
			{"delete not a uuid", "DELETE", "/api/v1/nodepools/not-a-uuid", "", nil, 400, kpool.CodeValidation, "id"},
			{"delete cluster not a uuid", "DELETE", "/api/v1/clusters/x", "", nil, 400, kpool.CodeValidation, "id"},
			{"create in cluster not a uuid", "POST", "/api/v1/clusters/prod/nodepools", `{"name":"x","spec":` + gcpPool + `}`, nil, 400, kpool.CodeValidation, "id"},
			{"placement in cluster not a uuid", "POST", "/api/v1/clusters/prod/placements", `{"manifests":"kind: Pod"}`, nil, 400, kpool.CodeValidation, "id"},
			{"urn pool id", "GET", "/api/v1/nodepools/urn:uuid:" + p.ID, "", nil, 400, kpool.CodeValidation, "id"},
			{"nil uuid pool", "GET", "/api/v1/nodepools/" + kpool.NilUUID, "", nil, 400, kpool.CodeValidation, "id"},
			{"nil uuid cluster", "DELETE", "/api/v1/clusters/" + kpool.NilUUID, "", nil, 400, kpool.CodeValidation, "id"},
			{"nil uuid body id", "POST", "/api/v1/nodepools", `{"id":"` + kpool.NilUUID + `","name":"x","cluster_id":"` + c.ID + `","spec":` + gcpPool + `}`, nil, 400, kpool.CodeValidation, "id"},
			{"nil uuid cluster body id", "POST", "/api/v1/clusters", `{"id":"` + kpool.NilUUID + `","name":"x","spec":` + gcpCluster + `}`, nil, 400, kpool.CodeValidation, "id"},
			{"nil uuid cluster_id", "POST", "/api/v1/nodepools", `{"name":"x","cluster_id":"` + kpool.NilUUID + `","spec":` + gcpPool + `}`, nil, 400, kpool.CodeValidation, "cluster_id"},
			{"query does not decode", "GET", "/api/v1/nodepools?limit=%zz", "", nil, 400, kpool.CodeValidation, "query"},
			{"query does not decode on a cluster list", "GET", "/api/v1/clusters?x=%", "", nil, 400, kpool.CodeValidation, "query"},
			{"query does not decode on a get", "GET", "/api/v1/clusters/" + c.ID + "?%zz", "", nil, 400, kpool.CodeValidation, "query"},
			{"query does not decode on a write", "PATCH", "/api/v1/nodepools/" + p.ID + "?dry_run=%zz", `{}`, nil, 400, kpool.CodeValidation, "query"},
			{"query does not decode on a delete", "DELETE", "/api/v1/nodepools/" + p.ID + "?dry_run=true&%zz", "", nil, 400, kpool.CodeValidation, "query"},
			{"query does not decode on events", "GET", "/api/v1/events?limit=%zz", "", nil, 400, kpool.CodeValidation, "query"},
			{"query and id at fault together", "GET", "/api/v1/nodepools/prod?%zz", "", nil, 400, kpool.CodeValidation, "id"},
			{"no such cluster", "POST", "/api/v1/clusters/7c9e6679-7425-40de-944b-e07fc1f90ae7/nodepools", `{"name":"x","spec":` + gcpPool + `}`, nil, 404, kpool.CodeNotFound, ""},
			{"text body", "POST", "/api/v1/clusters", `name=x`, []string{"Content-Type: text/plain"}, 415, kpool.CodeUnsupportedMedia, ""},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				who := user
				if strings.HasSuffix(tc.path, "/status") {
					who = controller
				}
				r := a.as(who, tc.method, tc.path, tc.body, tc.headers...)
				e := wantError(t, r, tc.status, tc.code, "")
				if tc.field == "" {
					return
				}
				for _, f := range e.Fields {
					if f.Field == tc.field {
						return
					}
				}
				t.Fatalf("no error on %s: %+v", tc.field, e)
			})
		}
		// Bodies over 1 MiB are refused with 413.
		big := `{"name":"x","spec":{"tags":{"k":"` + strings.Repeat("v", MaxBodyBytes) + `"}}}`
		wantError(t, a.as(user, "POST", "/api/v1/clusters", big), http.StatusRequestEntityTooLarge, kpool.CodePayloadTooLarge, "limit")
	})
}

func TestNotImplementedPlatforms(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *testAPI) {
		for _, pt := range []string{"k3s", "microvm"} {
			c := a.cluster(user, pt, `{"platform":{"type":"`+pt+`"}}`)
			r := a.as(user, "POST", "/api/v1/clusters/"+c.ID+"/nodepools", `{"name":"x","spec":{"nodeCount":1}}`)
			wantError(t, r, http.StatusNotImplemented, kpool.CodeNotImplemented, pt)
		}
	})
}

func TestClusterDelete(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *testAPI) {
		c := a.cluster(user, "prod", gcpCluster)
		p := a.pool(user, c.ID, "workers")
		a.pool(user, c.ID, "quiet")
		wantError(t, a.as(user, "DELETE", "/api/v1/clusters/"+c.ID, ""), http.StatusConflict, kpool.CodeConflict, "force=true")
		want(t, a.as(controller, "PUT", "/api/v1/nodepools/"+p.ID+"/status", `{"controller_name":"gcp-nodepool-controller","observed_generation":1}`), http.StatusOK)
		r := a.as(user, "DELETE", "/api/v1/clusters/"+c.ID+"?force=true", "")
		want(t, r, http.StatusAccepted)
		var cl kpool.Cluster
		r.json(t, &cl)
		if cl.Status.Phase != kpool.ClusterDeleting {
			t.Fatalf("cluster: %s", r.body)
		}
		r = a.as(controller, "PUT", "/api/v1/nodepools/"+p.ID+"/status",
			`{"controller_name":"gcp-nodepool-controller","observed_generation":1,"conditions":[{"type":"Deleted","status":"True","reason":"DeletedAtProvider"}]}`)
		want(t, r, http.StatusOK)
		var doc service.StatusDocument
		r.json(t, &doc)
		if !doc.Deleted {
			t.Fatalf("final report: %s", r.body)
		}
		want(t, a.as(user, "GET", "/api/v1/clusters/"+c.ID, ""), http.StatusNotFound)
		// An empty cluster goes at once.
		e := a.cluster(user, "empty", gcpCluster)
		want(t, a.as(user, "DELETE", "/api/v1/clusters/"+e.ID, ""), http.StatusNoContent)
	})
}

func TestStaleReportWarns(t *testing.T) {
	a := newTestAPI(t, testdb.SQLite)
	c := a.cluster(user, "prod", gcpCluster)
	p := a.pool(user, c.ID, "workers")
	want(t, a.as(user, "PUT", "/api/v1/nodepools/"+p.ID, `{"spec":{"nodeCount":4}}`), http.StatusOK)
	want(t, a.as(controller, "PUT", "/api/v1/nodepools/"+p.ID+"/status", `{"controller_name":"gcp-nodepool-controller","observed_generation":2}`), http.StatusOK)
	r := a.as(controller, "PUT", "/api/v1/nodepools/"+p.ID+"/status", `{"controller_name":"gcp-nodepool-controller","observed_generation":1}`)
	want(t, r, http.StatusOK)
	if !strings.Contains(r.header.Get("Warning"), "ignored") {
		t.Fatalf("no Warning on a stale report: %v", r.header)
	}
}

func TestServerBasics(t *testing.T) {
	a := newTestAPI(t, testdb.SQLite)
	want(t, a.do("GET", "/healthz", ""), http.StatusOK)
	want(t, a.do("GET", "/readyz", ""), http.StatusOK)

	r := a.as(user, "PATCH", "/api/v1/nodepools", `{}`)
	wantError(t, r, http.StatusMethodNotAllowed, kpool.CodeMethodNotAllowed, "PATCH")
	if allow := r.header.Get("Allow"); !strings.Contains(allow, "GET") || !strings.Contains(allow, "POST") {
		t.Fatalf("Allow %q", allow)
	}
	wantError(t, a.as(user, "GET", "/api/v2/nodepools", ""), http.StatusNotFound, kpool.CodeNotFound, "/api/v2/nodepools")

	r = a.do("GET", "/healthz", "", "X-Request-ID: trace-123")
	if r.header.Get("X-Request-ID") != "trace-123" {
		t.Fatalf("request id not echoed: %v", r.header)
	}
	if id := a.do("GET", "/healthz", "").header.Get("X-Request-ID"); len(id) != 16 {
		t.Fatalf("generated request id %q", id)
	}
	// The document is public.
	r = a.do("GET", "/api/v1/openapi.json", "")
	want(t, r, http.StatusOK)
	var doc map[string]any
	r.json(t, &doc)
	if doc["openapi"] == nil {
		t.Fatalf("openapi.json: %s", r.body)
	}
}

func TestPaging(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *testAPI) {
		c := a.cluster(user, "prod", gcpCluster)
		for i := range 5 {
			a.pool(user, c.ID, fmt.Sprintf("pool-%d", i))
		}
		var seen []string
		path := "/api/v1/nodepools?limit=2"
		for {
			var l NodePoolList
			a.as(user, "GET", path, "").json(t, &l)
			if l.Total != 5 || l.Limit != 2 {
				t.Fatalf("page: %+v", l)
			}
			for _, p := range l.NodePools {
				seen = append(seen, p.Name)
			}
			if l.Next == "" {
				break
			}
			path = "/api/v1/nodepools?limit=2&after=" + l.Next
		}
		if strings.Join(seen, ",") != "pool-0,pool-1,pool-2,pool-3,pool-4" {
			t.Fatalf("pages: %v", seen)
		}
		var empty ClusterList
		r := a.as(other, "GET", "/api/v1/clusters", "")
		if !strings.Contains(string(r.body), `"clusters":[]`) {
			t.Fatalf("empty list is not []: %s", r.body)
		}
		r.json(t, &empty)
	})
}

const aksCluster = `{"platform":{"type":"azure","azure":{"subscriptionId":"0b1f6471-1bf0-4dda-aec3-111122223333","resourceGroup":"rg","clusterName":"aks","location":"westeurope"}}}`

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
				out[field] = text
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
			len(dry.Plan.Warnings) != 1 || len(warnings(r)) != 1 {
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

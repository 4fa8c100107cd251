package driver_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	civosim "github.com/kpool/kpool/cloudsim/civo"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider/civo/driver"
)

// recorder keeps the requests a client sends.
type recorder struct {
	base http.RoundTripper
	mu   sync.Mutex
	reqs []*http.Request
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.base.RoundTrip(req)
}

func (r *recorder) last() *http.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reqs[len(r.reqs)-1]
}

// TestClient drives the typed client against the emulator, call by call.
func TestClient(t *testing.T) {
	clock := sim.NewManualClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	emu := civosim.New(civosim.Options{Engine: sim.Options{Clock: clock, OperationTime: 30 * time.Second, NodeTime: 10 * time.Second}, Keys: []string{apiKey}})
	emu.AddCluster(civosim.Cluster{ID: clusterID, Name: "prod", Region: region})
	srv := httptest.NewUnstartedServer(emu)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	rec := &recorder{base: srv.Client().Transport}
	cl := driver.NewClient(srv.URL, apiKey, region, &http.Client{Transport: rec})
	two, zero := 2, 0
	taints := []driver.Taint{{Key: "k", Value: "v", Effect: "NoSchedule"}}

	type step struct {
		name   string
		call   func() error
		method string
		query  string // the region query: on every call, as civogo sends it
		status int    // 0: success
		code   string
	}
	for _, s := range []step{
		{"list empty", func() error { _, err := cl.List(ctx, clusterID); return err }, "GET", "region=LON1", 0, ""},
		{"create", func() error {
			return cl.Create(ctx, clusterID, driver.PoolConfig{ID: "web", Count: &two, Size: "g4s.kube.small", Labels: map[string]string{"a": "b"}, Taints: &taints})
		}, "POST", "region=LON1", 0, ""},
		{"get", func() error {
			p, err := cl.Get(ctx, clusterID, "web")
			if err == nil && (p.Count != 2 || len(p.Instances) != 2 || p.Instances[0].Status != "BUILDING" || p.Labels["a"] != "b" || len(p.Taints) != 1) {
				return errors.New("unexpected pool")
			}
			return err
		}, "GET", "region=LON1", 0, ""},
		{"update", func() error {
			p, err := cl.Update(ctx, clusterID, "web", driver.PoolConfig{Labels: map[string]string{"a": "c"}})
			if err == nil && p.Labels["a"] != "c" {
				return errors.New("labels not changed")
			}
			return err
		}, "PUT", "region=LON1", 0, ""},
		{"count 0", func() error { _, err := cl.Update(ctx, clusterID, "web", driver.PoolConfig{Count: &zero}); return err }, "PUT", "region=LON1", 400, "parameter_invalid"},
		{"bad size", func() error {
			return cl.Create(ctx, clusterID, driver.PoolConfig{ID: "x", Count: &two, Size: "huge"})
		}, "POST", "region=LON1", 400, "database_size_not_found"},
		{"missing pool", func() error { _, err := cl.Get(ctx, clusterID, "ghost"); return err }, "GET", "region=LON1", 404, "database_cluster_pool_not_found"},
		{"missing cluster", func() error { _, err := cl.List(ctx, "nope"); return err }, "GET", "region=LON1", 404, "database_kubernetes_cluster_not_found"},
		{"delete", func() error { return cl.Delete(ctx, clusterID, "web") }, "DELETE", "region=LON1", 0, ""},
	} {
		t.Run(s.name, func(t *testing.T) {
			err := s.call()
			var ae *driver.APIError
			switch {
			case s.status == 0 && err != nil:
				t.Fatal(err)
			case s.status != 0 && (!errors.As(err, &ae) || ae.Status != s.status || ae.Code != s.code || ae.Reason == ""):
				t.Fatalf("got %v, want %d %s", err, s.status, s.code)
			}
			r := rec.last()
			if r.Method != s.method || r.URL.RawQuery != s.query || r.Header.Get("Authorization") != "bearer "+apiKey {
				t.Fatalf("sent %s %s (query %q)", r.Method, r.URL.Path, r.URL.RawQuery)
			}
			if (r.Method == "POST" || r.Method == "PUT") && r.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("content type %q", r.Header.Get("Content-Type"))
			}
		})
	}
	// A wrong key is Civo's 401.
	bad := driver.NewClient(srv.URL, "wrong", region, srv.Client())
	_, err := bad.List(ctx, clusterID)
	var ae *driver.APIError
	if !errors.As(err, &ae) || ae.Status != 401 || ae.Code != "authentication_invalid_key" || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("wrong key: %v", err)
	}
}

package driver_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	civosim "github.com/kpool/kpool/cloudsim/civo"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/providertest"
)

// TestQuota: Civo's quota_limit_reached, at a create or a scale up, is
// KindQuota on spec.nodeCount, with the limit Civo names, never a
// validation error: the spec is right, the account is full.
func TestQuota(t *testing.T) {
	withQuota := setup
	withQuota.Emulator = func(o sim.Options) *civosim.Server {
		emu := civosim.New(civosim.Options{Engine: o, Keys: []string{apiKey}, Quota: civosim.Quota{Instances: 4}})
		emu.AddCluster(civosim.Cluster{ID: clusterID, Name: "prod", Region: region, Version: "1.30.5-k3s1"})
		return emu
	}
	e := &emulated{withQuota.Start(t)}
	quota := func(err error, what string) {
		t.Helper()
		var pe *provider.Error
		if !errors.As(err, &pe) || !provider.IsQuota(err) || provider.IsValidation(err) || pe.Field != "spec.nodeCount" ||
			!strings.Contains(pe.Reason, "quota_limit_reached") || !strings.Contains(pe.Reason, "instance_count_limit 4") || pe.Code != "quota_limit_reached" {
			t.Fatalf("%s: %#v", what, err)
		}
	}
	_, err := e.Driver.NodePoolCreate(ctx, e.Cluster, e.spec("big", 5, "g4s.kube.small"))
	quota(err, "a create of 5 nodes of 4")
	s := e.spec("web", 3, "g4s.kube.small")
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	s.Count = 5
	_, err = e.Driver.NodePoolUpdate(ctx, e.Cluster, s)
	quota(err, "a scale up to 5 nodes of 4")
	if st, _ := e.Sim.PoolOf(region, clusterID, "web"); st.Count != 3 || st.Operation != "" {
		t.Fatalf("the refused scale up changed the pool: %+v", st.Pool)
	}
}

// TestNotThePoolsAbsence: only Civo's database_cluster_pool_not_found
// says a pool is gone. A delete in a region Civo does not have (404
// database_region_not_found), or at an endpoint whose path answers
// a page of text, is an error, not a pool already deleted.
func TestNotThePoolsAbsence(t *testing.T) {
	e := newEmulated(t)
	elsewhere := clusterAt(e.Cluster.Spec.Endpoint)
	elsewhere.Spec.Platform.Civo.Region = "ABC1"
	if err := e.Driver.NodePoolDelete(ctx, elsewhere, "web"); !provider.IsNotFound(err) || !strings.Contains(err.Error(), "database_region_not_found") {
		t.Fatalf("a delete in an unknown region: %v", err)
	}
	if _, err := e.Driver.NodePoolCreate(ctx, elsewhere, e.spec("web", 1, "g4s.kube.small")); !provider.IsNotFound(err) {
		t.Fatalf("a create in an unknown region: %v", err)
	}
	// A Civo endpoint behind a proxy whose path is not Civo's API.
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }))
	t.Cleanup(srv.Close)
	d := setup.Driver(t, srv.Client().Transport, providertest.FastRetry(), srv.URL)
	if err := d.NodePoolDelete(ctx, clusterAt(srv.URL), "web"); err == nil || !provider.IsNotFound(err) {
		t.Fatalf("a delete answered by a 404 page: %v", err)
	}
}

// TestRegionOnEveryCall: every request the driver sends carries the
// cluster's region as the query parameter region, writes included, as
// civogo sends it; the emulator's account default (NYC1) is not the
// cluster's region, so a call without it would not find the cluster.
func TestRegionOnEveryCall(t *testing.T) {
	e := newEmulated(t)
	s := e.spec("web", 1, "g4s.kube.small")
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	s.Count = 2
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	if err := e.Driver.NodePoolDelete(ctx, e.Cluster, s.ProviderName); err != nil {
		t.Fatal(err)
	}
	methods := map[string]bool{}
	for _, c := range e.Sim.Calls() {
		methods[c.Method] = true
		if c.Query != "region="+region {
			t.Errorf("%s %s sent the query %q, want region=%s", c.Method, c.Path, c.Query, region)
		}
	}
	if len(methods) != 4 {
		t.Fatalf("the calls covered %v, want GET, POST, PUT and DELETE", methods)
	}
}

// TestCodes: Civo's codes decide the kind whatever the status, where the
// driver knows the code (civogo's errors.go); a page of text falls back on
// the status.
func TestCodes(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		kind   provider.Kind
		field  string
	}{
		{400, `{"code":"quota_limit_reached","reason":"r"}`, provider.KindQuota, "spec.nodeCount"},
		{403, `{"code":"quota_limit_reached","reason":"r"}`, provider.KindQuota, "spec.nodeCount"},
		{400, `{"code":"out_of_capacity","reason":"r"}`, provider.KindCapacity, ""},
		{422, `{"code":"out_of_capacity","reason":"r"}`, provider.KindCapacity, ""},
		{400, `{"code":"database_size_not_found","reason":"r"}`, provider.KindValidation, "spec.platform.civo.size"},
		{422, `{"code":"parameter_label_invalid","reason":"r"}`, provider.KindValidation, "spec.labels"},
		{413, `{"code":"parameter_invalid","reason":"r"}`, provider.KindValidation, "spec"},
		{400, `{"code":"parameter_label_invalid","reason":"r"}`, provider.KindValidation, "spec.labels"},
		{403, `{"code":"authentication_invalid_key","reason":"r"}`, provider.KindPermissionDenied, ""},
		{409, `{"code":"cannot_scale_already_rescaling_cluster","reason":"r"}`, provider.KindBusy, ""},
		{404, `{"code":"database_region_not_found","reason":"r"}`, provider.KindNotFound, ""},
		{404, "<html>Not Found</html>", provider.KindNotFound, ""},
	} {
		srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(tc.body))
		}))
		d := setup.Driver(t, srv.Client().Transport, providertest.FastRetry(), srv.URL)
		_, err := d.NodePoolList(ctx, clusterAt(srv.URL))
		srv.Close()
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != tc.kind || pe.Field != tc.field {
			t.Errorf("%d %s: %#v, want %s on %q", tc.status, tc.body, err, tc.kind, tc.field)
		}
	}
}

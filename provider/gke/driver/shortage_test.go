package driver

import (
	"net/http"
	"slices"
	"testing"

	container "google.golang.org/api/container/v1"
	"google.golang.org/api/googleapi"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

var usCentral1 = &kpool.Cluster{Name: "prod", Spec: kpool.ClusterSpec{Platform: kpool.ClusterPlatform{Type: kpool.PlatformGCP,
	GCP: &kpool.GCPCluster{ProjectID: "p", Location: "us-central1", ClusterName: "c"}}}}

// TestShortageOf reads GKE's recorded stockout answers (their sources in
// shortage.go) and what is no stockout.
func TestShortageOf(t *testing.T) {
	for _, tc := range []struct {
		name, msg string
		conds     []*container.StatusCondition
		code      string
		zones     []string
	}{
		{"statusMessage", "us-central1-c: Deploy error: Not all instances running in IGM after 45.677691201s. Expect 1. Current errors: " +
			"[ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS]: Instance 'gke-kube-test-92aefcaa-7t8l' creation failed: The zone " +
			"'projects/kube-env-181/zones/us-central1-c' does not have enough resources available to fulfill the request.  '(resource type:compute)'. - ; .",
			nil, "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS", []string{"3"}},
		{"operation error, two zones", "Google Compute Engine: Not all instances running in IGM after 35m4s. Expected 5, running 2, transitioning 3. " +
			"Current errors: [GCE_STOCKOUT]: Instance 'a' creation failed: The zone 'projects/p/zones/us-central1-c' does not have enough resources " +
			"available to fulfill the request. '(resource type:compute)'.; [GCE_STOCKOUT]: Instance 'b' creation failed: The zone " +
			"'projects/p/zones/us-central1-a' does not have enough resources available to fulfill the request.", nil, "GCE_STOCKOUT", []string{"1", "3"}},
		{"Compute's words alone", "The zone 'projects/p/zones/us-central1-f' does not have enough resources available to fulfill the request. Try a different zone, or try again later.",
			nil, "ZONE_RESOURCE_POOL_EXHAUSTED", []string{"4"}},
		{"condition alone", "", []*container.StatusCondition{{Code: "GCE_STOCKOUT", Message: "Google Compute Engine resources are temporarily unavailable"}},
			"GCE_STOCKOUT", nil},
		{"a drain", "upgrading node gke-a failed: draining the node timed out", []*container.StatusCondition{{Code: "UNKNOWN"}}, "", nil},
		{"quota", `Insufficient regional quota to satisfy request: resource "CPUS": request requires '96.0' and is short '48.0'.`, nil, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := shortage(usCentral1, tc.msg, tc.conds)
			if tc.code == "" {
				if s != nil {
					t.Fatalf("shortage %+v, want none", s)
				}
				return
			}
			if s == nil || s.Code != tc.code || !slices.Equal(s.Zones, tc.zones) || s.Message == "" {
				t.Fatalf("shortage %+v, want code %s zones %v", s, tc.code, tc.zones)
			}
		})
	}
}

// TestClassifyStockout: an answer refusing a request for want of capacity
// is KindCapacity with its code, never quota or validation, whatever its
// HTTP status.
func TestClassifyStockout(t *testing.T) {
	for _, code := range []int{http.StatusBadRequest, http.StatusForbidden, http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		err := classify(&googleapi.Error{Code: code, Message: "ZONE_RESOURCE_POOL_EXHAUSTED: The zone 'projects/p/zones/us-central1-b' does not have enough resources " +
			"available to fulfill the request. Try a different zone, or try again later.",
			Body: `{"error":{"code":400,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure"}]}}`}, "")
		e, ok := err.(*provider.Error)
		if !ok || e.Kind != provider.KindCapacity || e.Code != "ZONE_RESOURCE_POOL_EXHAUSTED" || !provider.IsCapacity(err) {
			t.Fatalf("%d: %v", code, err)
		}
	}
}

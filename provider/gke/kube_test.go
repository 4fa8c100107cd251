package gke_test

import (
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/gke"
)

// TestKubeHosts: for a cluster on Google Cloud (no spec.endpoint), a GKE
// cluster's API server may be an IP address (clusters.get's endpoint) or
// a DNS-based endpoint under .gke.goog; any other host is refused.
func TestKubeHosts(t *testing.T) {
	c := &kpool.Cluster{Name: "prod", Spec: kpool.ClusterSpec{Platform: kpool.ClusterPlatform{Type: kpool.PlatformGCP,
		GCP: &kpool.GCPCluster{ProjectID: "acme-prod", Location: "us-central1", ClusterName: "gke-prod"}}}}
	for server, ok := range map[string]bool{
		"https://34.118.10.20":                         true,
		"https://[2600:1900:4000::1]":                  true,
		"https://gke-0123abcd.us-central1.gke.goog":    true,
		"http://34.118.10.20":                          false,
		"https://gke-0123abcd.us-central1.gke.goog.io": false,
		"https://api.example.com":                      false,
		"https://container.googleapis.com":             false,
	} {
		err := provider.CheckKubeServer(gke.Profile{}, nil, c, server)
		if (err == nil) != ok || err != nil && !provider.IsRefusedHost(err) {
			t.Errorf("%s: %v, want allowed %v", server, err, ok)
		}
	}
}

package oke

import (
	"slices"
	"testing"

	"github.com/kpool/kpool"
)

// TestNodeZone checks the shortened availability domain names OKE puts on
// nodes, Ashburn's and Phoenix's exceptions included.
func TestNodeZone(t *testing.T) {
	for _, tc := range []struct{ ad, region, logical, want string }{
		{"Uocm:PHX-AD-1", "us-phoenix-1", "1", "PHX-AD-1"},
		{"AD-1", "us-phoenix-1", "1", "PHX-AD-1"},
		{"AD-3", "us-ashburn-1", "3", "US-ASHBURN-AD-3"},
		{"AD-1", "uk-london-1", "1", "UK-LONDON-1-AD-1"},
		{"ad-2", "ap-melbourne-1", "2", "AP-MELBOURNE-1-AD-2"},
		{"EU-FRANKFURT-1-AD-1", "eu-frankfurt-1", "1", "EU-FRANKFURT-1-AD-1"},
	} {
		c := &kpool.Cluster{Name: "c", Spec: kpool.ClusterSpec{Platform: kpool.ClusterPlatform{Type: Type,
			OCI: &kpool.OCICluster{Region: tc.region, Subnets: map[string]string{tc.ad: "ocid1.subnet.oc1..a"}}}}}
		if got, err := (Profile{}).NodeZone(c, tc.logical); err != nil || got != tc.want {
			t.Errorf("NodeZone of %q in %s = %q (%v), want %q", tc.ad, tc.region, got, err, tc.want)
		}
	}
}

// TestComputeEndpoints: a default credential may be sent to each region's
// Compute endpoint too, where ClusterFacts reads ListShapes.
func TestComputeEndpoints(t *testing.T) {
	eps := Profile{}.PublicEndpoints()
	for _, want := range []string{"https://containerengine.us-ashburn-1.oraclecloud.com", "https://iaas.us-ashburn-1.oraclecloud.com", "https://iaas.eu-frankfurt-1.oraclecloud.com"} {
		if !slices.Contains(eps, want) {
			t.Errorf("PublicEndpoints lacks %s", want)
		}
	}
}

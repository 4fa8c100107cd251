package oke

import (
	"errors"
	"slices"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
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

// TestKubeHosts: a cluster on OCI may have its token sent to its API
// server at an IP address (a VCN-native endpoint), at its legacy host name
// or its VCN host name; any other host is refused.
func TestKubeHosts(t *testing.T) {
	c := &kpool.Cluster{Name: "c", Spec: kpool.ClusterSpec{Platform: kpool.ClusterPlatform{Type: Type,
		OCI: &kpool.OCICluster{Region: "us-ashburn-1", ClusterID: "ocid1.cluster.oc1.iad.a"}}}}
	for server, ok := range map[string]bool{
		"https://129.146.12.4:6443": true, "https://10.0.0.7:6443": true,
		"https://cywiqripuyg.us-ashburn-1.clusters.oci.oraclecloud.com:6443": true,
		"https://cluster.k8sapi.vcn1.oraclevcn.com:6443":                     true,
		"https://api.example.com:6443":                                       false, "http://129.146.12.4:6443": false,
	} {
		err := provider.CheckKubeServer(Profile{}, nil, c, server)
		var refused *provider.RefusedHostError
		if ok && err != nil || !ok && !errors.As(err, &refused) {
			t.Errorf("%s: %v (want allowed %v)", server, err, ok)
		}
	}
}

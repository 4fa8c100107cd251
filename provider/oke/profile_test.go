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

// TestSetBlock: an offering set into a member's spec keeps its block's
// labels, domains, image and size (dropping OCPUs and memory for a fixed
// shape); an imported pool's block takes the observed settings.
func TestSetBlock(t *testing.T) {
	tmpl := kpool.OCINodePool{Shape: "VM.Standard.E4.Flex", OCPUs: 2, MemoryInGBs: 32, ImageID: "ocid1.image.oc1..a", Labels: map[string]string{"team": "ml"}}
	for name, tc := range map[string]struct {
		have *kpool.OCINodePool
		b    provider.Block
		want kpool.OCINodePool
	}{
		"flexible fallback": {&tmpl, provider.Block{MachineType: "VM.Standard.E5.Flex", Spot: true, Extra: map[string]string{"imageId": "ocid1.image.oc1..default"}},
			kpool.OCINodePool{Shape: "VM.Standard.E5.Flex", OCPUs: 2, MemoryInGBs: 32, ImageID: "ocid1.image.oc1..a", Preemptible: true, Labels: tmpl.Labels}},
		"fixed fallback": {&tmpl, provider.Block{MachineType: "VM.Standard2.4"},
			kpool.OCINodePool{Shape: "VM.Standard2.4", ImageID: "ocid1.image.oc1..a", Labels: tmpl.Labels}},
		"import": {nil, provider.Block{MachineType: "VM.Standard.A1.Flex", DiskSizeGB: 60, Extra: map[string]string{"imageId": "ocid1.image.oc1..b", "ocpus": "4", "memoryInGBs": "24"}},
			kpool.OCINodePool{Shape: "VM.Standard.A1.Flex", OCPUs: 4, MemoryInGBs: 24, BootVolumeSizeInGBs: 60, ImageID: "ocid1.image.oc1..b"}},
	} {
		s := kpool.NodePoolSpec{Platform: kpool.NodePoolPlatform{Type: Type, OCI: tc.have}}
		Profile{}.SetBlock(&s, tc.b)
		got := *s.Platform.OCI
		if got.Shape != tc.want.Shape || got.OCPUs != tc.want.OCPUs || got.MemoryInGBs != tc.want.MemoryInGBs || got.ImageID != tc.want.ImageID ||
			got.Preemptible != tc.want.Preemptible || got.BootVolumeSizeInGBs != tc.want.BootVolumeSizeInGBs || len(got.Labels) != len(tc.want.Labels) {
			t.Errorf("%s: %+v, want %+v", name, got, tc.want)
		}
	}
	if tmpl.Shape != "VM.Standard.E4.Flex" || tmpl.OCPUs != 2 {
		t.Errorf("the template's block was changed: %+v", tmpl)
	}
}

package demo_test

import (
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim/internal/demo"
)

func TestCluster(t *testing.T) {
	p := kpool.ClusterPlatform{Type: kpool.PlatformCivo, Civo: &kpool.CivoCluster{Region: "LON1", ClusterID: "c1"}}
	c := demo.Cluster("demo", "https://127.0.0.1:1", p)
	if c.Name != "demo" || c.Spec.Endpoint != "https://127.0.0.1:1" || c.Spec.Platform.Civo.ClusterID != "c1" || c.ID != "" {
		t.Fatalf("%+v", c)
	}
}

func TestList(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{{nil, "none"}, {[]string{"a"}, "a"}, {[]string{"a", "b"}, "a, b"}} {
		if got := demo.List(tc.in); got != tc.want {
			t.Errorf("List(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

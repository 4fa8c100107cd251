package civo_test

import (
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/civo"
)

// TestKubeHosts: for a cluster on Civo's public API, the token of Civo's
// kubeconfig may go to the cluster's IP address (https://<ip>:6443) or
// its dns_entry under .k8s.civo.com, never to another name or over plain
// http; a cluster on an emulator reaches its endpoint's origin only.
func TestKubeHosts(t *testing.T) {
	public := &kpool.Cluster{Name: "prod"}
	emulated := &kpool.Cluster{Name: "prod", Spec: kpool.ClusterSpec{Endpoint: "https://127.0.0.1:8443"}}
	for _, tc := range []struct {
		c       *kpool.Cluster
		server  string
		allowed bool
	}{
		{public, "https://212.2.247.178:6443", true},
		{public, "https://ce0e3a6a-a4e7-4af0-8f7c-37edffc8705e.k8s.civo.com:6443", true},
		{public, "https://k8s.civo.com.example.org:6443", false},
		{public, "https://api.example.com", false},
		{public, "http://212.2.247.178:6443", false},
		{emulated, "https://127.0.0.1:8443/k8s/x", true},
		{emulated, "https://212.2.247.178:6443", false},
	} {
		err := provider.CheckKubeServer(civo.Profile{}, nil, tc.c, tc.server)
		if (err == nil) != tc.allowed || err != nil && !provider.IsRefusedHost(err) {
			t.Errorf("%s (endpoint %q): %v, want allowed %v", tc.server, tc.c.Spec.Endpoint, err, tc.allowed)
		}
	}
}

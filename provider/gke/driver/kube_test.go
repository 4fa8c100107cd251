package driver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpool/kpool/kubeapi"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/gke"
)

// TestKubeAccessListsPoolNodes: the access the driver hands out (the
// endpoint and CA of clusters.get, the credential's Google token and its
// expiry) reaches the cluster's emulated Kubernetes API with client-go,
// where the pool's nodes, by GKE's pool label, are the pool's node count;
// a resize is followed.
func TestKubeAccessListsPoolNodes(t *testing.T) {
	expiry := time.Now().Add(time.Hour).Round(time.Second)
	s := setup
	s.Identity = oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "kpool-cloudsim", TokenType: "Bearer", Expiry: expiry})
	e := &emulated{s.Start(t)}
	spec := e.spec("web", "1", "2")
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, spec); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	a, err := e.Driver.KubeAccess(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(a.Server, e.URL+"/") || a.Token != "kpool-cloudsim" || !a.Expires.Equal(expiry) || len(a.CA) == 0 {
		t.Fatalf("access: server %q (emulator %s), expires %v, CA %d bytes", a.Server, e.URL, a.Expires, len(a.CA))
	}
	cs, err := kubeapi.Clientset(ctx, func(ctx context.Context) (*provider.KubeAccess, error) { return e.Driver.KubeAccess(ctx, e.Cluster) })
	if err != nil {
		t.Fatal(err)
	}
	count := func() int {
		t.Helper()
		l, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: gke.Profile{}.PoolLabel() + "=" + spec.ProviderName})
		if err != nil {
			t.Fatal(err)
		}
		return len(l.Items)
	}
	if n := count(); n != spec.Count || n != 4 {
		t.Fatalf("%d nodes of pool %s, want its node count %d", n, spec.ProviderName, spec.Count)
	}
	spec.Count = 2
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, spec); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	if n := count(); n != 2 {
		t.Fatalf("after a resize to 2: %d nodes", n)
	}
}

// TestKubeAccessRefusesForeignServer: when GKE names an endpoint at
// another origin than the cluster's and its credential's, the driver
// refuses it (RefusedHostError) and nothing is sent there.
func TestKubeAccessRefusesForeignServer(t *testing.T) {
	e := newEmulated(t)
	var hits atomic.Int32
	foreign := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer foreign.Close()
	e.Sim.SetKubeEndpoint(project, location, clusterName, strings.TrimPrefix(foreign.URL, "https://")+"/k8s/x")
	a, err := e.Driver.KubeAccess(ctx, e.Cluster)
	if !provider.IsRefusedHost(err) || a != nil {
		t.Fatalf("a foreign endpoint: %v, %v; want a RefusedHostError", a, err)
	}
	if strings.Contains(err.Error(), "kpool-cloudsim") || hits.Load() != 0 {
		t.Fatalf("the refusal %q; %d requests reached the foreign server", err, hits.Load())
	}
}

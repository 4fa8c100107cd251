package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
)

// staticNodes is a NodeSource whose every cluster has the same nodes: two
// of the provider pool "small", one of none. As a KubeProxy it reaches no
// cluster (the proxy's own tests use a real emulated API).
type staticNodes struct{}

func (staticNodes) ClusterNodes(context.Context, *kpool.Cluster) ([]kpool.Node, error) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return []kpool.Node{
		{Name: "small-2", Pool: "small", Zone: "1", NativeZone: "lon1-a", Version: "v1.33.2", Ready: true, CreatedAt: at},
		{Name: "system-1", Version: "v1.33.2", Ready: true, CreatedAt: at},
		{Name: "small-1", Pool: "small", Version: "v1.33.2", Cordoned: true, CreatedAt: at, MissingLabels: []string{"kompox.dev/node-pool"}},
	}, nil
}

func (staticNodes) KubeTransport(context.Context, *kpool.Cluster) (*url.URL, http.RoundTripper, error) {
	return nil, nil, kpool.Unavailable("no cluster here", nil)
}

// nodes: the node lists and the kubeconfig, answered (200) by a kpool that
// reads nodes and, on a server whose service has no node source or proxy,
// NOT_IMPLEMENTED (501).
func (cf *conformance) nodes() {
	t, a, small, gke := cf.t, cf.a, cf.pools["small"], cf.gke
	poolPath := "/api/v1/clusters/" + small.ClusterID + "/nodepools/" + small.ID + "/nodes"
	var l NodeList
	a.expect(200, oaOwner, "GET", poolPath, "").decode(t, &l)
	if len(l.Items) != 2 || l.Items[0].Name != "small-1" || l.Items[1].Name != "small-2" {
		t.Errorf("the pool's nodes: %+v", l.Items)
	}
	a.expect(200, oaAdmin, "GET", "/api/v1/clusters/"+gke.ID+"/nodes", "").decode(t, &l)
	if len(l.Items) != 3 {
		t.Errorf("the cluster's nodes: %+v", l.Items)
	}
	r := a.expect(200, oaOwner, "GET", "/api/v1/clusters/"+gke.ID+"/kubeconfig?context=prod", "")
	if !strings.Contains(string(r.body), "kube-credential") || r.header.Get("Content-Type") != "application/yaml" {
		t.Errorf("kubeconfig: %s %s", r.header.Get("Content-Type"), r.body)
	}

	svc := service.New(cf.broken, cf.svc.Platforms)
	off := httptest.NewServer(checkOpenAPIWith(t, NewServer(svc, cf.access, slog.New(slog.NewTextHandler(io.Discard, nil))), cf.record))
	t.Cleanup(off.Close)
	oa := &oaAPI{t: t, url: off.URL}
	for _, p := range []string{poolPath, "/api/v1/clusters/" + gke.ID + "/nodes", "/api/v1/clusters/" + gke.ID + "/kubeconfig"} {
		var e ErrorBody
		oa.expect(501, oaOwner, "GET", p, "").decode(t, &e)
		if !strings.Contains(e.Error.Message, "not configured") {
			t.Errorf("%s: %+v", p, e.Error)
		}
	}
}

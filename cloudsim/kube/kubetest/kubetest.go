// Package kubetest serves a cloudsim/kube API on a loopback TLS listener
// for tests (the drain, the controllers' watch, kpool's proxy, kubectl):
// its CA set, so that the kubeconfigs it hands out are trusted.
package kubetest

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kpool/kpool/cloudsim/kube"
)

// Server is an emulated Kubernetes API on loopback TLS.
type Server struct {
	*kube.API
	URL string // https://127.0.0.1:PORT
	srv *httptest.Server
}

// Serve starts an API (with HTTP/2, as an API server speaks it), closed
// when the test ends; wrap, when given, sees each request first.
func Serve(t testing.TB, wrap func(http.Handler) http.Handler) *Server {
	t.Helper()
	api := kube.New("/k8s")
	var h http.Handler = api
	if wrap != nil {
		h = wrap(api)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	api.SetCA(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	return &Server{API: api, URL: srv.URL, srv: srv}
}

// Kubeconfig is the kubeconfig of cluster id (given an API if it has none).
func (s *Server) Kubeconfig(id string) string {
	s.AddCluster(id)
	return s.API.Kubeconfig(s.URL, id, id)
}

// Clientset is client-go's clientset of cluster id, from its kubeconfig.
func (s *Server) Clientset(t testing.TB, id string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(s.Kubeconfig(id)))
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// Close stops the listener before the test ends.
func (s *Server) Close() { s.srv.Close() }

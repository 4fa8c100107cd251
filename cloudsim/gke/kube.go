package gke

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"slices"
	"time"

	"github.com/kpool/kpool/cloudsim/kube"
)

// KubePrefix is the path under which the emulator serves its clusters'
// Kubernetes APIs: clusters.get names <the emulator's host:port>/k8s/<id>
// as a cluster's endpoint.
const KubePrefix = "/k8s"

// ServeHTTP serves a cluster's Kubernetes API (under KubePrefix) or GKE's
// API, through the engine.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.kube.Handles(r.URL.Path) {
		s.kube.ServeHTTP(w, r)
		return
	}
	s.Engine.ServeHTTP(w, r)
}

// SetCA sets the PEM of the certificate authority that signed the
// emulator's TLS certificate: clusters.get hands it out as the cluster's
// CA, and the kubeconfigs tell their clients to trust it.
func (s *Server) SetCA(pem []byte) {
	s.kube.SetCA(pem)
	s.Do(func(time.Time) { s.ca = slices.Clone(pem) })
}

// Kube is the clusters' Kubernetes API, for tests and hand-made changes.
func (s *Server) Kube() *kube.API { return s.kube }

// KubeID is the id (GKE's Cluster.id) under which a cluster's Kubernetes
// API is served; "" when there is no such cluster.
func (s *Server) KubeID(project, location, name string) (id string) {
	s.Do(func(time.Time) {
		if c, ok := s.clusters[clusterKey(project, location, name)]; ok {
			id = c.uid
		}
	})
	return id
}

// SetKubeEndpoint makes clusters.get name endpoint (host[:port][/path]) as
// the cluster's instead of the emulator's: a cloud answer that points
// elsewhere, for tests of what a client does with it. "" undoes it.
func (s *Server) SetKubeEndpoint(project, location, name, endpoint string) {
	s.Do(func(time.Time) {
		if c, ok := s.clusters[clusterKey(project, location, name)]; ok {
			c.kubeEndpoint = endpoint
		}
	})
}

// Kubeconfigs returns, by cluster name, the kubeconfig of each cluster's
// Kubernetes API when the emulator is served at endpoint (https://host:port).
func (s *Server) Kubeconfigs(endpoint string) map[string]string {
	type named struct{ uid, name string }
	var cs []named
	s.Do(func(time.Time) {
		for _, c := range s.clusters {
			cs = append(cs, named{c.uid, c.name})
		}
	})
	out := map[string]string{}
	for _, c := range cs {
		out[c.name] = s.kube.Kubeconfig(endpoint, c.uid, c.name)
	}
	return out
}

// tokenOK is the clusters' Kubernetes APIs' check of a Google access
// token: the tokens GKE's API accepts (authenticate).
func (s *Server) tokenOK(tok string) bool {
	if s.token == "" {
		return tok != ""
	}
	return subtle.ConstantTimeCompare([]byte(tok), []byte(s.token)) == 1
}

// clusterUID is a cluster's id, as GKE's: 32 hex digits, here drawn from
// its project, location and name.
func clusterUID(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:16])
}

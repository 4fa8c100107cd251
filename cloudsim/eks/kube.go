package eks

import (
	"encoding/base64"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/kpool/kpool/cloudsim/kube"
)

// KubePrefix is the path under which the emulator serves its clusters'
// Kubernetes APIs: a cluster's DescribeCluster endpoint is
// https://<the emulator>/k8s/<region>.<name>.
const KubePrefix = "/k8s"

// maxOrigins bounds the origins the emulator remembers being reached at.
const maxOrigins = 64

// ServeHTTP serves a cluster's Kubernetes API (under KubePrefix) or EKS's
// and EC2's APIs, through the engine. It remembers the origin it was
// reached at: the STS endpoint a token's presigned URL must name is the
// emulator's own (see checkToken).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.noteOrigin(r.Host)
	if s.kube.Handles(r.URL.Path) {
		s.kube.ServeHTTP(w, r)
		return
	}
	s.Engine.ServeHTTP(w, r)
}

func (s *Server) noteOrigin(host string) {
	s.local.Lock()
	defer s.local.Unlock()
	if !s.origins[host] && len(s.origins) < maxOrigins {
		s.origins[host] = true
	}
}

// reachedAt reports whether the emulator was reached at host.
func (s *Server) reachedAt(host string) bool {
	s.local.Lock()
	defer s.local.Unlock()
	return s.origins[host]
}

// SetCA sets the PEM of the certificate authority that signed the
// emulator's TLS certificate: DescribeCluster's certificateAuthority and
// the kubeconfigs' certificate-authority-data (kpool cloudsim calls it
// with its CA).
func (s *Server) SetCA(pem []byte) {
	s.local.Lock()
	s.ca = slices.Clone(pem)
	s.local.Unlock()
	s.kube.SetCA(pem)
}

func (s *Server) caData() string {
	s.local.Lock()
	defer s.local.Unlock()
	return base64.StdEncoding.EncodeToString(s.ca)
}

// Kube is the clusters' Kubernetes API, for tests and hand-made changes.
func (s *Server) Kube() *kube.API { return s.kube }

// KubeID is the id of a cluster in Kube (its API's last path segment).
func KubeID(region, name string) string { return (&cluster{region: region, name: name}).kubeID() }

// Kubeconfigs returns, by cluster name, a kubeconfig of each cluster's
// emulated Kubernetes API when the emulator is served at endpoint: its
// server, the CA set with SetCA and the cluster's static token (for
// people; kpool reaches it with an STS token, as EKS is reached).
func (s *Server) Kubeconfigs(endpoint string) map[string]string {
	out := map[string]string{}
	for _, c := range s.views() {
		out[c.name] = s.kube.Kubeconfig(endpoint, KubeID(c.region, c.name), c.name)
	}
	return out
}

// refreshKube brings the node groups of every cluster, and so their
// nodes, up to the clock: kube.API's refresh, before each of its
// requests.
func (s *Server) refreshKube(string) {
	s.Do(func(now time.Time) {
		s.heal(now)
		s.syncKube(now)
	})
}

// addKube gives a cluster its Kubernetes API, which takes the cluster's
// EKS tokens besides its static one.
func (s *Server) addKube(region, name string) {
	id := KubeID(region, name)
	s.kube.AddCluster(id)
	s.kube.SetTokenCheck(id, func(token string) bool { return s.checkToken(name, token) })
}

// endpointOf is a cluster's API server as DescribeCluster answers it on
// the emulator at base.
func (s *Server) endpointOf(c *cluster, base string) string {
	return s.kube.ServerURL(strings.TrimSuffix(base, "/"), c.kubeID())
}

package api

import (
	"net/http"
	"strings"

	"sigs.k8s.io/yaml"

	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"

	"github.com/kpool/kpool"
)

// NodeList is the answer of the node lists: a cluster's or a pool's
// Kubernetes nodes, sorted by name.
type NodeList struct {
	Items []kpool.Node `json:"items"`
}

// listPoolNodes answers GET /clusters/{id}/nodepools/{pool}/nodes: the
// pool's nodes as its cluster's Kubernetes API says them.
func (s *Server) listPoolNodes(w http.ResponseWriter, r *http.Request) {
	_, err := query(r)
	pool := ""
	if err == nil {
		pool, err = kpool.RefID("pool", r.PathValue("pool"))
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ns, err := s.svc.PoolNodes(r.Context(), r.PathValue("id"), pool)
	s.send(w, r, http.StatusOK, NodeList{Items: ns}, err)
}

// listClusterNodes answers GET /clusters/{id}/nodes: every node of the
// cluster.
func (s *Server) listClusterNodes(w http.ResponseWriter, r *http.Request) {
	if _, err := query(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	ns, err := s.svc.ClusterNodes(r.Context(), r.PathValue("id"))
	s.send(w, r, http.StatusOK, NodeList{Items: ns}, err)
}

// KubeCredentialCommand is the kpool command a served kubeconfig runs as
// its client-go exec credential plugin: it prints the caller's own kpool
// token as an ExecCredential, so the kubeconfig holds no secret.
var KubeCredentialCommand = []string{"config", "kube-credential"}

// getKubeconfig answers GET /clusters/{id}/kubeconfig: a kubeconfig (YAML)
// whose server is this kpool's read-only proxy to the cluster and whose
// user runs `kpool config kube-credential` (?context= names the kpool
// context it passes on). It carries no credential.
func (s *Server) getKubeconfig(w http.ResponseWriter, r *http.Request) {
	q, err := query(r, "context")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	c, err := s.svc.ProxiedCluster(r.Context(), r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if kc, ok := s.emulated[c.ID]; ok {
		w.Header().Set("Content-Type", "application/yaml")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(kc)
		return
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	base := scheme + "://" + r.Host
	kc := Kubeconfig(base, c, q.Get("context"))
	kc.Clusters[0].Cluster.CertificateAuthorityData = s.kubeCA
	out, err := yaml.Marshal(kc)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/yaml")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

// Kubeconfig is the kubeconfig of kpool's proxy to cluster c, kpool being
// served at base: one cluster, user and context named kpool-NAME, the user
// an exec plugin (kpool itself, with --context kctx when kctx is set).
func Kubeconfig(base string, c *kpool.Cluster, kctx string) *clientcmdv1.Config {
	name := "kpool-" + c.Name
	args := append([]string{}, KubeCredentialCommand...)
	if kctx != "" {
		args = append(args, "--context", kctx)
	}
	return &clientcmdv1.Config{
		Kind: "Config", APIVersion: "v1", CurrentContext: name,
		Clusters: []clientcmdv1.NamedCluster{{Name: name, Cluster: clientcmdv1.Cluster{
			Server: strings.TrimRight(base, "/") + "/api/v1/clusters/" + c.ID + "/kube"}}},
		AuthInfos: []clientcmdv1.NamedAuthInfo{{Name: name, AuthInfo: clientcmdv1.AuthInfo{Exec: &clientcmdv1.ExecConfig{
			APIVersion: "client.authentication.k8s.io/v1", Command: "kpool", Args: args,
			InstallHint:        "kpool's kubeconfigs authenticate with the kpool CLI: install it, and sign in as for any kpool command (KPOOL_TOKEN, or a context with a token)",
			ProvideClusterInfo: true, InteractiveMode: clientcmdv1.NeverExecInteractiveMode,
		}}}},
		Contexts: []clientcmdv1.NamedContext{{Name: name, Context: clientcmdv1.Context{Cluster: name, AuthInfo: name}}},
	}
}

// EmulatedKubeconfigs gives, by cluster id, the kubeconfig served for each
// of kpool dev's emulated clusters: its emulated API's own (the
// emulator's demo token, no secret of the operator's), as the issue asks
// ("for an emulated cluster, its emulated API"), and because kpool dev is
// served over plain http, to which client-go sends no credential.
func (s *Server) EmulatedKubeconfigs(m map[string][]byte) *Server {
	s.emulated = m
	return s
}

// KubeconfigCA sets the CA (PEM) that served kubeconfigs tell kubectl to
// trust for this server, one served over HTTPS with a certificate of a
// private CA. (client-go sends no credential to an http:// server, so a
// kubeconfig is of use only for a kpool served over HTTPS.)
func (s *Server) KubeconfigCA(pem []byte) *Server {
	s.kubeCA = pem
	return s
}

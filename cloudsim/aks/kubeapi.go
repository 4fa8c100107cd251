package aks

import (
	"fmt"
	"hash/fnv"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kpool/kpool/cloudsim/kube"
	"github.com/kpool/kpool/cloudsim/sim"
)

// Each managed cluster serves a Kubernetes API (cloudsim/kube) under
// KubePrefix on the emulator's own listener, whose Nodes follow its agent
// pools (nodes.go), and whose kubeconfig ARM hands out as AKS does:
// POST …/managedClusters/{name}/listClusterUserCredential and
// listClusterAdminCredential answer CredentialResults.

// KubePrefix is the path under which the emulator serves its clusters'
// Kubernetes APIs: https://<the emulator>/k8s/<cluster's kube id>.
const KubePrefix = "/k8s"

// AKSServerApp is the application id of the AKS AAD Server, the audience
// of the Entra ID tokens an AAD-enabled cluster's API server takes
// (Azure/kubelogin, docs: "Using kubelogin with AKS").
const AKSServerApp = "6dae42f8-4368-4678-94ff-3960e28e3630"

// kubeloginClient is the public client kubelogin logs in with (the same
// source).
const kubeloginClient = "80faf920-1908-4b52-b5ef-a8e7bedfc67a"

// ServeHTTP serves a cluster's Kubernetes API (under KubePrefix) or ARM,
// through the engine.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.kube.Handles(r.URL.Path) {
		s.kube.ServeHTTP(w, r)
		return
	}
	s.Engine.ServeHTTP(w, r)
}

// SetCA sets the PEM of the certificate authority that signed the
// emulator's TLS certificate, which the clusters' kubeconfigs tell their
// clients to trust (kpool cloudsim and providertest.Serve call it).
func (s *Server) SetCA(pem []byte) { s.kube.SetCA(pem) }

// Kube is the clusters' Kubernetes API, for tests and hand-made changes.
func (s *Server) Kube() *kube.API { return s.kube }

// KubeID is the id of a managed cluster's Kubernetes API (its path under
// KubePrefix, and its id for Kube's methods).
func (s *Server) KubeID(subscription, resourceGroup, name string) string {
	return kubeID(clusterKey(subscription, resourceGroup, name), name)
}

func (c *cluster) kubeID() string {
	return kubeID(clusterKey(c.subscription, c.resourceGroup, c.name), c.name)
}

// kubeID is the cluster's name (lower case) and a hash of its full key:
// two clusters of one name in other groups get apart.
func kubeID(key, name string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	return fmt.Sprintf("%s-%08x", strings.ToLower(name), h.Sum32())
}

// Kubeconfigs returns, by cluster name, the kubeconfig of each cluster's
// Kubernetes API when the emulator is served at endpoint (its static
// token, as listClusterAdminCredential answers it), for kpool cloudsim to
// write to files.
func (s *Server) Kubeconfigs(endpoint string) map[string]string {
	out := map[string]string{}
	for _, c := range s.sortedClusters() {
		out[c.name] = s.kube.Kubeconfig(endpoint, kubeID(clusterKey(c.subscription, c.resourceGroup, c.name), c.name), c.name)
	}
	return out
}

// SetAAD makes a cluster AKS-managed Microsoft Entra ID enabled (or not):
// its user credential is then a kubeconfig whose user runs kubelogin (an
// exec credential plugin), and its API server takes the access tokens the
// emulator's Entra ID endpoint issued for the AKS server application
// (scope AKSServerApp/.default), until they expire.
func (s *Server) SetAAD(subscription, resourceGroup, name, tenant string, on bool) error {
	var err error
	s.Do(func(time.Time) {
		c, ok := s.clusters[clusterKey(subscription, resourceGroup, name)]
		if !ok {
			err = fmt.Errorf("aks: no cluster %s/%s/%s", subscription, resourceGroup, name)
			return
		}
		c.aadTenant = ""
		if on {
			c.aadTenant = tenant
		}
	})
	check := func(string) bool { return false }
	if on {
		check = s.aadToken
	}
	s.kube.SetTokenCheck(s.KubeID(subscription, resourceGroup, name), check)
	return err
}

// aadToken reports whether token is one the Entra ID endpoint issued for
// the AKS server application and is not expired on the engine's clock.
func (s *Server) aadToken(token string) (ok bool) {
	s.Do(func(now time.Time) {
		exp, issued := s.issued[token]
		ok = issued && now.Before(exp) && slices.ContainsFunc(strings.Fields(s.scopes[token]), func(sc string) bool {
			return strings.EqualFold(sc, AKSServerApp+"/.default")
		})
	})
	return ok
}

// SetKubeconfigRewrite makes the credential actions answer fn(kubeconfig)
// instead of the kubeconfig (nil: as made), for tests of what a client
// does with a misleading answer.
func (s *Server) SetKubeconfigRewrite(fn func(string) string) {
	s.Do(func(time.Time) { s.rewrite = fn })
}

// refreshKube runs before each request to a cluster's Kubernetes API:
// the pools' operations are brought up to the clock, and their nodes with
// them, as AKS's own work goes on whether or not ARM is called.
func (s *Server) refreshKube(string) { s.Do(s.syncNodes) }

// finish is every ARM answer's last step: the request ids, and the nodes
// of the pools the request (or the clock) changed.
func (s *Server) finish(req *sim.Request, rep *sim.Reply) {
	s.requestIDs(req, rep)
	s.syncNodes(req.Now)
}

// credentials answers listClusterUserCredential (admin false) and
// listClusterAdminCredential: CredentialResults with one kubeconfig,
// named clusterUser or clusterAdmin, its value the kubeconfig's bytes
// (base64 in JSON). An AAD-enabled cluster's user kubeconfig runs
// kubelogin, as AKS's does for Kubernetes 1.24 and later
// (learn.microsoft.com/azure/aks/kubelogin-authentication).
func (s *Server) credentials(req *request, admin bool) *sim.Reply {
	c, rep := s.cluster(req, false)
	if rep != nil {
		return rep
	}
	kind := "clusterUser"
	if admin {
		kind = "clusterAdmin"
	}
	cfg := s.kube.Kubeconfig(req.base, c.kubeID(), c.name)
	cfg, err := aksKubeconfig(cfg, kind+"_"+c.resourceGroup+"_"+c.name, c, admin)
	if err != nil {
		return errorReply(http.StatusInternalServerError, "InternalServerError", "The kubeconfig could not be made.")
	}
	if s.rewrite != nil {
		cfg = s.rewrite(cfg)
	}
	name := kind
	return jsonReply(http.StatusOK, armcontainerservice.CredentialResults{
		Kubeconfigs: []*armcontainerservice.CredentialResult{{Name: &name, Value: []byte(cfg)}}})
}

// aksKubeconfig renames the user of a kube.API kubeconfig as AKS names
// it, and for an AAD cluster's user credential replaces its token with
// kubelogin's exec plugin.
func aksKubeconfig(in, user string, c *cluster, admin bool) (string, error) {
	cfg, err := clientcmd.Load([]byte(in))
	if err != nil {
		return "", err
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	auth := cfg.AuthInfos[ctx.AuthInfo]
	delete(cfg.AuthInfos, ctx.AuthInfo)
	if c.aadTenant != "" && !admin {
		auth = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
			APIVersion: "client.authentication.k8s.io/v1beta1", Command: "kubelogin",
			Args: []string{"get-token", "--environment", "AzurePublicCloud", "--server-id", AKSServerApp,
				"--client-id", kubeloginClient, "--tenant-id", c.aadTenant, "--login", "devicecode"},
			InteractiveMode: clientcmdapi.IfAvailableExecInteractiveMode}}
	}
	cfg.AuthInfos[user] = auth
	ctx.AuthInfo = user
	out, err := clientcmd.Write(*cfg)
	return string(out), err
}

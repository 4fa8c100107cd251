package kubeapi_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim/kube"
	"github.com/kpool/kpool/cloudsim/kube/kubetest"
	"github.com/kpool/kpool/kubeapi"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
)

// kubeServer serves an emulated cluster "c1" with two nodes of pool web
// over TLS; it returns the cluster's kubeconfig, its server's origin and
// how many requests reached it.
func kubeServer(t *testing.T, poolLabel string) (string, string, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	api := kubetest.Serve(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			h.ServeHTTP(w, r)
		})
	})
	api.SyncNodes("c1", poolLabel, "web", []kube.NodeSpec{
		{Name: "web-0", Labels: map[string]string{poolLabel: "web"}, Ready: true, KubeletVersion: "v1.30.4"},
		{Name: "web-1", Labels: map[string]string{poolLabel: "web"}, Ready: true, KubeletVersion: "v1.30.4"},
	}, kube.Propagate)
	return api.Kubeconfig("c1"), api.URL, &hits
}

// kubeconfigSet is a credentials file with one kubeconfig entry, "kube",
// of platform t, read from the file path and sent only to endpoint.
func kubeconfigSet(t *testing.T, typ kpool.PlatformType, path, endpoint string) *provider.CredentialSet {
	t.Helper()
	set, err := provider.ParseCredentials([]byte("credentials:\n  kube: {type: "+string(typ)+", kind: kubeconfig, kubeconfigFile: "+path+
		", scopes: ['*'], endpoints: ['"+endpoint+"'], users: ['*']}\n"), catalog.Profiles())
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestKubeconfigReachesTheCluster: a cluster whose spec.kubeconfig names
// the operator's kubeconfig credential is reached through it, on a real
// emulated Kubernetes API over TLS, by a registry whose platform has no
// driver that reaches Kubernetes: its live node list comes back mapped to
// its pool, and the proxy's transport is made from it.
func TestKubeconfigReachesTheCluster(t *testing.T) {
	ctx := context.Background()
	reg := catalog.Registry()
	typ := reg.Types()[0]
	prof := reg.Profile(typ)
	kc, origin, hits := kubeServer(t, prof.PoolLabel())
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	set := kubeconfigSet(t, typ, path, origin)
	cred, _ := set.Credential("kube")
	cs, err := kubeapi.Clientset(ctx, kubeapi.FromKubeconfig(cred))
	if err != nil {
		t.Fatal(err)
	}
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 2 {
		t.Fatalf("nodes through the kubeconfig: %v, %v", list, err)
	}
	cl := &kpool.Cluster{ID: "c1", Name: "c1", Spec: kpool.ClusterSpec{Kubeconfig: "kube", Platform: kpool.ClusterPlatform{Type: typ}}}
	if _, err := (&kubeapi.Clusters{Drivers: reg}).Source(cl); err != nil {
		t.Fatalf("a cluster with spec.kubeconfig has a source even without Kubeconfigs (which says why at use): %v", err)
	}
	live := &kubeapi.Clusters{Drivers: reg, Kubeconfigs: set}
	nodes, err := live.ClusterNodes(ctx, cl)
	if err != nil || len(nodes) != 2 || nodes[0].Pool != "web" || !nodes[0].Ready {
		t.Fatalf("ClusterNodes: %+v, %v", nodes, err)
	}
	u, _, err := live.KubeTransport(ctx, cl)
	if err != nil || !strings.HasPrefix(u.String(), origin) {
		t.Fatalf("KubeTransport: %v, %v", u, err)
	}
	before := hits.Load()
	other := *cl
	other.Spec.Platform.Type = reg.Types()[1]
	if _, err := live.ClusterNodes(ctx, &other); err == nil || !strings.Contains(err.Error(), "spec.kubeconfig") {
		t.Fatalf("another platform's kubeconfig: %v", err)
	}
	if hits.Load() != before {
		t.Fatal("a refused kubeconfig reached the server")
	}
}

// TestKubeconfigRefusals: what kpool does not take from a kubeconfig is
// refused before anything is sent, with an error that names
// spec.kubeconfig and the credential, never the kubeconfig's content.
func TestKubeconfigRefusals(t *testing.T) {
	reg := catalog.Registry()
	typ := reg.Types()[0]
	kc, origin, hits := kubeServer(t, reg.Profile(typ).PoolLabel())
	good, err := clientcmd.Load([]byte(kc))
	if err != nil {
		t.Fatal(err)
	}
	token := good.AuthInfos["c1"].Token
	for _, tc := range []struct {
		name   string
		change func(c *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo, cfg *clientcmdapi.Config)
		want   string
	}{
		{"exec", func(_ *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo, _ *clientcmdapi.Config) {
			u.Exec = &clientcmdapi.ExecConfig{Command: "/bin/sh", APIVersion: "client.authentication.k8s.io/v1"}
		}, "runs a command"},
		{"auth provider", func(_ *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo, _ *clientcmdapi.Config) {
			u.AuthProvider = &clientcmdapi.AuthProviderConfig{Name: "oidc"}
		}, "auth-provider"},
		{"CA by path", func(c *clientcmdapi.Cluster, _ *clientcmdapi.AuthInfo, _ *clientcmdapi.Config) {
			c.CertificateAuthorityData, c.CertificateAuthority = nil, "/etc/ca.pem"
		}, "certificate-authority by path"},
		{"client certificate by path", func(_ *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo, _ *clientcmdapi.Config) {
			u.ClientCertificate, u.ClientKey = "/etc/c.pem", "/etc/k.pem"
		}, "names files by path"},
		{"token file", func(_ *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo, _ *clientcmdapi.Config) {
			u.TokenFile = "/etc/token"
		}, "names files by path"},
		{"user and password", func(_ *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo, _ *clientcmdapi.Config) {
			u.Token, u.Username, u.Password = "", "admin", "hunter2"
		}, "username and password"},
		{"impersonation", func(_ *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo, _ *clientcmdapi.Config) {
			u.Impersonate = "system:admin"
		}, "impersonates"},
		{"no credential", func(_ *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo, _ *clientcmdapi.Config) { u.Token = "" }, "neither a token nor a client certificate"},
		{"certificate without key", func(_ *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo, _ *clientcmdapi.Config) {
			u.ClientCertificateData = []byte("-----BEGIN CERTIFICATE-----")
		}, "without its key"},
		{"insecure", func(c *clientcmdapi.Cluster, _ *clientcmdapi.AuthInfo, _ *clientcmdapi.Config) {
			c.CertificateAuthorityData, c.InsecureSkipTLSVerify = nil, true
		}, "insecure-skip-tls-verify"},
		{"proxy", func(c *clientcmdapi.Cluster, _ *clientcmdapi.AuthInfo, _ *clientcmdapi.Config) {
			c.ProxyURL = "http://127.0.0.1:3128"
		}, "proxy-url"},
		{"http server", func(c *clientcmdapi.Cluster, _ *clientcmdapi.AuthInfo, _ *clientcmdapi.Config) {
			c.Server = strings.Replace(c.Server, "https://", "http://", 1)
		}, "not an https URL"},
		{"server elsewhere", func(c *clientcmdapi.Cluster, _ *clientcmdapi.AuthInfo, _ *clientcmdapi.Config) {
			c.Server = "https://attacker.example/k8s/c1"
		}, "https://attacker.example:443 is not among the entry's endpoints"},
		{"no current context", func(_ *clientcmdapi.Cluster, _ *clientcmdapi.AuthInfo, cfg *clientcmdapi.Config) {
			cfg.CurrentContext = "elsewhere"
		}, "no current-context"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := good.DeepCopy()
			tc.change(cfg.Clusters["c1"], cfg.AuthInfos["c1"], cfg)
			b, err := clientcmd.Write(*cfg)
			if err != nil {
				t.Fatal(err)
			}
			refused(t, typ, origin, b, tc.want, token)
		})
	}
	t.Run("not a kubeconfig", func(t *testing.T) {
		refused(t, typ, origin, []byte("token: "+token+"\n\t: ["), "not one client-go can read", token)
	})
	if n := hits.Load(); n != 0 {
		t.Fatalf("%d requests reached the server from refused kubeconfigs", n)
	}
}

// refused checks that the kubeconfig kc, as credential "kube", is refused
// saying want, naming spec.kubeconfig and without secret in the message.
func refused(t *testing.T, typ kpool.PlatformType, origin string, kc []byte, want, secret string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	cred, _ := kubeconfigSet(t, typ, path, origin).Credential("kube")
	_, err := kubeapi.Clientset(context.Background(), kubeapi.FromKubeconfig(cred))
	switch {
	case err == nil:
		t.Fatalf("taken; want a refusal saying %q", want)
	case !provider.IsValidation(err) || !strings.Contains(err.Error(), "spec.kubeconfig") || !strings.Contains(err.Error(), `credential "kube"`) || !strings.Contains(err.Error(), want):
		t.Fatalf("got %v; want a validation error on spec.kubeconfig saying %q", err, want)
	case strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "hunter2"):
		t.Fatalf("the error holds the kubeconfig's secret: %v", err)
	}
}

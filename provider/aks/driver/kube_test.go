package driver_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	aksim "github.com/kpool/kpool/cloudsim/aks"
	"github.com/kpool/kpool/kubeapi"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/aks"
	"github.com/kpool/kpool/provider/aks/driver"
)

// kube is client-go's typed client of the cluster's API as the driver
// reaches it (kubeapi, over the driver's KubeAccess).
func kube(t *testing.T, d *driver.Driver, e *fixture) kubernetes.Interface {
	t.Helper()
	cs, err := kubeapi.Clientset(context.Background(), func(ctx context.Context) (*provider.KubeAccess, error) {
		return d.KubeAccess(ctx, e.Cluster)
	})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// poolNodes counts the nodes of an agent pool, by AKS's pool label.
func poolNodes(t *testing.T, cs kubernetes.Interface, pool string) int {
	t.Helper()
	list, err := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: "kubernetes.azure.com/agentpool=" + pool})
	if err != nil {
		t.Fatal(err)
	}
	return len(list.Items)
}

// addPool adds a provisioned pool of n nodes behind the driver's back.
func addPool(t *testing.T, e *fixture, name string, n int32) {
	t.Helper()
	err := e.Sim.AddPool(subscription, group, clusterName, armcontainerservice.AgentPool{Name: ptr.To(name),
		Properties: &armcontainerservice.ManagedClusterAgentPoolProfileProperties{VMSize: ptr.To("Standard_D4s_v5"), Count: ptr.To(n)}})
	if err != nil {
		t.Fatal(err)
	}
}

// The driver reaches the emulated cluster's API with the kubeconfig ARM
// hands out (listClusterUserCredential): each pool's nodes, by AKS's pool
// label, are as many as the pool has, and follow a scale the driver
// makes.
func TestKubeAccess(t *testing.T) {
	e := newEmulated(t)
	addPool(t, e.fixture, "web", 3)
	addPool(t, e.fixture, "api", 2)
	acc, err := e.Driver.KubeAccess(context.Background(), e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(acc.Server, e.URL+"/") || len(acc.CA) == 0 || acc.Token == "" || !acc.Expires.IsZero() {
		t.Fatalf("access: server %s, %d bytes of CA, token set %v, expires %v", acc.Server, len(acc.CA), acc.Token != "", acc.Expires)
	}
	cs := kube(t, e.Driver, e.fixture)
	if web, api := poolNodes(t, cs, "web"), poolNodes(t, cs, "api"); web != 3 || api != 2 {
		t.Fatalf("nodes: web %d, api %d; want 3 and 2", web, api)
	}
	s := setup.Spec(e.fixture, "web")
	s.Count = 5
	if _, err := e.Driver.NodePoolUpdate(context.Background(), e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	if web := poolNodes(t, cs, "web"); web != 5 {
		t.Fatalf("after a scale to 5: %d nodes", web)
	}
}

// A kubeconfig whose server is elsewhere than the cluster's endpoint (an
// emulator, or a cloud answer, pointing at another host) is refused before
// anything is sent there, and the error holds no token.
func TestKubeAccessForeignServer(t *testing.T) {
	e := newEmulated(t)
	e.Sim.SetKubeconfigRewrite(func(cfg string) string { return strings.ReplaceAll(cfg, e.URL, "https://kube.example.net:443") })
	_, err := e.Driver.KubeAccess(context.Background(), e.Cluster)
	var rh *provider.RefusedHostError
	if !errors.As(err, &rh) || rh.Host != "https://kube.example.net:443" {
		t.Fatalf("a foreign server: %v, want a RefusedHostError for it", err)
	}
	cfg := e.Sim.Kubeconfigs(e.URL)[clusterName]
	loaded, lerr := clientcmd.Load([]byte(cfg))
	if lerr != nil {
		t.Fatal(lerr)
	}
	for _, u := range loaded.AuthInfos {
		if strings.Contains(err.Error(), u.Token) {
			t.Fatal("the error holds the cluster's token")
		}
	}
}

// Kubeconfigs kpool cannot use as AKS answered them are refused with a
// clear error: a client-certificate-only user, a user without
// credentials, one that skips TLS verification or names local files.
func TestKubeAccessRefusedUsers(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		edit       func(*clientcmdapi.Config)
	}{
		{"client certificate only", "only a client certificate", func(c *clientcmdapi.Config) {
			for _, u := range c.AuthInfos {
				u.Token, u.ClientCertificateData, u.ClientKeyData = "", []byte("-----BEGIN CERTIFICATE-----"), []byte("key")
			}
		}},
		{"no credential", "no bearer token", func(c *clientcmdapi.Config) {
			for _, u := range c.AuthInfos {
				u.Token = ""
			}
		}},
		{"insecure", "skips TLS verification", func(c *clientcmdapi.Config) {
			for _, cl := range c.Clusters {
				cl.InsecureSkipTLSVerify, cl.CertificateAuthorityData = true, nil
			}
		}},
		{"token file", "local files", func(c *clientcmdapi.Config) {
			for _, u := range c.AuthInfos {
				u.Token, u.TokenFile = "", "/etc/passwd"
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEmulated(t)
			e.Sim.SetKubeconfigRewrite(func(in string) string {
				c, err := clientcmd.Load([]byte(in))
				if err != nil {
					t.Error(err)
					return in
				}
				tc.edit(c)
				out, err := clientcmd.Write(*c)
				if err != nil {
					t.Error(err)
				}
				return string(out)
			})
			_, err := e.Driver.KubeAccess(context.Background(), e.Cluster)
			if !provider.IsPermissionDenied(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want permission denied saying %q", err, tc.want)
			}
		})
	}
}

// An AAD-enabled cluster's user kubeconfig runs kubelogin: the driver runs
// nothing, and gets an Entra ID token for the AKS server application with
// the cluster's own credential (a client secret at the emulator's Entra ID
// endpoint), which the cluster's API takes; an ARM token it does not.
func TestKubeAccessEntraID(t *testing.T) {
	e := newEmulated(t)
	const tenant, client = "00000000-0000-0000-0000-0000000000aa", "00000000-0000-0000-0000-0000000000bb"
	e.Sim.AddApp(aksim.App{TenantID: tenant, ClientID: client, Secret: "the-apps-secret"})
	if err := e.Sim.SetAAD(subscription, group, clusterName, tenant, true); err != nil {
		t.Fatal(err)
	}
	addPool(t, e.fixture, "web", 2)
	t.Setenv("KPOOL_TEST_APP_SECRET", "the-apps-secret")
	creds, err := provider.ParseCredentials([]byte(fmt.Sprintf(`
defaults: {azure: app}
credentials:
  app: {type: azure, kind: client-secret, tenantId: %s, clientId: %s, secretEnv: KPOOL_TEST_APP_SECRET,
        authority: %s, scopes: [%s], endpoints: [%s]}
`, tenant, client, e.URL, subscription, e.URL)), []provider.Profile{aks.Profile{}})
	if err != nil {
		t.Fatal(err)
	}
	d := driver.New(provider.DriverOptions{Credentials: creds, Transport: e.Client.Transport})
	acc, err := d.KubeAccess(context.Background(), e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	issued := e.Sim.IssuedTokens() // ARM's, then the AKS server application's
	if len(issued) != 2 || acc.Token != issued[1] || !acc.Expires.After(time.Now().Add(50*time.Minute)) {
		t.Fatalf("%d tokens issued; the access has the second: %v; expires %v", len(issued), slices.Index(issued, acc.Token) == 1, acc.Expires)
	}
	if n := poolNodes(t, kube(t, d, e.fixture), "web"); n != 2 {
		t.Fatalf("%d nodes with the Entra ID token", n)
	}
	armToken, err := kubeapi.Clientset(context.Background(), func(context.Context) (*provider.KubeAccess, error) {
		return &provider.KubeAccess{Server: acc.Server, CA: acc.CA, Token: issued[0]}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := armToken.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Fatalf("an ARM token at the cluster's API: %v, want 401", err)
	}
}

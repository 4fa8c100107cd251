package main

import (
	"context"
	"encoding/pem"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/cloudsim/kube"
	"github.com/kpool/kpool/cloudsim/kube/kubetest"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/service"
	"github.com/kpool/kpool/store/sqlite"
	"github.com/kpool/kpool/store/storetest"
)

// emulatedAPIs is a KubeProxy onto cloudsim/kube's API on loopback TLS,
// reached with each cluster's own kubeconfig (its CA and token).
type emulatedAPIs struct {
	api  *kube.API
	base string
}

func (e emulatedAPIs) KubeTransport(_ context.Context, c *kpool.Cluster) (*url.URL, http.RoundTripper, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(e.api.Kubeconfig(e.base, c.ID, c.Name)))
	if err != nil {
		return nil, nil, err
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, nil, err
	}
	u, err := url.Parse(cfg.Host)
	return u, rt, err
}

// TestKubectlThroughKpool: client-go, from the kubeconfig kpool serves,
// runs kpool's exec credential plugin (this test binary as kpool), gets
// the caller's token from it, and lists a cluster's nodes through kpool's
// proxy; with KPOOL_SERVER naming another kpool, the plugin refuses and
// nothing is listed.
func TestKubectlThroughKpool(t *testing.T) {
	kapi := kubetest.Serve(t, nil)

	st, err := sqlite.Open(context.Background(), t.TempDir()+"/kpool.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	access, err := auth.NewAccess(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	access.WithTokens(st)
	tok, err := auth.CheckToken(auth.TokenRequest{User: testUser, Role: kpool.RoleUser, CreatedBy: "test"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	secret, hash := auth.NewTokenSecret()
	if err := st.CreateToken(context.Background(), tok, hash); err != nil {
		t.Fatal(err)
	}
	svc := service.New(st, catalog.Registry())
	svc.Kube = emulatedAPIs{kapi.API, kapi.URL}
	h := api.NewServer(svc, access, slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	h.KubeconfigCA(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))

	c := storetest.NewCluster(t, svc, testUser, "prod")
	kapi.AddCluster(c.ID)
	for _, name := range []string{"n1", "n2"} {
		if _, err := kapi.SetNode(c.ID, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	client := api.NewClient(srv.URL, "")
	client.Token, client.HTTP = secret, srv.Client()
	y, err := client.Kubeconfig(context.Background(), c.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(y)
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, ai := range cfg.AuthInfos {
		ai.Exec.Command = self // kpool, as this test binary
	}
	rc, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("KPOOL_TEST_MAIN", "1")
	t.Setenv("KPOOL_TOKEN", secret)
	t.Setenv("KPOOL_SERVER", srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := kubernetes.NewForConfigOrDie(rc).CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 2 || l.Items[0].Name != "n1" {
		t.Fatalf("nodes through kpool, with kpool's credential plugin: %v %v", l, err)
	}

	// Another kpool's server in the environment: the plugin gives no token.
	// (client-go keeps a plugin's credential per exec config: a new one
	// runs it again.)
	t.Setenv("KPOOL_SERVER", "https://kpool.example.com")
	for _, ai := range cfg.AuthInfos {
		ai.Exec.Env = append(ai.Exec.Env, clientcmdapi.ExecEnvVar{Name: "KPOOL_TEST_RUN", Value: "2"})
	}
	if rc, err = clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig(); err != nil {
		t.Fatal(err)
	}
	_, err = kubernetes.NewForConfigOrDie(rc).CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err == nil || !strings.Contains(err.Error(), "exec") {
		t.Fatalf("the plugin handed a token to a kubeconfig of another kpool: %v", err)
	}
}

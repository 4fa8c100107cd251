package driver_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kpool/kpool"
	civosim "github.com/kpool/kpool/cloudsim/civo"
	"github.com/kpool/kpool/kubeapi"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/civo/driver"
	"github.com/kpool/kpool/provider/providertest"
)

// TestKubeAccessNodes: driver.KubeAccess → kubeapi.Clientset reaches the
// cluster's Kubernetes API from the kubeconfig Civo returns, and the pool's
// nodes, found by Civo's pool label, follow the pool's count as the driver
// changes it.
func TestKubeAccessNodes(t *testing.T) {
	e := newEmulated(t)
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, e.spec("web", 2, "g4s.kube.small")); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	a, err := e.Driver.KubeAccess(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	if a.Server != e.URL+civosim.KubePrefix+"/"+clusterID || len(a.CA) == 0 || a.Token == "" || a.Token == apiKey || !a.Expires.IsZero() {
		t.Fatalf("access: server %q, CA %d bytes, token set %v (the API key: %v), expires %v", a.Server, len(a.CA), a.Token != "", a.Token == apiKey, a.Expires)
	}
	cs, err := kubeapi.Clientset(ctx, func(ctx context.Context) (*provider.KubeAccess, error) { return e.Driver.KubeAccess(ctx, e.Cluster) })
	if err != nil {
		t.Fatal(err)
	}
	count := func() int {
		t.Helper()
		l, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: civosim.PoolLabel + "=web"})
		if err != nil {
			t.Fatal(err)
		}
		return len(l.Items)
	}
	if n := count(); n != 2 {
		t.Fatalf("%d nodes, want 2", n)
	}
	for _, want := range []int{4, 1} {
		s := e.spec("web", want, "g4s.kube.small")
		if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(time.Hour)
		if n := count(); n != want {
			t.Fatalf("scaled to %d: %d nodes", want, n)
		}
	}
}

// rewritten serves the Civo emulator with the kubeconfig of its cluster
// answers (GET, and the PUT that installs an application)
// changed by edit (a cloud answer naming another server, or another
// user), and returns a driver and the cluster there.
func rewritten(t *testing.T, edit func(*clientcmdapi.Config)) (*emulated, *driver.Driver, *kpool.Cluster) {
	t.Helper()
	e := newEmulated(t)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		e.Sim.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		var c map[string]any
		if strings.HasSuffix(r.URL.Path, "/clusters/"+clusterID) && json.Unmarshal(body, &c) == nil && c["kubeconfig"] != nil {
			cfg, err := clientcmd.Load([]byte(c["kubeconfig"].(string)))
			if err != nil {
				t.Error(err)
			}
			edit(cfg)
			out, _ := clientcmd.Write(*cfg)
			c["kubeconfig"] = string(out)
			body, _ = json.Marshal(c)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
	srv := providertest.Serve(t, h)
	return e, setup.Driver(t, srv.Client().Transport, providertest.FastRetry(), srv.URL), clusterAt(srv.URL)
}

// TestKubeAccessRefused: a kubeconfig whose server is another host than
// the cluster's endpoint is refused (a RefusedHostError) before anything
// is sent there, by KubeAccess and by the autoscaler's client; one whose
// user runs a credential plugin is refused; neither error holds the
// kubeconfig's token. One with a client certificate is not implemented.
func TestKubeAccessRefused(t *testing.T) {
	foreign := providertest.Listen(t, providertest.NewCA(t), providertest.Echo)
	var token string
	e, d, c := rewritten(t, func(cfg *clientcmdapi.Config) {
		for _, cl := range cfg.Clusters {
			cl.Server = foreign.URL + "/k8s"
		}
		for _, u := range cfg.AuthInfos {
			token = u.Token
		}
	})
	a, err := d.KubeAccess(ctx, c)
	if !provider.IsRefusedHost(err) || a != nil {
		t.Fatalf("a foreign server: %v, %v; want a RefusedHostError", a, err)
	}
	if token == "" || strings.Contains(err.Error(), token) {
		t.Fatal("no token, or the error holds the kubeconfig's token")
	}
	// The autoscaler's client reads the same kubeconfig: refused too.
	_, err = d.NodePoolCreate(ctx, c, e.scaled("web", 2, 6))
	if !provider.IsValidation(err) || strings.Contains(err.Error(), token) {
		t.Fatalf("an autoscaled pool with a foreign kubeconfig: %v", err)
	}
	if n := len(foreign.Requests()); n != 0 {
		t.Fatalf("%d requests reached the foreign server", n)
	}

	_, d, c = rewritten(t, func(cfg *clientcmdapi.Config) {
		for _, u := range cfg.AuthInfos {
			token, u.Token = u.Token, ""
			u.Exec = &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1", Command: "/bin/sh", Args: []string{"-c", "true"},
				InteractiveMode: clientcmdapi.NeverExecInteractiveMode}
		}
	})
	a, err = d.KubeAccess(ctx, c)
	var pe *provider.Error
	if a != nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), "credential plugin") || strings.Contains(err.Error(), token) {
		t.Fatalf("an exec user: %v, %v", a, err)
	}

	// k3s's own kubeconfigs carry a client certificate and key: the
	// access carries them, and no token.
	_, d, c = rewritten(t, func(cfg *clientcmdapi.Config) {
		for _, u := range cfg.AuthInfos {
			u.Token, u.ClientCertificateData, u.ClientKeyData = "", []byte("cert"), []byte("key")
		}
	})
	a, err = d.KubeAccess(ctx, c)
	if err != nil || a.Token != "" || string(a.ClientCert) != "cert" || string(a.ClientKey) != "key" {
		t.Fatalf("a client certificate user: %v", err)
	}
}

package driver_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpool/kpool/kubeapi"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/oke"
	"github.com/kpool/kpool/provider/providertest"
)

// TestKubeAccess: the driver's access (CreateKubeconfig's server and CA,
// a token signed as generate-token signs it) gives client-go the
// cluster's nodes: those of a pool the driver made, by the profile's pool
// label (which the driver put in the pool's initialNodeLabels), as many as
// the pool's size.
func TestKubeAccess(t *testing.T) {
	e := newEmulated(t)
	s := e.spec("web")
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	before := time.Now()
	a, err := e.Driver.KubeAccess(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(a.Server, e.URL+"/") || len(a.CA) == 0 || a.Token == "" ||
		a.Expires.Before(before.Add(4*time.Minute)) || a.Expires.After(time.Now().Add(4*time.Minute)) {
		t.Fatalf("access: server %s, CA %d bytes, token set %v, expires %s", a.Server, len(a.CA), a.Token != "", a.Expires)
	}
	kc, err := kubeapi.Clientset(ctx, func(ctx context.Context) (*provider.KubeAccess, error) { return e.Driver.KubeAccess(ctx, e.Cluster) })
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: (oke.Profile{}).PoolLabel() + "=" + s.ProviderName})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := e.Sim.PoolOf(clusterID, s.ProviderName)
	if len(nodes.Items) != *st.NodeConfigDetails.Size || len(nodes.Items) != 2 {
		t.Fatalf("%d nodes of %s in Kubernetes, the pool has size %d", len(nodes.Items), s.ProviderName, *st.NodeConfigDetails.Size)
	}
}

// TestKubeAccessForeignServer: a kubeconfig that names a server the
// credential may not reach (here one rewritten on the way) is refused
// with a RefusedHostError, and nothing is sent there.
func TestKubeAccessForeignServer(t *testing.T) {
	e := newEmulated(t)
	foreign := providertest.Listen(t, providertest.NewCA(t), providertest.Echo)
	rewrite := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/kubeconfig/content") {
			e.Sim.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		e.Sim.ServeHTTP(rec, r)
		body := bytes.ReplaceAll(rec.Body.Bytes(), []byte("https://"+r.Host), []byte(foreign.URL))
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = io.Copy(w, bytes.NewReader(body))
	})
	srv := providertest.Serve(t, rewrite)
	d := setup.Driver(t, srv.Client().Transport, providertest.FastRetry(), srv.URL)
	_, err := d.KubeAccess(ctx, clusterAt(srv.URL))
	var refused *provider.RefusedHostError
	if !errors.As(err, &refused) || !strings.Contains(refused.Host, strings.TrimPrefix(foreign.URL, "https://")) {
		t.Fatalf("got %v, want a RefusedHostError naming %s", err, foreign.URL)
	}
	if n := len(foreign.Requests()); n != 0 {
		t.Fatalf("%d requests reached the foreign server", n)
	}
}

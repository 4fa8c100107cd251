package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim/kube"
	"github.com/kpool/kpool/cloudsim/kube/kubetest"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/service"
	"github.com/kpool/kpool/store/storetest"
	"github.com/kpool/kpool/store/testdb"
)

// TestWatchThroughKubeconfig: the controllers watch the nodes of a
// cluster whose spec.kubeconfig names the operator's kubeconfig credential
// through it, with client-go (Config.KubeClient left to its default) on an
// emulated Kubernetes API over TLS, although its driver does not reach
// Kubernetes APIs at all; the watch follows a node added at the API.
func TestWatchThroughKubeconfig(t *testing.T) {
	drv := fake.New(fake.Options{Seed: 1})
	if _, ok := provider.As[provider.KubeReacher](provider.Driver(drv)); ok {
		t.Fatal("the fake driver reaches Kubernetes APIs: the test would not prove the kubeconfig's path")
	}
	pt := drv.Capabilities().Provider
	reg := catalog.Registry()
	reg.Add(drv)
	label := reg.Profile(pt).PoolLabel()

	api := kubetest.Serve(t, nil)
	nodes := []kube.NodeSpec{{Name: "web-0", Labels: map[string]string{label: "web"}, Ready: true, KubeletVersion: "v1.30.4"}}
	api.SyncNodes("c1", label, "web", nodes, kube.Propagate)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(api.Kubeconfig("c1")), 0o600); err != nil {
		t.Fatal(err)
	}
	creds, err := provider.ParseCredentials([]byte(fmt.Sprintf("credentials:\n  kube: {type: %s, kind: kubeconfig, kubeconfigFile: %s, scopes: ['*'], endpoints: ['%s'], users: ['*']}\n",
		pt, path, api.URL)), catalog.Profiles())
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(testdb.SQLite(t), reg)
	svc.Credentials = creds
	spec := strings.Replace(platforms[pt].cluster, `{"platform":`, `{"kubeconfig":"kube","platform":`, 1)
	cl, err := svc.CreateCluster(storetest.Ctx(owner), service.ClusterCreate{Name: "prod", Spec: json.RawMessage(spec)})
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctl := reconcile.New(reconcile.Config{Service: svc, Drivers: reg, Kubeconfigs: creds, Holder: "a", Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ctl.Run(ctx)
	}()
	defer func() { cancel(); <-done }()

	src := reconcile.NodeSource{Controller: ctl}
	seen := func(want int) {
		t.Helper()
		poll(t, 30*time.Second, func() (bool, string) {
			got, err := src.ClusterNodes(ctx, cl)
			return err == nil && len(got) == want && got[0].Pool == "web", fmt.Sprintf("nodes from the watch: %+v, %v", got, err)
		})
	}
	seen(1)
	poll(t, 30*time.Second, func() (bool, string) {
		c, err := svc.Cluster(storetest.Ctx(owner), cl.ID)
		if err != nil {
			return false, err.Error()
		}
		w := c.Status.Condition(kpool.ConditionNodesWatched)
		return w != nil && w.Status == kpool.ConditionTrue, fmt.Sprintf("NodesWatched: %+v", w)
	})
	nodes = append(nodes, kube.NodeSpec{Name: "web-1", Labels: map[string]string{label: "web"}, Ready: true, KubeletVersion: "v1.30.4"})
	api.SyncNodes("c1", label, "web", nodes, kube.Propagate)
	seen(2)
}

// poll checks cond every 20ms until it holds, failing after budget on the
// wall clock (the watch runs on real TLS, outside a synctest bubble).
func poll(t *testing.T, budget time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.NewTimer(budget)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, why := cond()
		if ok {
			return
		}
		select {
		case <-deadline.C:
			t.Fatalf("not so after %v: %s", budget, why)
		case <-tick.C:
		}
	}
}

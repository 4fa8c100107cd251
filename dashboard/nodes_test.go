package dashboard

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
)

// poolNodes is a NodeSource with nodes of one provider pool and of another.
type poolNodes struct{ pool, other string }

func (s poolNodes) ClusterNodes(context.Context, *kpool.Cluster) ([]kpool.Node, error) {
	at := time.Now().Add(-90 * time.Minute)
	return []kpool.Node{
		{Name: "aks-" + s.pool + "-vmss000001", Pool: s.pool, Zone: "2", NativeZone: "westeurope-2", Version: "v1.33.2", Cordoned: true, CreatedAt: at,
			MissingLabels: []string{"kompox.dev/node-zone"}},
		{Name: "aks-" + s.pool + "-vmss000000", Pool: s.pool, Zone: "1", NativeZone: "westeurope-1", Version: "v1.33.2", Ready: true, CreatedAt: at},
		{Name: "aks-" + s.other + "-vmss000000", Pool: s.other, Zone: "1", Version: "v1.32.7", Ready: true, CreatedAt: at},
	}, nil
}

// TestNodesOnPages: the pool page lists the pool's Kubernetes nodes
// (Ready, zone, version, cordoned, age, missing labels), the cluster page
// every node with its pool; a kpool that reads no nodes says so on the
// page, which still renders.
func TestNodesOnPages(t *testing.T) {
	h, ctx := fleetOf(t, 1, 2)
	pools, err := h.o.Service.NodePools(ctx, service.ListOptions{Limit: 2})
	if err != nil || len(pools.Items) != 2 {
		t.Fatal(pools, err)
	}
	p, q := pools.Items[0], pools.Items[1]
	page := func(handler http.HandlerFunc, id string) string {
		r := httptest.NewRequest(http.MethodGet, "/x/"+id, nil).WithContext(ctx)
		r.SetPathValue("id", id)
		w := httptest.NewRecorder()
		handler(w, r)
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", id, w.Code, w.Body)
		}
		return w.Body.String()
	}
	if body := page(h.pool, p.ID); !strings.Contains(body, "Kubernetes nodes") || !strings.Contains(body, "Node reading is not configured") {
		t.Error("the pool page of a kpool that reads no nodes does not say so")
	}
	h.o.Service.Nodes = poolNodes{pool: p.ProviderName, other: q.ProviderName}
	body := page(h.pool, p.ID)
	for _, want := range []string{"<code>aks-" + p.ProviderName + "-vmss000000</code>", "⚠ NotReady", "cordoned", "⚠ kompox.dev/node-zone",
		"1 <small>(westeurope-1)</small>", "v1.33.2", "<td>90m</td>"} {
		if !strings.Contains(body, want) {
			t.Errorf("pool page: no %q", want)
		}
	}
	if strings.Contains(body, "aks-"+q.ProviderName) {
		t.Error("the pool page lists another pool's node")
	}
	if strings.Index(body, "vmss000000") > strings.Index(body, "vmss000001") {
		t.Error("the pool page's nodes are not sorted by name")
	}
	body = page(h.cluster, p.ClusterID)
	if !strings.Contains(body, "aks-"+q.ProviderName+"-vmss000000") || !strings.Contains(body, "v1.32.7") {
		t.Error("the cluster page does not list every node")
	}
}

// TestKubeCounts: status.nodes beside the cloud's count, on the pool row.
func TestKubeCounts(t *testing.T) {
	h, ctx := fleetOf(t, 1, 1)
	pools, _ := h.o.Service.NodePools(ctx, service.ListOptions{Limit: 1})
	c, _ := h.o.Service.Cluster(ctx, pools.Items[0].ClusterID)
	p := pools.Items[0]
	if r := h.row(ctx, c, p, true); r.Kube != "" || r.Ready != "3/3" {
		t.Errorf("a pool whose nodes no controller counted: %q %q", r.Kube, r.Ready)
	}
	p.Status.Nodes = &kpool.NodeCounts{Total: 3, Ready: 2, Cordoned: 1, Unlabelled: 2}
	if r := h.row(ctx, c, p, true); r.Kube != "2/3 Ready in Kubernetes (1 cordoned, 2 missing placement labels)" {
		t.Errorf("row: %q", r.Kube)
	}
}

package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
	aksim "github.com/kpool/kpool/cloudsim/aks"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/service"
	"github.com/kpool/kpool/store/testdb"
)

// Installation ids of the two kpools that share one AKS emulator.
const (
	prodInstallation    = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	stagingInstallation = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// writesTo counts the emulator's answered writes (PUT, DELETE) to an
// agent pool since the call log had skip entries.
func writesTo(sim *aksim.Server, pool string, skip int) int {
	n := 0
	for _, c := range sim.Calls()[skip:] {
		if (c.Method == http.MethodPut || c.Method == http.MethodDelete) && strings.HasSuffix(strings.ToLower(c.Path), "/agentpools/"+pool) {
			n++
		}
	}
	return n
}

// TestE2ETwoInstallations: two kpool installations (two databases, two
// controllers with their own installation ids) share one AKS account. The
// pool web that production creates carries production's mark; staging,
// which registers the same cluster, imports pools and has a pool named
// web too, neither imports, changes nor deletes it: its web is Failed
// with ForeignPool, its cluster lists production's web as foreign, and
// deleting its web removes only its record. Production's pool goes on
// being managed by production.
func TestE2ETwoInstallations(t *testing.T) {
	e2e(t)
	sim := aksim.New(aksim.Options{Engine: simOptions, Token: "kpool-cloudsim", PageSize: 50})
	sim.AddCluster(sub, group, aksCl, "westeurope", "1.30.4")
	prod := newAKSWorld(t, testdb.SQLite(t), sim)
	prod.installation = prodInstallation
	staging := newAKSWorld(t, testdb.SQLite(t), sim)
	staging.installation = stagingInstallation

	stopProd := prod.start("prod")
	web := prod.createPool("web", 2, "1")
	prod.waitFor(time.Minute, prod.converged(nil))
	stopProd()
	st, _ := sim.Pool(sub, group, aksCl, "web")
	if tags := st.Properties.Tags; tags == nil || deref(tags[provider.TagKeys.Installation]) != prodInstallation || deref(tags[provider.TagKeys.Pool]) != web.ID {
		t.Fatalf("production's pool carries %v, want its mark", st.Properties.Tags)
	}

	// Staging, on the same cloud cluster, with a pool of the same name.
	if _, err := staging.svc.UpdateCluster(staging.ctx(), staging.cluster.ID, service.Update{Patch: true, Spec: json.RawMessage(`{"importPools":true}`)}); err != nil {
		t.Fatal(err)
	}
	before := len(sim.Calls())
	stopStaging := staging.start("staging")
	defer stopStaging()
	theirs := staging.createPool("web", 5, "1")
	staging.waitFor(time.Minute, func() (bool, string) {
		p, _ := staging.svc.NodePool(staging.ctx(), theirs.ID)
		c, _ := staging.svc.Cluster(staging.ctx(), staging.cluster.ID)
		foreign := len(c.Status.Foreign) == 1 && c.Status.Foreign[0].Installation == prodInstallation && c.Status.Foreign[0].Pool == web.ID
		return p.Status.Phase == kpool.PhaseFailed && strings.Contains(p.Status.Message, prodInstallation) && foreign,
			fmt.Sprintf("staging's web is %s (%s); foreign %+v", p.Status.Phase, p.Status.Message, c.Status.Foreign)
	})
	staging.patch(theirs.ID, `{"nodeCount":4,"labels":{"team":"staging"}}`)
	staging.delete(theirs.ID)
	staging.waitFor(time.Minute, func() (bool, string) {
		_, err := staging.svc.NodePool(staging.ctx(), theirs.ID)
		return kpool.IsNotFound(err), "staging's web is still there"
	})
	if n := writesTo(sim, "web", before); n != 0 {
		t.Fatalf("staging wrote %d times to production's pool", n)
	}
	pools, _ := staging.svc.NodePools(staging.ctx(), service.ListOptions{ClusterID: staging.cluster.ID})
	if pools.Total != 0 {
		t.Fatalf("staging imported production's pool: %+v", pools.Items)
	}

	// Production still manages its pool.
	stopProd = prod.start("prod")
	defer stopProd()
	prod.patch(web.ID, `{"nodeCount":3}`)
	prod.waitFor(time.Minute, prod.converged(nil))
	st, _ = sim.Pool(sub, group, aksCl, "web")
	if *st.Properties.Count != 3 || deref(st.Properties.Tags[provider.TagKeys.Installation]) != prodInstallation {
		t.Fatalf("production's pool after its own change: count %d, tags %v", *st.Properties.Count, st.Properties.Tags)
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// TestE2EImport: a cluster that imports pools gets the agent pools kpool
// did not know, in observe mode.
func TestE2EImport(t *testing.T) {
	e2e(t)
	sim := aksim.New(aksim.Options{Engine: simOptions, Token: "kpool-cloudsim"})
	sim.AddCluster(sub, group, aksCl, "westeurope", "1.30.4")
	w := newAKSWorld(t, testdb.SQLite(t), sim)
	ctx := context.Background()
	// A pool made outside kpool.
	if _, err := w.drivers.Driver(kpool.PlatformAzure).NodePoolCreate(ctx, w.cluster, provider.PoolSpec{ProviderName: "legacy", MachineType: "Standard_D2s_v5", Count: 3, Mode: "user",
		Labels: map[string]string{"team": "old"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.UpdateCluster(w.ctx(), w.cluster.ID, service.Update{Spec: json.RawMessage(`{"importPools":true}`)}); err != nil {
		t.Fatal(err)
	}
	stop := w.start("a")
	defer stop()
	w.waitFor(time.Minute, func() (bool, string) {
		pools, _, _ := w.svc.Store.NodePools(ctx, kpool.NodePoolFilter{ClusterID: w.cluster.ID, Page: kpool.Page{Limit: 10}})
		for _, p := range pools {
			if p.ProviderName == "legacy" {
				ok := p.Spec.Observed() && p.Spec.Count() == 3 && p.Spec.Labels["team"] == "old" && p.Spec.Platform.Azure.VMSize == "Standard_D2s_v5"
				return ok && p.Status.Phase == kpool.PhaseReady, fmt.Sprintf("imported as %+v, %s", p.Spec, p.Status.Phase)
			}
		}
		return false, "legacy not imported"
	})
}

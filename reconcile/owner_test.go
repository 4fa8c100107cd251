package reconcile_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/audit"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/service"
	"github.com/kpool/kpool/store/storetest"
	"github.com/kpool/kpool/store/testdb"
)

// Installation ids of the tests: this kpool's, and another's sharing its
// cloud account.
const (
	ours   = "0123456789abcdef0123456789abcdef"
	theirs = "fedcba9876543210fedcba9876543210"
	// webID is the id the tests give their pool web, so that a mark can
	// name it before it exists.
	webID = "01950000-0000-7000-8000-000000000001"
)

// installed runs the controllers as installation ours.
func installed(c *reconcile.Config) { c.Installation = ours }

// seed makes a pool at the provider behind kpool's back, as another kpool
// (or a person) would, marked o, and lets its create finish.
func (w *world) seed(providerName string, o provider.Owner) {
	w.t.Helper()
	s := provider.PoolSpec{ProviderName: providerName, Mode: kpool.ModeUser, MachineType: "Standard_D4s_v5", Count: 1,
		Labels: map[string]string{provider.LabelPool: providerName}, Owner: o}
	if _, err := w.drv.NodePoolCreate(context.Background(), w.cluster, s); err != nil {
		w.t.Fatal(err)
	}
	w.advance(2 * time.Minute)
}

// createWeb creates the kpool pool web (provider name web), with webID.
func (w *world) createWeb() *kpool.NodePool {
	w.t.Helper()
	p, err := w.svc.CreateNodePool(w.ctx(), service.NodePoolCreate{ID: webID, Name: "web", ClusterID: w.cluster.ID,
		Spec: []byte(`{"platform":` + w.block + `,"nodeCount":1}`)})
	if err != nil {
		w.t.Fatal(err)
	}
	return p
}

// foreignOf returns the cluster's foreign pools, as its status lists them.
func (w *world) foreignOf() []kpool.ForeignPool {
	w.t.Helper()
	c, err := w.svc.Cluster(w.ctx(), w.cluster.ID)
	if err != nil {
		w.t.Fatal(err)
	}
	return c.Status.Foreign
}

// TestForeignPoolIsNeverTouched: a provider pool of the same provider name
// that another owner marked (another installation, or this installation's
// other pool: a second registration of the cluster) is neither adopted,
// updated nor deleted. The kpool pool is Failed with ForeignPool, naming
// the owner; the cluster lists the pool as foreign; deleting the kpool
// pool removes its record and leaves the provider's pool. A pool marked as
// this very pool is its own, and is adopted.
func TestForeignPoolIsNeverTouched(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		mark    provider.Owner
		foreign bool
	}{
		{"another installation", provider.Owner{Installation: theirs, Pool: webID}, true},
		{"this installation, another pool", provider.Owner{Installation: ours, Pool: "01950000-0000-7000-8000-0000000000ff"}, true},
		{"this installation, no pool named", provider.Owner{Installation: ours}, true},
		{"this very pool", provider.Owner{Installation: ours, Pool: webID}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
				w.seed("web", tc.mark)
				stop := w.start("a", installed, quick)
				defer stop()
				p := w.createWeb()
				if !tc.foreign {
					w.until(5*time.Minute, w.ready(p.ID))
					if n := w.calls(fake.Update, "web") + w.calls(fake.Delete, "web"); n != 0 {
						t.Fatalf("%d writes to a pool that matched and carried its own mark", n)
					}
					return
				}
				w.until(time.Minute, func() (bool, string) {
					got := w.pool(p.ID)
					return got.Status.Phase == kpool.PhaseFailed, string(got.Status.Phase) + ": " + got.Status.Message
				})
				rp := w.report(p.ID)
				if got := condition(rp, kpool.ConditionReady); got != "False ForeignPool" {
					t.Fatalf("Ready=%q, want False ForeignPool", got)
				}
				if got := condition(rp, kpool.ConditionProgressing); got != "False ForeignPool" {
					t.Fatalf("Progressing=%q, want False ForeignPool", got)
				}
				if msg := w.pool(p.ID).Status.Message; !strings.Contains(msg, tc.mark.Installation) || !strings.Contains(msg, "another kpool") {
					t.Fatalf("the message does not name the owner: %q", msg)
				}
				if f := w.foreignOf(); len(f) != 1 || f[0].ProviderName != "web" || f[0].Installation != tc.mark.Installation || f[0].Pool != tc.mark.Pool || f[0].Spec == nil {
					t.Fatalf("the cluster's foreign pools: %+v", f)
				}
				// Ten passes later nothing was written, whatever the spec asks.
				w.patch(p.ID, `{"nodeCount":3,"labels":{"team":"web"}}`)
				w.advance(100 * time.Second)
				w.delete(p.ID)
				w.until(time.Minute, func() (bool, string) { return w.pool(p.ID) == nil, "the kpool pool is still there" })
				if n := w.calls(fake.Create, "web") - 1 + w.calls(fake.Update, "web") + w.calls(fake.Delete, "web"); n != 0 {
					t.Fatalf("%d calls wrote to the foreign pool: %+v", n, w.drv.Calls())
				}
				fp, ok := w.drv.Pool(w.cluster, "web")
				if !ok || fp.Owner != tc.mark || fp.Count != 1 {
					t.Fatalf("the foreign pool after the kpool pool's delete: %+v (there: %v)", fp, ok)
				}
				evs, err := w.svc.Events(w.ctx(), audit.Query{NodePoolID: p.ID, Type: kpool.EventNodePoolDeleted})
				if err != nil || len(evs.Items) == 0 || !strings.Contains(evs.Items[0].Detail, "Deleted=True (ForeignPool)") {
					t.Fatalf("the last report does not say it was deleted as foreign: %+v %v", evs, err)
				}
			})
		})
	}
}

// TestLegacyPoolIsMarked: an unmarked pool of the provider name (from a
// kpool before marks) is adopted, and its next update writes this pool's
// mark, once; a controller without an installation id writes none.
func TestLegacyPoolIsMarked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  func(*reconcile.Config)
		want provider.Owner
	}{
		{"installed", installed, provider.Owner{Installation: ours, Pool: webID}},
		{"no installation id", func(*reconcile.Config) {}, provider.Owner{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
				w.seed("web", provider.Owner{})
				stop := w.start("a", tc.cfg, quick)
				defer stop()
				p := w.createWeb()
				w.until(5*time.Minute, func() (bool, string) {
					fp, _ := w.drv.Pool(w.cluster, "web")
					ok, why := w.ready(p.ID)()
					return ok && fp.Owner == tc.want, why + "; mark " + fp.Owner.String()
				})
				updates := 0
				if !tc.want.IsZero() {
					updates = 1
				}
				w.advance(time.Minute)
				if n := w.calls(fake.Update, "web"); n != updates || w.calls(fake.Create, "web") != 1 {
					t.Fatalf("%d updates and %d creates, want %d and the seed's", n, w.calls(fake.Create, "web"), updates)
				}
				if f := w.foreignOf(); len(f) != 0 {
					t.Fatalf("an adopted pool is listed foreign: %+v", f)
				}
			})
		})
	}
}

// hiding is the fake driver whose lists leave out a provider name for a
// while: the pool appears between a list and the create it prompts.
type hiding struct {
	*fake.Driver
	name  string
	lists int // how many lists still leave it out
}

func (h *hiding) NodePoolList(ctx context.Context, c *kpool.Cluster) ([]provider.Pool, error) {
	pools, err := h.Driver.NodePoolList(ctx, c)
	if h.lists > 0 {
		h.lists--
		for i := range pools {
			if pools[i].ProviderName == h.name {
				return append(pools[:i], pools[i+1:]...), err
			}
		}
	}
	return pools, err
}

// TestCreateNeverAdoptsForeign: a create that finds the provider name
// taken by another owner's pool (which the list did not show yet) adopts
// nothing: the next pass reports the pool foreign.
func TestCreateNeverAdoptsForeign(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		mark := provider.Owner{Installation: theirs, Pool: webID}
		w.seed("web", mark)
		w.drivers.Add(&hiding{Driver: w.drv, name: "web", lists: 2})
		// The kpool pool first: a pass before it exists would spend a
		// list that hides web on a cluster with nothing to create.
		p := w.createWeb()
		stop := w.start("a", installed, quick)
		defer stop()
		w.until(time.Minute, func() (bool, string) {
			return condition(w.report(p.ID), kpool.ConditionReady) == "False ForeignPool", condition(w.report(p.ID), kpool.ConditionReady)
		})
		if n := w.calls(fake.Create, "web"); n < 2 {
			t.Fatalf("%d creates: the controller never met the taken name", n)
		}
		if fp, _ := w.drv.Pool(w.cluster, "web"); fp.Owner != mark || w.drv.Creates("web") != 1 || w.calls(fake.Update, "web") != 0 {
			t.Fatalf("the foreign pool was adopted or written: %+v, %d creates made a pool", fp, w.drv.Creates("web"))
		}
	})
}

// TestImportSkipsForeign: a cluster that imports pools imports the
// unmarked ones and never a foreign one, which it lists; a pool-less
// cluster lists its foreign and unmarked pools too.
func TestImportSkipsForeign(t *testing.T) {
	t.Parallel()
	for _, imports := range []bool{true, false} {
		t.Run(map[bool]string{true: "importPools", false: "no imports"}[imports], func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
				if imports {
					if _, err := w.svc.UpdateCluster(storetest.Ctx(owner), w.cluster.ID, service.Update{Patch: true, Spec: []byte(`{"importPools":true}`)}); err != nil {
						t.Fatal(err)
					}
				}
				w.seed("theirs", provider.Owner{Installation: theirs, Pool: webID})
				w.seed("legacy", provider.Owner{})
				stop := w.start("a", installed, quick)
				defer stop()
				w.advance(time.Minute)
				c, err := w.svc.Cluster(w.ctx(), w.cluster.ID)
				if err != nil {
					t.Fatal(err)
				}
				pools, err := w.svc.NodePools(w.ctx(), service.ListOptions{ClusterID: w.cluster.ID})
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, p := range pools.Items {
					names = append(names, p.ProviderName)
				}
				wantPools, wantUnmarked := "[legacy]", 0
				if !imports {
					wantPools, wantUnmarked = "[]", 1
				}
				if got := "[" + strings.Join(names, " ") + "]"; got != wantPools || len(c.Status.Unmarked) != wantUnmarked {
					t.Fatalf("kpool pools %s (want %s), unmarked %+v", got, wantPools, c.Status.Unmarked)
				}
				if len(c.Status.Foreign) != 1 || c.Status.Foreign[0].ProviderName != "theirs" {
					t.Fatalf("foreign pools: %+v", c.Status.Foreign)
				}
				// The foreign pool is gone at the provider: the list clears.
				if err := w.drv.NodePoolDelete(context.Background(), w.cluster, "theirs"); err != nil {
					t.Fatal(err)
				}
				w.until(5*time.Minute, func() (bool, string) {
					f := w.foreignOf()
					return len(f) == 0, fmt.Sprintf("still foreign: %+v", f)
				})
			})
		})
	}
}

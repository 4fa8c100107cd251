package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/store/testdb"
)

// The tests here are the cases of issue 11: controllers that no cloud, pool
// or endpoint can stall, that never orphan a pool, and that say why. Each
// failed on the controllers as they were before it.

// addCluster registers another cluster of the world's platform.
func (w *world) addCluster(name string) *kpool.Cluster {
	w.t.Helper()
	spec := strings.Replace(platforms[w.cluster.Spec.Platform.Type].cluster, "aks-prod", "aks-"+name, 1)
	c, err := w.svc.CreateCluster(w.ctx(), service.ClusterCreate{Name: name, Spec: json.RawMessage(spec)})
	if err != nil {
		w.t.Fatal(err)
	}
	return c
}

// createPoolIn creates a pool in another cluster of the world.
func (w *world) createPoolIn(c *kpool.Cluster, name string, count int) *kpool.NodePool {
	w.t.Helper()
	spec := fmt.Sprintf(`{"platform":%s,"nodeCount":%d}`, w.block, count)
	p, err := w.svc.CreateNodePool(w.ctx(), service.NodePoolCreate{Name: name, ClusterID: c.ID, Spec: json.RawMessage(spec)})
	if err != nil {
		w.t.Fatal(err)
	}
	return p
}

// hooked runs a function in the middle of each create, after the
// controller decided to create and before the provider answers.
type hooked struct {
	provider.Driver
	mu       sync.Mutex
	onCreate func()
}

func (h *hooked) NodePoolCreate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	h.mu.Lock()
	f := h.onCreate
	h.onCreate = nil
	h.mu.Unlock()
	out, err := h.Driver.NodePoolCreate(ctx, c, s)
	if f != nil {
		f()
	}
	return out, err
}

// TestDeleteWhileCreating (case 1): a pool deleted while its create is on
// its way to the provider is deleted there before its record goes; never
// left behind. The API's DELETE finds the controller's report of the
// create and answers Deleting, not gone.
func TestDeleteWhileCreating(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		h := &hooked{Driver: w.drv}
		w.drivers.Add(h)
		var p *kpool.NodePool
		var gone bool
		h.onCreate = func() {
			var err error
			_, gone, err = w.svc.DeleteNodePool(w.ctx(), p.ID, service.Delete{})
			if err != nil {
				t.Error(err)
			}
		}
		stop := w.start("a")
		defer stop()
		p = w.createPool("web", 2, "1")
		w.until(5*time.Minute, func() (bool, string) {
			_, atProvider := w.drv.Pool(w.cluster, p.ProviderName)
			return w.pool(p.ID) == nil && !atProvider, fmt.Sprintf("record there %v, at the provider %v", w.pool(p.ID) != nil, atProvider)
		})
		if gone {
			t.Fatal("DELETE removed the record at once while the create was on its way")
		}
		if w.calls(fake.Create, p.ProviderName) != 1 || w.calls(fake.Delete, p.ProviderName) != 1 {
			t.Fatalf("%d creates and %d deletes, want 1 and 1", w.calls(fake.Create, p.ProviderName), w.calls(fake.Delete, p.ProviderName))
		}
	})
}

// TestDeleteBeforeCreate (case 1): a pool deleted before any controller
// acted on it goes at once, and no create is ever sent for it.
func TestDeleteBeforeCreate(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		w.drv.Hang(w.cluster, true) // the controller lists and waits
		stop := w.start("a")
		defer stop()
		p := w.createPool("web", 1)
		w.settle()
		if _, gone, err := w.svc.DeleteNodePool(w.ctx(), p.ID, service.Delete{}); err != nil || !gone {
			t.Fatalf("DELETE of a pool no controller acted on: gone %v, %v", gone, err)
		}
		w.drv.Hang(w.cluster, false)
		w.advance(5 * time.Minute)
		if n := w.calls(fake.Create, ""); n != 0 {
			t.Fatalf("%d creates for a pool deleted before any", n)
		}
	})
}

// TestCreateInFlightIsWaitedFor (case 1): when the create's answer was
// lost (the provider may make the pool later), a delete waits out the call
// deadline before it calls the pool gone, then deletes what appeared.
func TestCreateInFlightIsWaitedFor(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		w.drv.Hang(w.cluster, true)
		stop := w.start("a", func(c *reconcile.Config) { c.CallTimeout = 30 * time.Second })
		defer stop()
		p := w.createPool("web", 1)
		// The list hangs; when it is cut off, the endpoint answers again
		// but the create hangs in turn.
		w.until(time.Minute, func() (bool, string) {
			return w.calls(fake.List, "") >= 1, "no list"
		})
		w.drv.Hang(w.cluster, false)
		w.until(5*time.Minute, func() (bool, string) {
			return metaString(w.report(p.ID), "create_sent_at") != "", "no create reported"
		})
		w.drv.Hang(w.cluster, true)
		w.settle()
		w.delete(p.ID)
		w.advance(10 * time.Second)
		if w.pool(p.ID) == nil {
			t.Fatal("the record went while the create could still reach the provider")
		}
		w.drv.Hang(w.cluster, false)
		w.until(5*time.Minute, func() (bool, string) { return w.pool(p.ID) == nil, "still in kpool" })
		if _, ok := w.drv.Pool(w.cluster, p.ProviderName); ok {
			t.Fatal("the pool was left at the provider")
		}
	})
}

func metaString(cs *kpool.ControllerStatus, key string) string {
	s, _ := meta(cs)[key].(string)
	return s
}

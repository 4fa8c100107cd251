package reconcile_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/provider/civo"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/store/storetest"
	"github.com/kpool/kpool/store/testdb"
)

// refusing is a Civo driver whose creates are refused: a capability
// boundary or a validation error. It counts its calls.
type refusing struct {
	err   error
	lists chan struct{} // a value for each list: one resync
	mu    sync.Mutex
	calls int
}

func (r *refusing) Capabilities() provider.Capabilities {
	return civo.Profile{}.Capabilities()
}
func (r *refusing) NodePoolList(context.Context, *kpool.Cluster) ([]provider.Pool, error) {
	select {
	case r.lists <- struct{}{}:
	default:
	}
	return nil, nil
}
func (r *refusing) NodePoolCreate(context.Context, *kpool.Cluster, provider.PoolSpec) (*provider.Pool, error) {
	r.mu.Lock()
	r.calls++
	r.mu.Unlock()
	return nil, r.err
}
func (r *refusing) NodePoolUpdate(context.Context, *kpool.Cluster, provider.PoolSpec) (*provider.Pool, error) {
	return nil, r.err
}
func (r *refusing) NodePoolDelete(context.Context, *kpool.Cluster, string) error { return nil }

// TestRefusalsAreNotRetried: NOT_IMPLEMENTED fails the pool with
// Supported=False, a validation error fails it with the provider's message,
// and neither is tried again until the spec changes.
func TestRefusalsAreNotRetried(t *testing.T) {
	for name, err := range map[string]error{
		"not implemented": provider.NotImplementedError(kpool.PlatformCivo, "no pools in this region"),
		"validation":      provider.ValidationError(kpool.PlatformCivo, "spec.platform.civo.size", "size g9.huge does not exist"),
	} {
		t.Run(name, func(t *testing.T) {
			st := testdb.SQLite(t)
			reg := catalog.Registry()
			svc := kpool.NewService(st, reg)
			drv := &refusing{err: err, lists: make(chan struct{}, 1)}
			reg.Add(drv)
			ctx := storetest.Ctx(owner)
			c, e := svc.CreateCluster(ctx, kpool.ClusterCreate{Name: "civo", Spec: json.RawMessage(`{"platform":{"type":"civo","civo":{"region":"LON1","clusterId":"7c9e6679-7425-40de-944b-e07fc1f90ae7"}}}`)})
			if e != nil {
				t.Fatal(e)
			}
			p, e := svc.CreateNodePool(ctx, kpool.NodePoolCreate{Name: "w", ClusterID: c.ID, Spec: json.RawMessage(`{"platform":{"civo":{"size":"g4s.kube.medium"}}}`)})
			if e != nil {
				t.Fatal(e)
			}
			w := &world{t: t, svc: svc, drivers: reg, warns: &warnings{}}
			runCtx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ctl := reconcile.New(reconcile.Config{Service: svc, Drivers: reg, Log: slog.New(w.warns), ResyncFast: 10 * time.Millisecond,
				ResyncSlow: 10 * time.Millisecond, BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond, PollEvents: 10 * time.Millisecond})
			go func() { _ = ctl.Run(runCtx) }()
			w.waitFor(time.Minute, func() (bool, string) {
				got, _ := svc.NodePool(ctx, p.ID)
				return got.Status.Phase == kpool.PhaseFailed, string(got.Status.Phase) + ": " + got.Status.Message
			})
			doc, _ := svc.NodePoolStatus(ctx, p.ID)
			supported := ""
			for _, cond := range doc.Status.Conditions {
				if cond.Type == kpool.ConditionSupported {
					supported = cond.Status
				}
			}
			if (name == "not implemented") != (supported == kpool.ConditionFalse) {
				t.Fatalf("Supported=%s for %s: %+v", supported, name, doc.Status)
			}
			if doc.Status.Message == "" {
				t.Fatal("no message")
			}
			// Ten resyncs later, still one call; a new generation tries again.
			for range 10 {
				<-drv.lists
			}
			drv.mu.Lock()
			calls := drv.calls
			drv.mu.Unlock()
			if calls != 1 {
				t.Fatalf("%d create calls for one generation, want 1", calls)
			}
			if _, e := svc.UpdateNodePool(ctx, p.ID, kpool.Update{Spec: json.RawMessage(`{"nodeCount":2}`)}); e != nil {
				t.Fatal(e)
			}
			w.waitFor(time.Minute, func() (bool, string) {
				drv.mu.Lock()
				defer drv.mu.Unlock()
				return drv.calls == 2, "no retry after the spec changed"
			})
		})
	}
}

package fake_test

import (
	"context"
	"errors"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/provider/providertest"
)

var (
	ctx   = context.Background()
	epoch = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
)

// platforms are the providers the fake stands for in these tests: a
// cluster, a valid pool spec, and a change the provider refuses in place.
var platforms = map[kpool.PlatformType]struct {
	cluster   kpool.ClusterSpec
	pool      func(zones []string) kpool.NodePoolSpec
	immutable func(s *provider.PoolSpec) string
}{
	kpool.PlatformAzure: {
		cluster: kpool.ClusterSpec{Platform: kpool.ClusterPlatform{Type: kpool.PlatformAzure, Azure: &kpool.AzureCluster{
			SubscriptionID: "0b1f6471-1bf0-4dda-aec3-111122223333", ResourceGroup: "rg", ClusterName: "prod", Location: "westeurope"}}},
		pool: func(zones []string) kpool.NodePoolSpec {
			return kpool.NodePoolSpec{NodeCount: ptr(2), Zones: zones,
				Platform: kpool.NodePoolPlatform{Azure: &kpool.AzureNodePool{VMSize: "Standard_D4s_v5", OSDiskSizeGB: 128}}}
		},
		immutable: func(s *provider.PoolSpec) string { s.MachineType = "Standard_D8s_v5"; return "spec.machineType" },
	},
	kpool.PlatformGCP: {
		cluster: kpool.ClusterSpec{Platform: kpool.ClusterPlatform{Type: kpool.PlatformGCP, GCP: &kpool.GCPCluster{
			ProjectID: "acme-prod", Location: "us-central1", ClusterName: "prod"}}},
		pool: func(zones []string) kpool.NodePoolSpec {
			return kpool.NodePoolSpec{NodeCount: ptr(2), Zones: zones,
				Platform: kpool.NodePoolPlatform{GCP: &kpool.GCPNodePool{MachineType: "n2-standard-4", DiskSize: 100}}}
		},
		// GKE changes machine types in place (rolling the nodes), not spot.
		immutable: func(s *provider.PoolSpec) string { s.Spot = !s.Spot; return "spec.spot" },
	},
}

func ptr[T any](v T) *T { return &v }

// TestConformance runs the driver conformance suite on the fake, standing
// for AKS and for GKE.
func TestConformance(t *testing.T) {
	for pt, p := range platforms {
		t.Run(string(pt), func(t *testing.T) {
			providertest.Run(t, func(t *testing.T) *providertest.Harness {
				clock := clocktesting.NewFakeClock(epoch)
				d := fake.New(fake.Options{Platform: pt, Clock: clock})
				c := &kpool.Cluster{ID: "c1", Name: "prod", Spec: p.cluster}
				return &providertest.Harness{
					Driver:  d,
					Cluster: c,
					Spec: func(name string, zones ...string) provider.PoolSpec {
						return providertest.Spec(c, name, p.pool(zones))
					},
					Settle:   func() { clock.Step(time.Hour) },
					Throttle: d.SetRateLimit,
					Faults:   d.SetFaultRate,
					Creates:  d.Creates,
					Unlabel: func(pn, label string) {
						if err := d.Mutate(c, pn, func(s *provider.PoolSpec) { delete(s.Labels, label) }); err != nil {
							t.Fatal(err)
						}
					},
					ImmutableField: p.immutable,
				}
			})
		})
	}
}

// world is a fake driver on a fake clock and a cluster for it.
type world struct {
	clock   *clocktesting.FakeClock
	d       *fake.Driver
	cluster *kpool.Cluster
}

func newWorld(pt kpool.PlatformType) *world {
	clock := clocktesting.NewFakeClock(epoch)
	spec := platforms[kpool.PlatformAzure].cluster
	if pt == kpool.PlatformCivo {
		spec = kpool.ClusterSpec{Platform: kpool.ClusterPlatform{Type: kpool.PlatformCivo, Civo: &kpool.CivoCluster{Region: "LON1", ClusterID: "7c9e6679-7425-40de-944b-e07fc1f90ae7"}}}
	}
	return &world{clock: clock, d: fake.New(fake.Options{Platform: pt, Clock: clock}), cluster: &kpool.Cluster{ID: "c1", Name: "prod", Spec: spec}}
}

func (w *world) spec(name string, count int, zones ...string) provider.PoolSpec {
	return provider.PoolSpec{Name: name, ProviderName: name, MachineType: "Standard_D4s_v5", Count: count, Zones: zones, Mode: kpool.ModeUser,
		Labels: map[string]string{provider.LabelPool: name}}
}

func (w *world) pool(t *testing.T, pn string) provider.Pool {
	t.Helper()
	p, ok := w.d.Pool(w.cluster, pn)
	if !ok {
		t.Fatalf("pool %s is not there", pn)
	}
	return p
}

// TestOperationsTakeTime follows a pool through create, scale and delete
// on the clock: the state, and the nodes coming and going one at a time.
func TestOperationsTakeTime(t *testing.T) {
	w := newWorld(kpool.PlatformAzure)
	s := w.spec("web", 3, "1", "2")
	created, err := w.d.NodePoolCreate(ctx, w.cluster, s)
	if err != nil || created.State != provider.StateCreating {
		t.Fatalf("create: %+v, %v", created, err)
	}
	// Create: 30s plus 10s a node; nodes come up every 10s.
	for _, step := range []struct {
		after time.Duration
		state provider.State
		nodes int
	}{
		{0, provider.StateCreating, 0},
		{10 * time.Second, provider.StateCreating, 1},
		{25 * time.Second, provider.StateCreating, 2},
		{30 * time.Second, provider.StateCreating, 3},
		{59 * time.Second, provider.StateCreating, 3},
		{60 * time.Second, provider.StateReady, 3},
	} {
		w.clock.SetTime(epoch.Add(step.after))
		p := w.pool(t, "web")
		if p.State != step.state || p.Nodes != step.nodes || p.ReadyNodes != step.nodes {
			t.Fatalf("after %v: %s with %d nodes (%d ready), want %s with %d", step.after, p.State, p.Nodes, p.ReadyNodes, step.state, step.nodes)
		}
	}
	if p := w.pool(t, "web"); p.NodesByZone["1"] != 2 || p.NodesByZone["2"] != 1 || p.Name != "web" || len(p.Problems) > 0 {
		t.Fatalf("ready pool: %+v", p)
	}

	s.Count = 1
	if _, err := w.d.NodePoolUpdate(ctx, w.cluster, s); err != nil {
		t.Fatal(err)
	}
	w.clock.Step(10 * time.Second)
	if p := w.pool(t, "web"); p.State != provider.StateUpdating || p.Nodes != 2 {
		t.Fatalf("scaling down: %s with %d nodes", p.State, p.Nodes)
	}
	// One operation at a time: a change meanwhile is transient.
	if _, err := w.d.NodePoolUpdate(ctx, w.cluster, s); !provider.IsTransient(err) {
		t.Fatalf("update during an update: %v, want transient", err)
	}
	w.clock.Step(time.Minute)
	if p := w.pool(t, "web"); p.State != provider.StateReady || p.Nodes != 1 || p.Count != 1 {
		t.Fatalf("scaled: %+v", p)
	}

	if err := w.d.NodePoolDelete(ctx, w.cluster, "web"); err != nil {
		t.Fatal(err)
	}
	if p := w.pool(t, "web"); p.State != provider.StateDeleting {
		t.Fatalf("deleting: %s", p.State)
	}
	if err := w.d.NodePoolDelete(ctx, w.cluster, "web"); err != nil {
		t.Fatalf("delete while deleting: %v", err)
	}
	w.clock.Step(time.Minute)
	if _, ok := w.d.Pool(w.cluster, "web"); ok {
		t.Fatal("deleted pool still there")
	}
}

// TestScriptedErrors: the next N calls of an operation, or every call of
// one on a pool, fail with the error the test gives, and change nothing.
func TestScriptedErrors(t *testing.T) {
	refused := provider.ValidationError(kpool.PlatformAzure, "spec.platform.azure.vmSize", "no such size")
	throttled := &provider.Error{Kind: provider.KindThrottled, Provider: kpool.PlatformAzure, RetryAfter: 30 * time.Second}
	type step struct {
		op   fake.Op
		pool string
		want error
	}
	tests := []struct {
		name   string
		script func(d *fake.Driver)
		steps  []step
	}{
		{"next creates", func(d *fake.Driver) { d.FailNext(fake.Create, 2, throttled) },
			[]step{{fake.Create, "a", throttled}, {fake.Create, "b", throttled}, {fake.Create, "a", nil}, {fake.Create, "b", nil}}},
		{"next update", func(d *fake.Driver) { d.FailNext(fake.Update, 1, refused) },
			[]step{{fake.Create, "a", nil}, {fake.Update, "a", refused}, {fake.Update, "a", nil}}},
		{"one pool's updates", func(d *fake.Driver) { d.FailPool(fake.Update, "a", refused) },
			[]step{{fake.Create, "a", nil}, {fake.Create, "b", nil}, {fake.Update, "a", refused}, {fake.Update, "b", nil}, {fake.Update, "a", refused}}},
		{"one pool's creates", func(d *fake.Driver) { d.FailPool(fake.Create, "b", refused) },
			[]step{{fake.Create, "a", nil}, {fake.Create, "b", refused}, {fake.Create, "b", refused}}},
		{"one pool's deletes", func(d *fake.Driver) { d.FailPool(fake.Delete, "a", refused) },
			[]step{{fake.Create, "a", nil}, {fake.Delete, "a", refused}, {fake.Delete, "b", nil}}},
		{"a list", func(d *fake.Driver) { d.FailNext(fake.List, 1, throttled) },
			[]step{{fake.List, "", throttled}, {fake.List, "", nil}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(kpool.PlatformAzure)
			tc.script(w.d)
			for i, st := range tc.steps {
				before, existed := w.d.Pool(w.cluster, st.pool)
				var err error
				switch st.op {
				case fake.List:
					_, err = w.d.NodePoolList(ctx, w.cluster)
				case fake.Create:
					_, err = w.d.NodePoolCreate(ctx, w.cluster, w.spec(st.pool, 1))
				case fake.Update:
					_, err = w.d.NodePoolUpdate(ctx, w.cluster, w.spec(st.pool, 2))
				case fake.Delete:
					err = w.d.NodePoolDelete(ctx, w.cluster, st.pool)
				}
				if err != st.want {
					t.Fatalf("step %d, %s %s: %v, want %v", i, st.op, st.pool, err, st.want)
				}
				after, exists := w.d.Pool(w.cluster, st.pool)
				if st.want != nil && (exists != existed || after.State != before.State || after.Count != before.Count) {
					t.Fatalf("step %d, %s %s failed and changed the pool: %+v, then %+v", i, st.op, st.pool, before, after)
				}
				w.clock.Step(time.Hour)
			}
		})
	}
	// A pool's failure ends when cleared.
	w := newWorld(kpool.PlatformAzure)
	w.d.FailPool(fake.Delete, "a", refused)
	w.d.FailPool(fake.Delete, "a", nil)
	if err := w.d.NodePoolDelete(ctx, w.cluster, "a"); err != nil {
		t.Fatalf("delete after the failure was cleared: %v", err)
	}
}

// TestFaults: at a fault rate of 1 every call gets a fault, each as its
// kind says: refused and nothing done, done with the reply lost, or
// accepted with an operation that fails.
func TestFaults(t *testing.T) {
	w := newWorld(kpool.PlatformAzure)
	w.d.SetFaultRate(1)
	seen := map[fake.Fault]bool{}
	for i := range 40 {
		pn := "p" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		_, err := w.d.NodePoolCreate(ctx, w.cluster, w.spec(pn, 1))
		calls := w.d.Calls()
		call := calls[len(calls)-1]
		seen[call.Fault] = true
		_, exists := w.d.Pool(w.cluster, pn)
		switch call.Fault {
		case fake.FaultError, fake.FaultUnavailable:
			if !provider.IsTransient(err) || exists || call.Created {
				t.Fatalf("%s: %v, pool made %v", call.Fault, err, exists)
			}
			if d, ok := provider.RetryAfter(err); ok != (call.Fault == fake.FaultUnavailable) || ok && d != time.Second {
				t.Fatalf("%s: retry after %v %v", call.Fault, d, ok)
			}
		case fake.FaultLostReply:
			if !provider.IsTransient(err) || !exists || !call.Created {
				t.Fatalf("lost reply: %v, pool made %v", err, exists)
			}
		case fake.FaultFailLater:
			if err != nil || !exists {
				t.Fatalf("failed operation: %v, pool made %v", err, exists)
			}
			w.clock.Step(time.Hour)
			if p := w.pool(t, pn); p.State != provider.StateFailed {
				t.Fatalf("after a failed operation the pool is %s", p.State)
			}
		default:
			t.Fatalf("call without a fault at rate 1: %+v", call)
		}
	}
	if len(seen) != 4 {
		t.Fatalf("faults seen: %v, want all four kinds", seen)
	}
	w.d.SetFaultRate(0)
	if _, err := w.d.NodePoolList(ctx, w.cluster); err != nil {
		t.Fatalf("list without faults: %v", err)
	}
}

// TestRateLimit: calls over the rate are throttled with the Retry-After
// the bucket needs, and go through once the clock has moved that far.
func TestRateLimit(t *testing.T) {
	w := newWorld(kpool.PlatformAzure)
	w.d.SetRateLimit(0.5, 2)
	for i := range 2 {
		if _, err := w.d.NodePoolList(ctx, w.cluster); err != nil {
			t.Fatalf("call %d within the burst: %v", i, err)
		}
	}
	_, err := w.d.NodePoolList(ctx, w.cluster)
	if d, ok := provider.RetryAfter(err); !provider.IsThrottled(err) || !ok || d != 2*time.Second {
		t.Fatalf("over the limit: %v, want throttled, retry after 2s", err)
	}
	w.clock.Step(time.Second)
	if _, err := w.d.NodePoolList(ctx, w.cluster); !provider.IsThrottled(err) {
		t.Fatalf("before the Retry-After: %v", err)
	}
	w.clock.Step(time.Second)
	if _, err := w.d.NodePoolList(ctx, w.cluster); err != nil {
		t.Fatalf("after the Retry-After: %v", err)
	}
	calls := w.d.Calls()
	if calls[2].Fault != fake.FaultThrottled || calls[4].Fault != "" {
		t.Fatalf("call log: %+v", calls)
	}
}

// TestCapabilities: a spec asking for what the provider lacks is
// NOT_IMPLEMENTED; a name outside its rules is a validation error.
func TestCapabilities(t *testing.T) {
	w := newWorld(kpool.PlatformCivo)
	s := w.spec("workers", 1, "1")
	s.MachineType = "g4s.kube.medium"
	if _, err := w.d.NodePoolCreate(ctx, w.cluster, s); !provider.IsNotImplemented(err) {
		t.Fatalf("zones on Civo: %v, want not implemented", err)
	}
	s.Zones = nil
	s.ProviderName = "Not_A_Name"
	if _, err := w.d.NodePoolCreate(ctx, w.cluster, s); !provider.IsValidation(err) {
		t.Fatalf("a bad name: %v, want a validation error", err)
	}
	if w.d.Capabilities().Provider != kpool.PlatformCivo {
		t.Fatalf("capabilities of %s", w.d.Capabilities().Provider)
	}
}

// TestCanceled: a call whose context has ended does nothing.
func TestCanceled(t *testing.T) {
	w := newWorld(kpool.PlatformAzure)
	c, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := w.d.NodePoolCreate(c, w.cluster, w.spec("a", 1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("create with a canceled context: %v", err)
	}
	if _, ok := w.d.Pool(w.cluster, "a"); ok {
		t.Fatal("a canceled create made the pool")
	}
}

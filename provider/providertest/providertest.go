// Package providertest is the conformance suite every driver must pass:
// a real driver against its cloud emulator on loopback, and the in-memory
// fake (provider/fake) on its own state, through the same Harness.
package providertest

import (
	"context"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
)

// Harness is a driver and the controls of what stands behind it: a cloud
// emulator, or the fake driver's in-memory provider. Every control acts on
// that backend, never through the driver under test.
type Harness struct {
	Driver  provider.Driver
	Cluster *kpool.Cluster
	// Spec returns a valid spec of a pool named name in zones, with its
	// provider name derived.
	Spec func(name string, zones ...string) provider.PoolSpec
	// Settle lets simulated time pass until every operation has finished.
	Settle func()
	// Throttle sets the backend's rate limit (0: none).
	Throttle func(perSecond float64, burst int)
	// Faults sets the backend's fault rate (0: none).
	Faults func(rate float64)
	// Creates counts the create calls that reached the provider for a
	// provider name.
	Creates func(providerName string) int
	// Unlabel removes a label from a pool behind the driver's back.
	Unlabel func(providerName, label string)
	// ImmutableField is a spec change the provider refuses in place, and
	// the field it must name.
	ImmutableField func(s *provider.PoolSpec) string
}

// Run runs the suite; newHarness returns a fresh backend and driver.
func Run(t *testing.T, newHarness func(t *testing.T) *Harness) {
	tests := []struct {
		name string
		fn   func(*testing.T, *Harness)
	}{
		{"Lifecycle", testLifecycle},
		{"IdempotentCreate", testIdempotentCreate},
		{"IdempotentDelete", testIdempotentDelete},
		{"ImmutableIsValidation", testImmutable},
		{"UnsupportedIsNotImplemented", testNotImplemented},
		{"ThrottlingIsTyped", testThrottled},
		{"FaultsAreTransient", testFaults},
		{"LabelAndZoneContract", testContract},
		{"ProviderNames", testProviderNames},
		{"AutoscalerOwnsCount", testAutoscaler},
		{"UpdateOfMissingPool", testUpdateMissing},
		{"OwnerMark", testOwnerMark},
		{"UnmarkedPoolIsMarked", testUnmarkedPoolIsMarked},
		{"BusyIsTyped", testBusy},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, newHarness(t))
		})
	}
}

var ctx = context.Background()

func find(t *testing.T, h *Harness, providerName string) (*provider.Pool, bool) {
	t.Helper()
	pools, err := h.Driver.NodePoolList(ctx, h.Cluster)
	if err != nil {
		t.Fatalf("NodePoolList: %v", err)
	}
	p, ok := provider.Find(pools, providerName)
	return p, ok
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// zones gives the zones a test asks for, none on a provider without zones.
func zones(h *Harness, zs ...string) []string {
	if h.Driver.Capabilities().Zones == provider.ZonesNone {
		return nil
	}
	return zs
}

func testLifecycle(t *testing.T, h *Harness) {
	caps := h.Driver.Capabilities()
	s := h.Spec("workers", zones(h, "1")...)
	created, err := h.Driver.NodePoolCreate(ctx, h.Cluster, s)
	must(t, err)
	if created.ProviderName != s.ProviderName || created.State == provider.StateReady {
		t.Fatalf("create returned %+v; want the pool, still in progress (drivers do not wait)", created)
	}
	p, ok := find(t, h, s.ProviderName)
	if !ok || p.State != provider.StateCreating {
		t.Fatalf("listed after create: %+v", p)
	}
	h.Settle()
	p, _ = find(t, h, s.ProviderName)
	if p.State != provider.StateReady || p.Count != s.Count || p.ReadyNodes != s.Count || p.Name != "workers" || p.MachineType != s.MachineType {
		t.Fatalf("settled pool: %+v", p)
	}
	if caps.Zones != provider.ZonesNone && (len(p.Zones) != 1 || p.Zones[0] != "1" || p.NodesByZone["1"] != s.Count) {
		t.Fatalf("zones %v, nodes by zone %v", p.Zones, p.NodesByZone)
	}
	if caps.Zones == provider.ZonesNone && len(p.Zones) != 0 {
		t.Fatalf("a provider without zones lists zones %v", p.Zones)
	}

	// Change every field the provider can change on a pool.
	s.Count = s.Count + 2
	s.Labels["team"] = "ml"
	if caps.Taints {
		s.Taints = append(s.Taints, kpool.Taint{Key: "dedicated", Value: "ml", Effect: kpool.EffectNoSchedule})
	}
	if caps.Tags {
		s.Tags = map[string]string{"cost-center": "42"}
	}
	applied := func(p *provider.Pool) bool {
		return p.Count == s.Count && p.Labels["team"] == "ml" &&
			(!caps.Tags || p.Tags["cost-center"] == "42") && (!caps.Taints || hasTaint(p.Taints, "dedicated"))
	}
	// A provider that takes one operation at a time on a pool (GKE) may
	// need the controllers' next passes to apply all of a change: update
	// again once it settles, a few times at most.
	for pass := 0; pass < 4; pass++ {
		_, err = h.Driver.NodePoolUpdate(ctx, h.Cluster, s)
		must(t, err)
		h.Settle()
		p, _ = find(t, h, s.ProviderName)
		if applied(p) {
			break
		}
	}
	if !applied(p) || p.State != provider.StateReady {
		t.Fatalf("updated pool: %+v", p)
	}

	must(t, h.Driver.NodePoolDelete(ctx, h.Cluster, s.ProviderName))
	h.Settle()
	if p, ok := find(t, h, s.ProviderName); ok {
		t.Fatalf("deleted pool still listed: %+v", p)
	}
}

func hasTaint(ts []kpool.Taint, key string) bool {
	for _, t := range ts {
		if t.Key == key {
			return true
		}
	}
	return false
}

func testIdempotentCreate(t *testing.T, h *Harness) {
	s := h.Spec("workers")
	_, err := h.Driver.NodePoolCreate(ctx, h.Cluster, s)
	must(t, err)
	h.Settle()
	again, err := h.Driver.NodePoolCreate(ctx, h.Cluster, s)
	if err != nil || again.ProviderName != s.ProviderName {
		t.Fatalf("second create of the same spec: %+v, %v", again, err)
	}
	if n := h.Creates(s.ProviderName); n != 1 {
		t.Fatalf("the provider saw %d creates, want 1", n)
	}
	differs := s
	differs.Labels = map[string]string{provider.LabelPool: "workers", "team": "other"}
	if _, err := h.Driver.NodePoolCreate(ctx, h.Cluster, differs); !provider.IsAlreadyExists(err) {
		t.Fatalf("create with other labels: %v, want already exists", err)
	}
	immutable := s
	field := h.ImmutableField(&immutable)
	_, err = h.Driver.NodePoolCreate(ctx, h.Cluster, immutable)
	if !provider.IsValidation(err) || err.(*provider.Error).Field != field {
		t.Fatalf("create with another %s: %v, want a validation error on it", field, err)
	}
}

func testIdempotentDelete(t *testing.T, h *Harness) {
	must(t, h.Driver.NodePoolDelete(ctx, h.Cluster, h.Spec("never").ProviderName))
	s := h.Spec("workers")
	_, err := h.Driver.NodePoolCreate(ctx, h.Cluster, s)
	must(t, err)
	h.Settle()
	must(t, h.Driver.NodePoolDelete(ctx, h.Cluster, s.ProviderName))
	h.Settle()
	must(t, h.Driver.NodePoolDelete(ctx, h.Cluster, s.ProviderName))
}

func testImmutable(t *testing.T, h *Harness) {
	s := h.Spec("workers")
	_, err := h.Driver.NodePoolCreate(ctx, h.Cluster, s)
	must(t, err)
	h.Settle()
	field := h.ImmutableField(&s)
	_, err = h.Driver.NodePoolUpdate(ctx, h.Cluster, s)
	var e *provider.Error
	if !provider.IsValidation(err) || !asError(err, &e) || e.Field != field || e.Reason == "" || e.Provider != h.Driver.Capabilities().Provider {
		t.Fatalf("update of %s: %v, want a validation error naming it", field, err)
	}
	if provider.Retryable(err) || provider.IsNotImplemented(err) {
		t.Fatalf("a validation error is retryable or not-implemented: %v", err)
	}
}

func asError(err error, e **provider.Error) bool {
	pe, ok := err.(*provider.Error)
	*e = pe
	return ok
}

func testNotImplemented(t *testing.T, h *Harness) {
	reg := catalog.Registry()
	for _, p := range reg.Profiles() {
		if p.Capabilities().NodePools {
			continue
		}
		pt := p.Type()
		d := reg.Driver(pt)
		c := &kpool.Cluster{Name: "edge", Spec: kpool.ClusterSpec{Platform: kpool.ClusterPlatform{Type: pt}}}
		_, e1 := d.NodePoolList(ctx, c)
		_, e2 := d.NodePoolCreate(ctx, c, provider.PoolSpec{})
		_, e3 := d.NodePoolUpdate(ctx, c, provider.PoolSpec{})
		e4 := d.NodePoolDelete(ctx, c, "x")
		for i, err := range []error{e1, e2, e3, e4} {
			if !provider.IsNotImplemented(err) || provider.Retryable(err) || provider.IsValidation(err) {
				t.Fatalf("%s operation %d: %v, want NOT_IMPLEMENTED", pt, i, err)
			}
		}
		if kpool.ErrorCode(provider.APIError(e2)) != kpool.CodeNotImplemented {
			t.Fatalf("API error for %v", e2)
		}
	}
}

func testThrottled(t *testing.T, h *Harness) {
	h.Throttle(0.001, 2)
	var err error
	for i := 0; i < 10 && err == nil; i++ {
		_, err = h.Driver.NodePoolList(ctx, h.Cluster)
	}
	if !provider.IsThrottled(err) {
		t.Fatalf("under a rate limit: %v, want throttled", err)
	}
	if d, ok := provider.RetryAfter(err); !ok || d <= 0 {
		t.Fatalf("throttled without retry-after: %v", err)
	}
	if !provider.Retryable(err) {
		t.Fatal("throttling is not retryable")
	}
	h.Throttle(0, 0)
}

func testFaults(t *testing.T, h *Harness) {
	h.Faults(1)
	for i := 0; i < 20; i++ {
		_, err := h.Driver.NodePoolList(ctx, h.Cluster)
		if err == nil {
			continue // an operation that fails later still answers now
		}
		if !provider.Retryable(err) || provider.IsValidation(err) || provider.IsNotImplemented(err) {
			t.Fatalf("fault %d surfaced as %v, want transient or throttled", i, err)
		}
	}
	h.Faults(0)
	s := h.Spec("after-faults")
	_, err := h.Driver.NodePoolCreate(ctx, h.Cluster, s)
	must(t, err)
}

func testContract(t *testing.T, h *Harness) {
	one := h.Spec("one-zone", zones(h, "2")...)
	many := h.Spec("many-zones", zones(h, "1", "2", "3")...)
	none := h.Spec("no-zones")
	for _, s := range []provider.PoolSpec{one, many, none} {
		_, err := h.Driver.NodePoolCreate(ctx, h.Cluster, s)
		must(t, err)
		h.Settle() // a cloud may take one pool create at a time per cluster (GKE)
	}
	h.Settle()
	want := map[string]string{one.ProviderName: "2", many.ProviderName: "", none.ProviderName: ""}
	if h.Driver.Capabilities().Zones == provider.ZonesNone {
		want[one.ProviderName] = ""
	}
	names := map[string]string{one.ProviderName: "one-zone", many.ProviderName: "many-zones", none.ProviderName: "no-zones"}
	for pn, zone := range want {
		p, ok := find(t, h, pn)
		if !ok {
			t.Fatalf("%s not listed", pn)
		}
		if p.Labels[provider.LabelPool] != names[pn] || p.Name != names[pn] {
			t.Fatalf("%s: %s=%q, want %q", pn, provider.LabelPool, p.Labels[provider.LabelPool], names[pn])
		}
		if got, has := p.Labels[provider.LabelZone]; got != zone || has != (zone != "") {
			t.Fatalf("%s: %s=%q (set %v), want %q", pn, provider.LabelZone, got, has, zone)
		}
		if len(p.Problems) > 0 {
			t.Fatalf("%s: contract problems %v", pn, p.Problems)
		}
	}
	// An update that asks for other placement labels does not get them.
	changed := one
	changed.Labels = map[string]string{provider.LabelPool: "renamed", provider.LabelZone: "9", "extra": "x"}
	_, err := h.Driver.NodePoolUpdate(ctx, h.Cluster, changed)
	must(t, err)
	h.Settle()
	p, _ := find(t, h, one.ProviderName)
	if p.Labels[provider.LabelPool] != "one-zone" || p.Labels[provider.LabelZone] != want[one.ProviderName] || p.Labels["extra"] != "x" {
		t.Fatalf("update changed the placement labels: %v", p.Labels)
	}
	// A pool whose label went missing is reported.
	h.Unlabel(many.ProviderName, provider.LabelPool)
	p, _ = find(t, h, many.ProviderName)
	if len(p.Problems) == 0 {
		t.Fatalf("missing %s not reported: %+v", provider.LabelPool, p)
	}
}

func testProviderNames(t *testing.T, h *Harness) {
	caps := h.Driver.Capabilities()
	long := "a-very-long-pool-name-for-the-gpu-workers-in-the-east"
	s := h.Spec(long)
	if !caps.Names.Match(s.ProviderName) {
		t.Fatalf("provider name %q does not fit the provider's rules %+v", s.ProviderName, caps.Names)
	}
	again, err := provider.ProviderName(caps, long, nil)
	if err != nil || again != s.ProviderName {
		t.Fatalf("provider names are not deterministic: %q then %q (%v)", s.ProviderName, again, err)
	}
	other, err := provider.ProviderName(caps, long, []string{s.ProviderName})
	if err != nil || other == s.ProviderName {
		t.Fatalf("a taken provider name was reused: %q (%v)", other, err)
	}
	_, err = h.Driver.NodePoolCreate(ctx, h.Cluster, s)
	must(t, err)
	h.Settle()
	p, ok := find(t, h, s.ProviderName)
	if !ok || p.Name != long {
		t.Fatalf("pool %q lists as %+v; want kpool name %q reported back", s.ProviderName, p, long)
	}
}

func testAutoscaler(t *testing.T, h *Harness) {
	s := h.Spec("scaled")
	s.Autoscaling, s.MinCount, s.MaxCount, s.Count = true, 1, 10, 3
	_, err := h.Driver.NodePoolCreate(ctx, h.Cluster, s)
	if !h.Driver.Capabilities().Autoscaling {
		// A capability boundary: refused before anything reaches the
		// provider, never retried.
		if !provider.IsNotImplemented(err) || provider.Retryable(err) {
			t.Fatalf("autoscaling on a provider without it: %v, want NOT_IMPLEMENTED", err)
		}
		if n := h.Creates(s.ProviderName); n != 0 {
			t.Fatalf("the provider saw %d creates of a refused pool", n)
		}
		return
	}
	must(t, err)
	h.Settle()
	// The autoscaler moved the pool; an update of other fields keeps its count.
	s.Count = 7
	s.Labels["team"] = "a"
	_, err = h.Driver.NodePoolUpdate(ctx, h.Cluster, s)
	must(t, err)
	h.Settle()
	p, _ := find(t, h, s.ProviderName)
	if p.Count != 3 || !p.Autoscaling || p.MinCount != 1 || p.MaxCount != 10 {
		t.Fatalf("autoscaled pool after update: count %d autoscaling %v %d-%d; the count is the autoscaler's", p.Count, p.Autoscaling, p.MinCount, p.MaxCount)
	}
}

func testUpdateMissing(t *testing.T, h *Harness) {
	_, err := h.Driver.NodePoolUpdate(ctx, h.Cluster, h.Spec("ghost"))
	if !provider.IsNotFound(err) {
		t.Fatalf("update of a missing pool: %v, want not found", err)
	}
}

package driver_test

import (
	"testing"
	"time"

	container "google.golang.org/api/container/v1"

	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/gke"
)

// observed lists the pools and returns the one named.
func (e *emulated) observed(t *testing.T, pn string) *provider.Pool {
	t.Helper()
	pools, err := e.Driver.NodePoolList(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := provider.Find(pools, pn)
	if !ok {
		t.Fatalf("no pool %s", pn)
	}
	return p
}

// stored is the upgrade settings the emulator holds for a pool.
func (e *emulated) stored(t *testing.T, pn string) *container.UpgradeSettings {
	t.Helper()
	st, ok := e.Sim.Pool(project, location, clusterName, pn)
	if !ok || st.UpgradeSettings == nil {
		t.Fatalf("pool %s: no upgrade settings (%v)", pn, ok)
	}
	return st.UpgradeSettings
}

// TestUpgradeSettings: the spec's surge goes to GKE as SURGE upgrade
// settings on create, reads back into the observed pool without drift,
// changes in place (what the spec leaves unset kept as the pool has it),
// and a change behind kpool's back, a count or the strategy, is drift the
// next update puts right. Soak and drain timeout are kpool's: not sent.
func TestUpgradeSettings(t *testing.T) {
	e := newEmulated(t)
	s := e.spec("rolling", "1")
	s.Upgrade = &provider.Upgrade{MaxSurge: "3", MaxUnavailable: "1", Soak: 5 * time.Minute, DrainTimeout: time.Hour}
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	if u := e.stored(t, s.ProviderName); u.Strategy != "SURGE" || u.MaxSurge != 3 || u.MaxUnavailable != 1 || u.BlueGreenSettings != nil {
		t.Fatalf("sent upgrade settings %+v", u)
	}
	e.Clock.Advance(time.Hour)
	p := e.observed(t, s.ProviderName)
	if p.Upgrade == nil || p.Upgrade.MaxSurge != "3" || p.Upgrade.MaxUnavailable != "1" || p.Extra["upgradeStrategy"] != "SURGE" {
		t.Fatalf("observed upgrade %+v (%v)", p.Upgrade, p.Extra)
	}
	if diffs := provider.Compare(gke.Profile{}, s, p); len(diffs) != 0 {
		t.Fatalf("drift right after create: %v", diffs)
	}

	// In place: maxSurge 2; maxUnavailable, now unset, stays the pool's.
	s.Upgrade = &provider.Upgrade{MaxSurge: "2"}
	e.update(t, s)
	if u := e.stored(t, s.ProviderName); u.MaxSurge != 2 || u.MaxUnavailable != 1 {
		t.Fatalf("after the update: %+v", u)
	}

	// Behind kpool's back: a count, then blue-green.
	for _, change := range []func(u *container.UpgradeSettings){
		func(u *container.UpgradeSettings) { u.MaxSurge = 5 },
		func(u *container.UpgradeSettings) {
			u.Strategy = "BLUE_GREEN"
			u.BlueGreenSettings = &container.BlueGreenSettings{NodePoolSoakDuration: "600s"}
		},
	} {
		if err := e.Sim.Mutate(project, location, clusterName, s.ProviderName, func(np *container.NodePool) { change(np.UpgradeSettings) }); err != nil {
			t.Fatal(err)
		}
		diffs := provider.Compare(gke.Profile{}, s, e.observed(t, s.ProviderName))
		if len(diffs) != 1 || diffs[0].Field != provider.FieldUpgrade || diffs[0].Path != "spec.updateStrategy" {
			t.Fatalf("drift: %v", diffs)
		}
		e.update(t, s)
		if u := e.stored(t, s.ProviderName); u.Strategy != "SURGE" || u.MaxSurge != 2 {
			t.Fatalf("after putting it right: %+v", u)
		}
	}
}

// update sends the spec and waits out the operation; the pool then shows
// no drift.
func (e *emulated) update(t *testing.T, s provider.PoolSpec) {
	t.Helper()
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	if diffs := provider.Compare(gke.Profile{}, s, e.observed(t, s.ProviderName)); len(diffs) != 0 {
		t.Fatalf("drift after the update: %v", diffs)
	}
}

// TestUpgradeDefaults: a spec without a strategy, or with only what kpool
// carries out itself, sends no upgrade settings: the pool has GKE's
// (SURGE, 1, 0), and no update is started for them.
func TestUpgradeDefaults(t *testing.T) {
	e := newEmulated(t)
	for _, up := range []*provider.Upgrade{nil, {Soak: 10 * time.Minute, Force: true}} {
		s := e.spec("plain", "1")
		s.Upgrade = up
		if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(time.Hour)
		if u := e.stored(t, s.ProviderName); u.MaxSurge != 1 || u.MaxUnavailable != 0 || u.Strategy != "SURGE" {
			t.Fatalf("%+v: upgrade settings %+v, want GKE's", up, u)
		}
		p, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s)
		if err != nil || p.State != provider.StateReady {
			t.Fatalf("%+v: update started something: %+v %v", up, p, err)
		}
		if err := e.Driver.NodePoolDelete(ctx, e.Cluster, s.ProviderName); err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(time.Hour)
	}
}

// TestUpgradePercentRefused: a percentage (which the profile refuses at
// submit) is refused by the driver too, naming the field, before anything
// is sent.
func TestUpgradePercentRefused(t *testing.T) {
	e := newEmulated(t)
	s := e.spec("pct", "1")
	s.Upgrade = &provider.Upgrade{MaxUnavailable: "25%"}
	_, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s)
	var pe *provider.Error
	if !errorsAs(err, &pe) || pe.Kind != provider.KindValidation || pe.Field != "spec.updateStrategy.maxUnavailable" {
		t.Fatalf("create with a percentage: %v", err)
	}
	if _, ok := e.Sim.Pool(project, location, clusterName, s.ProviderName); ok {
		t.Fatal("the pool was created")
	}
	// What GKE refuses (both 0, which the profile refuses too) comes back
	// on spec.updateStrategy.
	s.Upgrade = &provider.Upgrade{MaxSurge: "0", MaxUnavailable: "0"}
	_, err = e.Driver.NodePoolCreate(ctx, e.Cluster, s)
	if !errorsAs(err, &pe) || pe.Kind != provider.KindValidation || pe.Field != "spec.updateStrategy" {
		t.Fatalf("create with both 0: %v", err)
	}
}

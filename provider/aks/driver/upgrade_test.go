package driver_test

import (
	"context"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/aks"
)

// TestUpgradeSettings: the spec's strategy is the agent pool's
// upgradeSettings (maxSurge, drainTimeoutInMinutes,
// nodeSoakDurationInMinutes) on a create and on an update, read back into
// the observed pool; maxUnavailable and Force, which api-version
// 2025-02-01 lacks, are not sent. A change made behind kpool's back is
// drift on spec.updateStrategy, and the next update puts it right; a spec
// that sets none leaves the pool's as they are.
func TestUpgradeSettings(t *testing.T) {
	e := newEmulated(t)
	ctx := context.Background()
	s := e.Harness(t).Spec("roll")
	s.Upgrade = &provider.Upgrade{MaxSurge: "33%", MaxUnavailable: "1", DrainTimeout: 45 * time.Minute, Soak: 5 * time.Minute, Force: true}
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	p := e.observe(t, s.ProviderName)
	if want := (provider.Upgrade{MaxSurge: "33%", DrainTimeout: 45 * time.Minute, Soak: 5 * time.Minute}); p.Upgrade == nil || *p.Upgrade != want {
		t.Fatalf("observed %+v, want %+v", p.Upgrade, want)
	}
	if d := provider.Compare(aks.Profile{}, s, p); len(d) > 0 {
		t.Fatalf("drift right after the create: %v", d)
	}

	// In place: the soak the spec no longer changes stays.
	s.Upgrade = &provider.Upgrade{MaxSurge: "2", DrainTimeout: 10 * time.Minute}
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	st, _ := e.Sim.Pool(subscription, group, clusterName, s.ProviderName)
	us := st.Properties.UpgradeSettings
	if ptr.Deref(us.MaxSurge, "") != "2" || ptr.Deref(us.DrainTimeoutInMinutes, 0) != 10 || ptr.Deref(us.NodeSoakDurationInMinutes, 0) != 5 {
		t.Fatalf("after the update: %+v", us)
	}

	// Behind kpool's back.
	if err := e.Sim.Mutate(subscription, group, clusterName, s.ProviderName, func(p *armcontainerservice.ManagedClusterAgentPoolProfileProperties) {
		p.UpgradeSettings.MaxSurge = ptr.To("50%")
	}); err != nil {
		t.Fatal(err)
	}
	d := provider.Compare(aks.Profile{}, s, e.observe(t, s.ProviderName))
	if len(d) != 1 || d[0].Field != provider.FieldUpgrade || d[0].Path != "spec.updateStrategy" || d[0].Want != "2" || d[0].Got != "50%" {
		t.Fatalf("drift %v, want maxSurge 2 against 50%% on spec.updateStrategy", d)
	}
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	if d := provider.Compare(aks.Profile{}, s, e.observe(t, s.ProviderName)); len(d) > 0 {
		t.Fatalf("drift after the update that corrects it: %v", d)
	}

	// A spec without a strategy leaves the pool's settings alone.
	s.Upgrade = nil
	s.Count++
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	if got := e.observe(t, s.ProviderName).Upgrade; got == nil || got.MaxSurge != "2" || got.DrainTimeout != 10*time.Minute {
		t.Fatalf("an update without a strategy changed the settings: %+v", got)
	}
}

// observe lists the cluster's pools and returns one.
func (e *emulated) observe(t *testing.T, name string) *provider.Pool {
	t.Helper()
	pools, err := e.Driver.NodePoolList(context.Background(), e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := provider.Find(pools, name)
	if !ok {
		t.Fatalf("pool %s not listed", name)
	}
	return p
}

// TestUpgradeSettingsRefused: settings AKS refuses (the profile refuses
// them first; a spec that reached the driver some other way) are a
// validation error on the strategy's field.
func TestUpgradeSettingsRefused(t *testing.T) {
	e := newEmulated(t)
	for _, tc := range []struct {
		up    provider.Upgrade
		field string
	}{
		{provider.Upgrade{MaxSurge: "0"}, "spec.updateStrategy.maxSurge"},
		{provider.Upgrade{MaxSurge: "150%"}, "spec.updateStrategy.maxSurge"},
		{provider.Upgrade{DrainTimeout: 25 * time.Hour}, "spec.updateStrategy.drainTimeout"},
		{provider.Upgrade{Soak: time.Hour}, "spec.updateStrategy.soak"},
	} {
		s := e.Harness(t).Spec("bad")
		s.Upgrade = &tc.up
		_, err := e.Driver.NodePoolCreate(context.Background(), e.Cluster, s)
		if pe, ok := err.(*provider.Error); !ok || pe.Kind != provider.KindValidation || pe.Field != tc.field {
			t.Errorf("%+v: %v, want a validation error on %s", tc.up, err, tc.field)
		}
	}
}

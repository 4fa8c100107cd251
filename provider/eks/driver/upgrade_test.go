package driver_test

import (
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	ekssim "github.com/kpool/kpool/cloudsim/eks"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/eks"
)

// TestUpdateConfig: the strategy's maxUnavailable is the node group's
// updateConfig (maxUnavailablePercentage for a percentage) on a create
// and, by UpdateNodegroupConfig, on an update; read back, a change made
// behind kpool's back is drift on spec.updateStrategy that the next
// update puts right. maxUnavailable 0, which EKS does not take, leaves
// EKS's default of one node, which is no drift.
func TestUpdateConfig(t *testing.T) {
	e := newEmulated(t)
	s := e.Harness(t).Spec("web")
	s.Upgrade = &provider.Upgrade{MaxSurge: "2", MaxUnavailable: "25%", DrainTimeout: 10 * time.Minute}
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	p := e.observe(t, s.ProviderName)
	if p.Upgrade == nil || *p.Upgrade != (provider.Upgrade{MaxUnavailable: "25%"}) {
		t.Fatalf("observed %+v, want maxUnavailable 25%%", p.Upgrade)
	}
	if d := provider.Compare(eks.Profile{}, s, p); len(d) > 0 {
		t.Fatalf("drift right after the create: %v", d)
	}

	s.Upgrade.MaxUnavailable = "3"
	e.update(t, s)
	if uc := e.updateConfig(t, s.ProviderName); ptr.Deref(uc.MaxUnavailable, 0) != 3 || uc.MaxUnavailablePercentage != nil {
		t.Fatalf("after the update: %+v", uc)
	}

	if err := e.Sim.Mutate(region, clusterName, s.ProviderName, func(ng *ekssim.Nodegroup) {
		ng.UpdateConfig.MaxUnavailable = ptr.To(int32(5))
	}); err != nil {
		t.Fatal(err)
	}
	d := provider.Compare(eks.Profile{}, s, e.observe(t, s.ProviderName))
	if len(d) != 1 || d[0].Field != provider.FieldUpgrade || d[0].Path != "spec.updateStrategy" || d[0].Want != "3" || d[0].Got != "5" {
		t.Fatalf("drift %v, want maxUnavailable 3 against 5 on spec.updateStrategy", d)
	}
	e.update(t, s)
	if d := provider.Compare(eks.Profile{}, s, e.observe(t, s.ProviderName)); len(d) > 0 {
		t.Fatalf("drift after the update that corrects it: %v", d)
	}

	// 0: back to EKS's default, and then nothing more to send.
	s.Upgrade.MaxUnavailable = "0"
	e.update(t, s)
	if uc := e.updateConfig(t, s.ProviderName); ptr.Deref(uc.MaxUnavailable, 0) != 1 {
		t.Fatalf("maxUnavailable 0 made %+v, want EKS's default of 1", uc)
	}
	p = e.observe(t, s.ProviderName)
	if d := provider.Compare(eks.Profile{}, s, p); p.Upgrade != nil || len(d) > 0 {
		t.Fatalf("EKS's default read as %+v, drift %v", p.Upgrade, d)
	}
	configs := e.configUpdates()
	e.update(t, s)
	if n := e.configUpdates(); n != configs {
		t.Fatalf("%d UpdateNodegroupConfig calls for a node group already as asked", n-configs)
	}

	// A create with 0 sends nothing.
	z := e.Harness(t).Spec("zero")
	z.Upgrade = &provider.Upgrade{MaxUnavailable: "0"}
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, z); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	if uc := e.updateConfig(t, z.ProviderName); ptr.Deref(uc.MaxUnavailable, 0) != 1 {
		t.Fatalf("created with %+v, want EKS's default", uc)
	}
}

// TestForceVersionUpdate: onStuck Force is UpdateNodegroupVersion's force
// flag: pods that cannot be drained fail an update unless it is forced.
func TestForceVersionUpdate(t *testing.T) {
	e := newEmulated(t)
	for _, force := range []bool{false, true} {
		s := e.Harness(t).Spec(map[bool]string{false: "gentle", true: "forced"}[force])
		s.Version = "1.31.2-20250101"
		s.Upgrade = &provider.Upgrade{Force: force}
		if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(time.Hour)
		s.Version = "1.31.2-20260301"
		e.Sim.FailNextOperations(1)
		e.update(t, s)
		st, _ := e.Sim.NodegroupOf(region, clusterName, s.ProviderName)
		if moved := st.ReleaseVersion == "1.31.2-20260301"; moved != force {
			t.Fatalf("force %v: release %s after the update", force, st.ReleaseVersion)
		}
	}
}

// update sends s and lets the update end.
func (e *emulated) update(t *testing.T, s provider.PoolSpec) {
	t.Helper()
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
}

// observe lists the cluster's pools and returns one.
func (e *emulated) observe(t *testing.T, name string) *provider.Pool {
	t.Helper()
	pools, err := e.Driver.NodePoolList(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := provider.Find(pools, name)
	if !ok {
		t.Fatalf("pool %s not listed", name)
	}
	return p
}

// unavailable is a node group's updateConfig.
type unavailable struct{ MaxUnavailable, MaxUnavailablePercentage *int32 }

// updateConfig is a node group's updateConfig at the emulator.
func (e *emulated) updateConfig(t *testing.T, name string) unavailable {
	t.Helper()
	st, ok := e.Sim.NodegroupOf(region, clusterName, name)
	if !ok {
		t.Fatalf("node group %s not found", name)
	}
	return unavailable{st.UpdateConfig.MaxUnavailable, st.UpdateConfig.MaxUnavailablePercentage}
}

// configUpdates counts the UpdateNodegroupConfig calls so far.
func (e *emulated) configUpdates() int {
	return e.Creates(func(c sim.Call) bool { return strings.HasSuffix(c.Path, "/update-config") })
}

// TestUpdateConfigRefused: an updateConfig EKS refuses (the profile
// refuses it first) is a validation error on spec.updateStrategy.maxUnavailable.
func TestUpdateConfigRefused(t *testing.T) {
	e := newEmulated(t)
	s := e.Harness(t).Spec("bad")
	s.Upgrade = &provider.Upgrade{MaxUnavailable: "101"}
	_, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s)
	if pe, ok := err.(*provider.Error); !ok || pe.Kind != provider.KindValidation || pe.Field != "spec.updateStrategy.maxUnavailable" {
		t.Fatalf("%v, want a validation error on spec.updateStrategy.maxUnavailable", err)
	}
}

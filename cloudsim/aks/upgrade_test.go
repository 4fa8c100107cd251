package aks_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/aks"
)

// upgradeSettings are taken within AKS's bounds (maxSurge a number of at
// least 1 or 1%-100%, drainTimeoutInMinutes 1-1440,
// nodeSoakDurationInMinutes 0-30), stored and returned, on a create and
// on an update; a value out of bounds is 400 InvalidParameter naming the
// property, and changes nothing.
func TestUpgradeSettingsRules(t *testing.T) {
	e := newEnv(t, aks.Options{})
	pr := basic(3)
	pr.UpgradeSettings = &armcontainerservice.AgentPoolUpgradeSettings{MaxSurge: ptr.To("33%"),
		DrainTimeoutInMinutes: ptr.To(int32(45)), NodeSoakDurationInMinutes: ptr.To(int32(5))}
	e.create("workers", pr)
	e.settle()
	us := e.get("workers").Properties.UpgradeSettings
	if us == nil || ptr.Deref(us.MaxSurge, "") != "33%" || ptr.Deref(us.DrainTimeoutInMinutes, 0) != 45 || ptr.Deref(us.NodeSoakDurationInMinutes, 0) != 5 {
		t.Fatalf("created with %+v", us)
	}
	for _, tc := range []struct {
		name, prop string
		set        func(*armcontainerservice.AgentPoolUpgradeSettings)
	}{
		{"surge 0", "maxSurge", func(u *armcontainerservice.AgentPoolUpgradeSettings) { u.MaxSurge = ptr.To("0") }},
		{"surge 0%", "maxSurge", func(u *armcontainerservice.AgentPoolUpgradeSettings) { u.MaxSurge = ptr.To("0%") }},
		{"surge 101%", "maxSurge", func(u *armcontainerservice.AgentPoolUpgradeSettings) { u.MaxSurge = ptr.To("101%") }},
		{"surge word", "maxSurge", func(u *armcontainerservice.AgentPoolUpgradeSettings) { u.MaxSurge = ptr.To("two") }},
		{"surge negative", "maxSurge", func(u *armcontainerservice.AgentPoolUpgradeSettings) { u.MaxSurge = ptr.To("-1") }},
		{"drain 0", "drainTimeoutInMinutes", func(u *armcontainerservice.AgentPoolUpgradeSettings) { u.DrainTimeoutInMinutes = ptr.To(int32(0)) }},
		{"drain 1441", "drainTimeoutInMinutes", func(u *armcontainerservice.AgentPoolUpgradeSettings) { u.DrainTimeoutInMinutes = ptr.To(int32(1441)) }},
		{"soak 31", "nodeSoakDurationInMinutes", func(u *armcontainerservice.AgentPoolUpgradeSettings) { u.NodeSoakDurationInMinutes = ptr.To(int32(31)) }},
		{"soak -1", "nodeSoakDurationInMinutes", func(u *armcontainerservice.AgentPoolUpgradeSettings) { u.NodeSoakDurationInMinutes = ptr.To(int32(-1)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := basic(1)
			bad.UpgradeSettings = &armcontainerservice.AgentPoolUpgradeSettings{}
			tc.set(bad.UpgradeSettings)
			_, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "bad", armcontainerservice.AgentPool{Properties: bad}, nil)
			if re := wantError(t, err, http.StatusBadRequest, "InvalidParameter"); !strings.Contains(re.Error(), "properties.upgradeSettings."+tc.prop) {
				t.Fatalf("create: %v, want it to name properties.upgradeSettings.%s", re, tc.prop)
			}
			upd := e.get("workers").Properties
			tc.set(upd.UpgradeSettings)
			_, err = e.pools.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: upd}, nil)
			wantError(t, err, http.StatusBadRequest, "InvalidParameter")
			if got := e.get("workers").Properties.UpgradeSettings; ptr.Deref(got.MaxSurge, "") != "33%" || ptr.Deref(got.DrainTimeoutInMinutes, 0) != 45 {
				t.Fatalf("a refused update changed the settings: %+v", got)
			}
		})
	}
	// The bounds themselves are taken, in place.
	upd := e.get("workers").Properties
	upd.UpgradeSettings = &armcontainerservice.AgentPoolUpgradeSettings{MaxSurge: ptr.To("100%"),
		DrainTimeoutInMinutes: ptr.To(int32(1440)), NodeSoakDurationInMinutes: ptr.To(int32(0))}
	if _, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: upd}, nil); err != nil {
		t.Fatalf("update to the bounds: %v", err)
	}
	e.settle()
	if us := e.get("workers").Properties.UpgradeSettings; ptr.Deref(us.MaxSurge, "") != "100%" || ptr.Deref(us.DrainTimeoutInMinutes, 0) != 1440 {
		t.Fatalf("updated to %+v", us)
	}
}

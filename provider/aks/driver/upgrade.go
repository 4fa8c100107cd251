package driver

import (
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/provider"
)

// upgradeSettings is an agent pool's upgradeSettings with what the spec's
// strategy sets: maxSurge, drainTimeoutInMinutes and
// nodeSoakDurationInMinutes (AgentPoolUpgradeSettings of api-version
// 2025-02-01, all it has). What the strategy leaves unset keeps old's
// value (AKS's default on a create). MaxUnavailable and Force have no
// property here: kpool carries them out (the profile's validateUpgrade
// says why). old is not changed.
func upgradeSettings(old *armcontainerservice.AgentPoolUpgradeSettings, u *provider.Upgrade) *armcontainerservice.AgentPoolUpgradeSettings {
	if u == nil || u.MaxSurge == "" && u.DrainTimeout <= 0 && u.Soak <= 0 {
		return old
	}
	next := &armcontainerservice.AgentPoolUpgradeSettings{}
	if old != nil {
		*next = *old
	}
	if u.MaxSurge != "" {
		next.MaxSurge = ptr.To(u.MaxSurge)
	}
	if u.DrainTimeout > 0 {
		next.DrainTimeoutInMinutes = ptr.To(minutes(u.DrainTimeout))
	}
	if u.Soak > 0 {
		next.NodeSoakDurationInMinutes = ptr.To(minutes(u.Soak))
	}
	return next
}

// minutes is d in whole minutes, rounded up (the profile refuses a
// duration that is not whole minutes; rounding up never shortens a drain).
func minutes(d time.Duration) int32 {
	return int32((d + time.Minute - 1) / time.Minute)
}

// observedUpgrade reads an agent pool's upgradeSettings back as the
// strategy's fields it reports (nil: none). A soak of 0 minutes is AKS's
// default and reads as unset, as the spec's zero does.
func observedUpgrade(us *armcontainerservice.AgentPoolUpgradeSettings) *provider.Upgrade {
	if us == nil {
		return nil
	}
	u := &provider.Upgrade{
		MaxSurge:     ptr.Deref(us.MaxSurge, ""),
		DrainTimeout: time.Duration(ptr.Deref(us.DrainTimeoutInMinutes, 0)) * time.Minute,
		Soak:         time.Duration(ptr.Deref(us.NodeSoakDurationInMinutes, 0)) * time.Minute,
	}
	if *u == (provider.Upgrade{}) {
		return nil
	}
	return u
}

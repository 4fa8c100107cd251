package aks

import (
	"time"

	"github.com/kpool/kpool"
)

// validateUpgrade checks spec.updateStrategy against what an agent pool's
// upgradeSettings take (AgentPoolUpgradeSettings, AKS REST API
// 2025-02-01, the api-version of armcontainerservice/v6 v6.6.0 that the
// driver uses; its bounds as the published model gives them:
// drainTimeoutInMinutes int {minValue: 1, maxValue: 1440},
// nodeSoakDurationInMinutes int {minValue: 0, maxValue: 30}, in
// Azure/bicep-types-az's Microsoft.ContainerService types). kpool's own
// rules (validateStrategy) already keep drainTimeout within 1m-24h, soak
// within 0-30m and maxSurge to a number of at least 1 or 1%-100%, which
// is what AKS takes ("Max surge percent values can be a minimum of 1% and
// a maximum of 100%"; "the max surge value can be a minimum of 1":
// learn.microsoft.com/azure/aks/upgrade-aks-cluster, "Customize node
// surge upgrade"; a larger number than the pool's nodes is taken and
// used as the node count). What is left is the unit: AKS counts both
// durations in whole minutes, so a duration that is not one is refused
// here rather than rounded behind the user's back.
//
// maxUnavailable is not in that api-version (it came with later ones), so
// it is not sent: kpool's controllers carry it out where they roll nodes
// themselves, and AKS's own version upgrades keep surging (maxSurge).
// onStuck Force has no counterpart either (undrainableNodeBehavior, of
// later api-versions, cordons or schedules, it never forces): nothing is
// sent for it.
func validateUpgrade(fe *kpool.FieldErrors, u *kpool.UpdateStrategy) {
	if u == nil {
		return
	}
	const f = "spec.updateStrategy."
	for _, d := range []struct{ field, value, prop string }{
		{"drainTimeout", u.DrainTimeout, "drainTimeoutInMinutes"},
		{"soak", u.Soak, "nodeSoakDurationInMinutes"},
	} {
		v, err := time.ParseDuration(d.value)
		if d.value == "" || err != nil {
			continue // kpool's own rules report it
		}
		if v%time.Minute != 0 {
			fe.Add(f+d.field, "%s is not a whole number of minutes: AKS takes upgradeSettings.%s in minutes (AgentPoolUpgradeSettings); give %s or %s",
				v, d.prop, v.Truncate(time.Minute), v.Truncate(time.Minute)+time.Minute)
		}
	}
}

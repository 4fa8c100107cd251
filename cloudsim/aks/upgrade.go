package aks

import (
	"strconv"
	"strings"

	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/sim"
)

// checkUpgrade checks an agent pool's upgradeSettings as AKS does
// (AgentPoolUpgradeSettings): maxSurge a whole number of nodes of at
// least 1 or a percentage of 1% to 100% ("Max surge percent values can be
// a minimum of 1% and a maximum of 100%"; "the max surge value can be a
// minimum of 1 and a maximum value equal to the number of nodes in your
// node pool. You can set larger values": learn.microsoft.com/azure/aks/
// upgrade-aks-cluster, "Customize node surge upgrade"; 0 is taken only
// with a maxUnavailable, which api-version 2025-02-01 does not have);
// drainTimeoutInMinutes 1-1440 and nodeSoakDurationInMinutes 0-30 (the
// published model: int {minValue: 1, maxValue: 1440} and {minValue: 0,
// maxValue: 30}, Azure/bicep-types-az's Microsoft.ContainerService
// types). The answer is 400 InvalidParameter naming the property, as for
// the model's other bounds; its wording is the emulator's.
func checkUpgrade(p *props) *sim.Reply {
	us := p.UpgradeSettings
	if us == nil {
		return nil
	}
	if us.MaxSurge != nil && !validSurge(*us.MaxSurge) {
		return invalid("upgradeSettings.maxSurge", "%q is neither a number of nodes of at least 1 nor a percentage from 1%% to 100%%", *us.MaxSurge)
	}
	if d := ptr.Deref(us.DrainTimeoutInMinutes, 1); d < 1 || d > 1440 {
		return invalid("upgradeSettings.drainTimeoutInMinutes", "%d is outside the allowed range 1 to 1440", d)
	}
	if d := ptr.Deref(us.NodeSoakDurationInMinutes, 0); d < 0 || d > 30 {
		return invalid("upgradeSettings.nodeSoakDurationInMinutes", "%d is outside the allowed range 0 to 30", d)
	}
	return nil
}

// validSurge reports whether v is a maxSurge AKS takes: "" (unset, its
// default), a number of at least 1, or 1%-100%.
func validSurge(v string) bool {
	if v == "" {
		return true
	}
	num, pct := strings.CutSuffix(v, "%")
	n, err := strconv.Atoi(num)
	if err != nil || num != strconv.Itoa(n) || n < 1 {
		return false
	}
	return !pct || n <= 100
}

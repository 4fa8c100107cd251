package eks

import (
	"strconv"
	"strings"

	"github.com/kpool/kpool"
)

// MaxUnavailableNodes is the most nodes a node group's
// updateConfig.maxUnavailable takes (NodegroupUpdateConfig, EKS API
// Reference: "The maximum number is 100"; AWS::EKS::Nodegroup
// UpdateConfig: MaxUnavailable minimum 1, MaxUnavailablePercentage 1 to
// 100).
const MaxUnavailableNodes = 100

// validateUpgrade checks spec.updateStrategy against a node group's
// updateConfig. EKS takes maxUnavailable as 1-100 nodes or 1%-100%
// (maxUnavailablePercentage, which kpool's own rules already bound); a
// number of nodes above 100 is refused here, as EKS would refuse it.
//
// maxUnavailable 0 (or 0%), kpool's default, is below what EKS takes: it
// is not sent, the node group keeps EKS's default of one node, and
// kpool's controllers keep to 0 where they roll nodes themselves (a
// replacement). EKS's own version updates launch new nodes before they
// drain old ones (managed-node-update-behavior.html, scale-up phase), so
// the pool keeps its count there too. EKS has no surge, drain timeout or
// soak setting: kpool carries those out; onStuck Force is the force flag
// of the driver's UpdateNodegroupVersion.
func validateUpgrade(fe *kpool.FieldErrors, u *kpool.UpdateStrategy) {
	if u == nil || strings.HasSuffix(u.MaxUnavailable, "%") {
		return
	}
	if n, err := strconv.Atoi(u.MaxUnavailable); err == nil && n > MaxUnavailableNodes {
		fe.Add("spec.updateStrategy.maxUnavailable", "%d nodes is more than EKS takes: a node group's updateConfig.maxUnavailable is 1 to %d nodes "+
			"(NodegroupUpdateConfig, EKS API Reference); give at most %d, or a percentage (maxUnavailablePercentage, 1%%-100%%)", n, MaxUnavailableNodes, MaxUnavailableNodes)
	}
}

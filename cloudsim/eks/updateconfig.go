package eks

import (
	"github.com/kpool/kpool/cloudsim/sim"
)

// maxUnavailableNodes is the most nodes updateConfig.maxUnavailable takes.
const maxUnavailableNodes = 100

// checkUpdateConfig checks a node group's updateConfig, on
// CreateNodegroup and UpdateNodegroupConfig: exactly one of
// maxUnavailable and maxUnavailablePercentage ("This value or
// maxUnavailablePercentage is required to have a value"), maxUnavailable
// 1 to 100 nodes ("The maximum number is 100") and
// maxUnavailablePercentage 1 to 100 (NodegroupUpdateConfig in the EKS API
// Reference and the SDK model, aws-sdk-go-v2/service/eks types.go; the
// minimums and the percentage's maximum as AWS::EKS::Nodegroup
// UpdateConfig gives them: MaxUnavailable minimum 1,
// MaxUnavailablePercentage minimum 1, maximum 100). The answer is 400
// InvalidParameterException; its wording is the emulator's.
func checkUpdateConfig(c *cluster, name string, uc *updateConfig) *sim.Reply {
	switch {
	case (uc.MaxUnavailable == nil) == (uc.MaxUnavailablePercentage == nil):
		return invalid(c, name, "updateConfig: give exactly one of maxUnavailable and maxUnavailablePercentage.")
	case uc.MaxUnavailable != nil && (*uc.MaxUnavailable < 1 || *uc.MaxUnavailable > maxUnavailableNodes):
		return invalid(c, name, "updateConfig.maxUnavailable %d is outside 1 to %d.", *uc.MaxUnavailable, maxUnavailableNodes)
	case uc.MaxUnavailablePercentage != nil && (*uc.MaxUnavailablePercentage < 1 || *uc.MaxUnavailablePercentage > 100):
		return invalid(c, name, "updateConfig.maxUnavailablePercentage %d is outside 1 to 100.", *uc.MaxUnavailablePercentage)
	}
	return nil
}

package eks

import (
	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

var _ provider.Accounts = Profile{}

// Account: EC2 (and EKS) throttle each AWS account per region; the
// account is the one the node role's ARN names, or the credential when
// the ARN names none.
func (Profile) Account(c *kpool.Cluster) provider.Account {
	a := provider.Account{Platform: kpool.PlatformAWS, Key: provider.CredentialKey(c)}
	if aw := c.Spec.Platform.AWS; aw != nil {
		if id := Account(aw.NodeRoleARN); id != "" {
			a.Key = id
		}
		a.Region = aw.Region
	}
	return a
}

// Quota is half of EC2's bucket for non-mutating (Describe*) actions, 100
// tokens refilled at 20/s per account and region
// (https://docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html);
// the EKS API publishes no rate of its own, and the writes kpool makes are
// few: 2/s, a burst of 20, is kpool's own choice, well under any bucket
// of mutating actions.
func (Profile) Quota() provider.Quota {
	return provider.Quota{Reads: 10, ReadBurst: 50, Writes: 2, WriteBurst: 20}
}

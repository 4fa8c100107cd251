package oke

import (
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

var _ provider.Accounts = Profile{}

// Account: OCI throttles a tenancy's requests in each region; the tenancy
// is the credential's (an API key belongs to a user of one tenancy), so a
// cluster's calls are charged to its credential in its region.
func (Profile) Account(c *kpool.Cluster) provider.Account {
	a := provider.Account{Platform: kpool.PlatformOCI, Key: provider.CredentialKey(c)}
	if o := c.Spec.Platform.OCI; o != nil {
		a.Region = strings.ToLower(o.Region)
	}
	return a
}

// Quota is kpool's own choice: Oracle publishes no request rate, only that
// a throttled request is answered 429 TooManyRequests
// (https://docs.oracle.com/en-us/iaas/Content/API/References/apierrors.htm);
// the budget halves on such an answer and finds the rate from there.
func (Profile) Quota() provider.Quota {
	return provider.Quota{Reads: 10, ReadBurst: 20, Writes: 2, WriteBurst: 10}
}

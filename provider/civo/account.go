package civo

import (
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

var _ provider.Accounts = Profile{}

// Account: Civo counts an API key's requests; kpool knows no account id
// for a key, so the credential (never the key itself) names it, per
// region, since each region is an API of its own.
func (Profile) Account(c *kpool.Cluster) provider.Account {
	a := provider.Account{Platform: kpool.PlatformCivo, Key: provider.CredentialKey(c)}
	if cv := c.Spec.Platform.Civo; cv != nil {
		a.Region = strings.ToLower(cv.Region)
	}
	return a
}

// Quota is kpool's own choice: Civo's API reference publishes no request
// rate (https://www.civo.com/api) and answers 429 when it throttles; the
// budget halves on such an answer and finds the rate from there.
func (Profile) Quota() provider.Quota {
	return provider.Quota{Reads: 5, ReadBurst: 10, Writes: 1, WriteBurst: 5}
}

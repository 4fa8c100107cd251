package aks

import (
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

var _ provider.Accounts = Profile{}

// Account: ARM counts requests per subscription and region (its token
// buckets since 2024), so a cluster's calls are charged to its
// subscription in its location.
func (Profile) Account(c *kpool.Cluster) provider.Account {
	a := provider.Account{Platform: kpool.PlatformAzure, Key: provider.CredentialKey(c)}
	if az := c.Spec.Platform.Azure; az != nil {
		a.Key, a.Region = strings.ToLower(az.SubscriptionID), strings.ToLower(az.Location)
	}
	return a
}

// Quota is half of ARM's subscription buckets, the rest left to the other
// tools of the subscription: reads 250 tokens refilled at 25/s, writes 200
// at 10/s, per subscription, region and service principal
// (https://learn.microsoft.com/en-us/azure/azure-resource-manager/management/request-limits-and-throttling).
func (Profile) Quota() provider.Quota {
	return provider.Quota{Reads: 12.5, ReadBurst: 125, Writes: 5, WriteBurst: 100}
}

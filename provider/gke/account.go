package gke

import (
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

var _ provider.Accounts = Profile{}

// Account: the Kubernetes Engine and Compute Engine APIs count requests per
// project, whatever the region.
func (Profile) Account(c *kpool.Cluster) provider.Account {
	a := provider.Account{Platform: kpool.PlatformGCP, Key: provider.CredentialKey(c)}
	if g := c.Spec.Platform.GCP; g != nil {
		a.Key = strings.ToLower(g.ProjectID)
	}
	return a
}

// Quota is about half of the smaller of the project's quotas the driver
// spends: Compute Engine's read requests, 1,500 a minute (25/s), and its
// default (mutation) group, 1,500 a minute
// (https://cloud.google.com/compute/docs/api-rate-limits); the Kubernetes
// Engine API allows 3,000 a minute for reads and writes together
// (https://cloud.google.com/kubernetes-engine/quotas). Bursts are small:
// Google counts by the minute, not by a bucket.
func (Profile) Quota() provider.Quota {
	return provider.Quota{Reads: 12, ReadBurst: 60, Writes: 5, WriteBurst: 30}
}

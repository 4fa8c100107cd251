// Package k3s is k3s as kpool knows it: a cluster without a node-pool
// concept, where every pool operation is NOT_IMPLEMENTED.
package k3s

import (
	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// Type is the platform k3s clusters are on.
const Type = kpool.PlatformK3s

// Profile is k3s's provider.Profile: no pools.
var Profile provider.Profile = provider.NoPools{Platform: Type, Name: "k3s"}

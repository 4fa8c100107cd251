// Package k3s is k3s as kpool knows it: a cluster without a node-pool
// concept, where every pool operation is NOT_IMPLEMENTED.
package k3s

import (
	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// Type is the platform k3s clusters are on.
const Type = kpool.PlatformK3s

// profile is k3s's profile type: a platform without pools
// (provider.NoPools), of this package, where the catalog finds its folder.
type profile struct{ provider.NoPools }

// Profile is k3s's provider.Profile: no pools.
var Profile provider.Profile = profile{provider.NoPools{Platform: Type, Name: "k3s",
	Instead: "k3s nodes join and leave the cluster themselves (k3s agent with the server's URL and token), so add or remove agents with the tool that provisions their machines"}}

// Demo is the k3s cluster kpool dev registers: a platform without node
// pools, so that a new user meets the boundary (every pool operation is
// NOT_IMPLEMENTED) next to the clouds that have them.
func Demo() kpool.Cluster {
	return kpool.Cluster{Name: "demo-k3s", Spec: kpool.ClusterSpec{Platform: kpool.ClusterPlatform{Type: Type}}}
}

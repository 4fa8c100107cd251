// Package microvm is microVM clusters (flintlock, as the CAPMVM ADR has
// them) as kpool knows them: no node-pool concept, so every pool operation is
// NOT_IMPLEMENTED, deterministically.
package microvm

import (
	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// Type is the platform microVM clusters are on.
const Type = kpool.PlatformMicroVM

// profile is microVM's profile type: a platform without pools
// (provider.NoPools), of this package, where the catalog finds its folder.
type profile struct{ provider.NoPools }

// Profile is the microVM platform's provider.Profile: no pools.
var Profile provider.Profile = profile{provider.NoPools{Platform: Type, Name: "microVM",
	Instead: "a microVM cluster's machines are Cluster API MicrovmMachines on flintlock hosts, so scale its MachineDeployment (or create another) instead"}}

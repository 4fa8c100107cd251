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

// Profile is the microVM platform's provider.Profile: no pools.
var Profile provider.Profile = provider.NoPools{Platform: Type, Name: "microVM",
	Instead: "a microVM cluster's machines are Cluster API MicrovmMachines on flintlock hosts, so scale its MachineDeployment (or create another) instead"}

package aks

import (
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/sim"
)

// powerOf is a pool's power state; Running when it has none.
func powerOf(p *props) armcontainerservice.Code {
	if p == nil || p.PowerState == nil || p.PowerState.Code == nil {
		return armcontainerservice.CodeRunning
	}
	return *p.PowerState.Code
}

// nodesOf is the node count a pool's operation moves to: none while it is
// stopped (its nodes are deallocated), its count otherwise.
func nodesOf(p *props) int {
	if powerOf(p) == armcontainerservice.CodeStopped {
		return 0
	}
	return int(ptr.Deref(p.Count, 0))
}

// applyPower applies a PUT's properties.powerState.code to next, the
// pool it leads to: Stopped stops an existing pool (its nodes are
// deallocated), Running starts it again (armcontainerservice's examples
// AgentPools_Stop.json and AgentPools_Start.json send powerState alone).
// A pool is created Running; a System pool cannot be stopped
// (learn.microsoft.com/azure/aks/start-stop-nodepools).
func applyPower(existing *pool, next *props, req *props) *sim.Reply {
	if req == nil || req.PowerState == nil || req.PowerState.Code == nil {
		return nil
	}
	code := *req.PowerState.Code
	if rep := enum("powerState.code", &code, armcontainerservice.PossibleCodeValues()); rep != nil {
		return rep
	}
	if existing == nil {
		if code != armcontainerservice.CodeRunning {
			return invalid("powerState.code", "an agent pool is created Running; stop it once it exists")
		}
		return nil
	}
	if code == armcontainerservice.CodeStopped && powerOf(existing.props) != code &&
		ptr.Deref(next.Mode, "") == armcontainerservice.AgentPoolModeSystem {
		return targetedError(http.StatusBadRequest, "OperationNotAllowed", "properties.powerState",
			"Agent pool '%s' is a System agent pool: System agent pools cannot be stopped.", existing.name)
	}
	next.PowerState = &armcontainerservice.PowerState{Code: ptr.To(code)}
	return nil
}

package driver

import (
	"fmt"
	"strings"

	"github.com/kpool/kpool/provider"
)

// conditionWorkers is the cluster condition that says whether every
// pool's nodes are up (the civo CLI's "All Workers Up").
const conditionWorkers = "WorkerNodesReady"

// withShortage reports a pool short of capacity: Civo's pool carries no
// reason for an instance in ERROR, its cluster's WorkerNodesReady
// condition does: False with the reason out_of_capacity, its message a
// "pool <id>: ..." part for each pool whose nodes could not start ("; "
// between them). A pool named there that has fewer running nodes than
// its count gets the Shortage (Civo has no zones: none named) and the
// part as its Message; a pool whole again (capped at what it has, or
// rebuilt once capacity came back) gets none.
func withShortage(p *provider.Pool, c *Cluster) {
	if c == nil || p.ReadyNodes >= p.Count {
		return
	}
	for _, cond := range c.Conditions {
		if cond.Type != conditionWorkers || !strings.EqualFold(cond.Status, "False") || cond.Reason != codeCapacity {
			continue
		}
		for _, part := range strings.Split(cond.Message, "; ") {
			if strings.HasPrefix(part, "pool "+p.ProviderName+": ") {
				msg := provider.FirstLine(part)
				p.Shortage = &provider.Shortage{Code: cond.Reason, Message: msg}
				p.Message = fmt.Sprintf("%d of %d nodes running: %s", p.ReadyNodes, p.Count, msg)
				return
			}
		}
	}
}

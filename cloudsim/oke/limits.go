package oke

import (
	"net/http"

	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/sim"
)

// Limits are OKE's service limits the emulator enforces (Kubernetes Engine
// Limits, docs.oracle.com/en-us/iaas/Content/ContEng/Reference/
// contengservicelimits.htm): a create or update that would go past one is
// refused with 400 LimitExceeded, the code OCI's API Errors page gives for
// "exceeds the Oracle-defined limit for this tenancy for this resource
// type". 0 is no limit, but for NodesPerPool, whose 0 is 1000.
type Limits struct {
	// NodePoolsPerCluster caps the node pools of a cluster (those not
	// DELETED).
	NodePoolsPerCluster int
	// NodesPerPool caps a node pool's size: 1000 managed nodes, as the
	// limits page and "Considerations when Defining Enhanced Clusters with
	// Large Numbers of Managed Nodes" give it.
	NodesPerPool int
	// NodesPerCluster caps the nodes of all of a cluster's pools.
	NodesPerCluster int
}

// limitExceeded answers 400 LimitExceeded.
func limitExceeded(format string, args ...any) *sim.Reply {
	return failf(http.StatusBadRequest, errLimitExceeded, format, args...)
}

// checkLimits checks a node pool of size nodes in cluster c against the
// limits: self is the pool being updated, nil for a create.
func (s *Server) checkLimits(c *cluster, self *pool, size int) *sim.Reply {
	l := s.limits
	perPool := l.NodesPerPool
	if perPool <= 0 {
		perPool = 1000
	}
	if size > perPool {
		return limitExceeded("The node pool size %d exceeds the service limit of %d nodes per node pool.", size, perPool)
	}
	pools, nodes := 0, size
	for _, p := range s.pools {
		if p.cluster != c || p == self || p.lifecycle() == stateDeleted {
			continue
		}
		pools++
		nodes += ptr.Deref(p.np.NodeConfigDetails.Size, 0)
	}
	if self == nil && l.NodePoolsPerCluster > 0 && pools >= l.NodePoolsPerCluster {
		return limitExceeded("Cluster %s already has %d node pools: the service limit is %d node pools per cluster.", c.ID, pools, l.NodePoolsPerCluster)
	}
	if l.NodesPerCluster > 0 && nodes > l.NodesPerCluster {
		return limitExceeded("Cluster %s would have %d nodes: the service limit is %d nodes per cluster.", c.ID, nodes, l.NodesPerCluster)
	}
	return nil
}

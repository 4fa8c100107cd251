package dashboard

import (
	"time"

	"github.com/kpool/kpool"
)

// reach is what the pages say of a cluster's health: its Reachable
// condition, which the controllers set on each list of its pools.
type reach struct {
	// State is reachable, unreachable, or unknown while no controller
	// has looked at the cluster.
	State           string
	Reason, Message string
	Since           time.Time // the condition's last transition
}

// reachOf reads a cluster's Reachable condition.
func reachOf(st kpool.ClusterStatus) reach {
	c := st.Condition(kpool.ConditionReachable)
	switch {
	case c == nil || c.Status == kpool.ConditionUnknown:
		return reach{State: "unknown"}
	case c.Status == kpool.ConditionTrue:
		return reach{State: "reachable", Reason: c.Reason, Since: c.LastTransitionTime}
	}
	return reach{State: "unreachable", Reason: c.Reason, Message: c.Message, Since: c.LastTransitionTime}
}

// unreachable counts the clusters kpool cannot reach.
func unreachable(cs []*kpool.Cluster) int {
	n := 0
	for _, c := range cs {
		if reachOf(c.Status).State == "unreachable" {
			n++
		}
	}
	return n
}

package gke

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"

	container "google.golang.org/api/container/v1"

	"github.com/kpool/kpool/cloudsim/sim"
)

// Limits are the quotas and limits of a project and its clusters that the
// emulator enforces; zero means none.
type Limits struct {
	// Pools is the most node pools a cluster may have. GKE publishes no
	// fixed number on its quotas page; tests set one to see the answer.
	Pools int
	// ClusterNodes is the most nodes a cluster may have: 5,000 unless a
	// cluster size quota is lifted
	// (https://cloud.google.com/kubernetes-engine/quotas, "Nodes per
	// cluster").
	ClusterNodes int
	// RegionalCPUs is the project's Compute Engine CPUS quota in the
	// cluster's region (https://cloud.google.com/compute/resource-usage),
	// which a pool's nodes count against by their machine type.
	RegionalCPUs int
}

// DefaultLimits are GKE's published defaults.
func DefaultLimits() Limits { return Limits{ClusterNodes: 5000} }

// gpuTaint is the taint GKE puts on a GPU node pool added to a cluster
// that already runs a node pool without GPUs
// (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus, "GKE
// automatically taints the GPU nodes"), which the API reports in the
// pool's config.taints.
var gpuTaint = container.NodeTaint{Key: "nvidia.com/gpu", Value: "present", Effect: "NO_SCHEDULE"}

// isGPUTaint reports whether t is GKE's own GPU taint.
func isGPUTaint(t *container.NodeTaint) bool {
	return t != nil && t.Key == gpuTaint.Key && t.Value == gpuTaint.Value && t.Effect == gpuTaint.Effect
}

// addGPUTaint gives a new pool with accelerators GKE's taint when the
// cluster has a pool without them.
func addGPUTaint(c *cluster, cfg *container.NodeConfig) {
	if len(cfg.Accelerators) == 0 || slices.ContainsFunc(cfg.Taints, isGPUTaint) {
		return
	}
	for _, p := range c.pools {
		if p.np.Config == nil || len(p.np.Config.Accelerators) == 0 {
			t := gpuTaint
			cfg.Taints = append(cfg.Taints, &t)
			return
		}
	}
}

// maxLabelChars is the most characters a request's node labels may have,
// keys and values together (container-api.json, NodeConfig.labels: "This
// field supports up to 1,024 total characters in a single request").
const maxLabelChars = 1024

func checkLabelSize(field string, labels map[string]string) *sim.Reply {
	n := 0
	for k, v := range labels {
		n += len(k) + len(v)
	}
	if n > maxLabelChars {
		return invalid(field, "Node labels may have up to %d total characters in a single request, got %d.", maxLabelChars, n)
	}
	return nil
}

// clusterBusy is GKE's answer to an operation the cluster's running ones
// forbid, or nil: GKE runs one cluster-level operation at a time, or one
// operation per node pool
// (https://cloud.google.com/kubernetes-engine/docs/troubleshooting/concurrent-operations).
// Creating and deleting a node pool are the cluster's (wide), and wait for
// every other operation; any other waits for them and for its own pool's.
// A delete may cancel a create of its own pool.
func clusterBusy(c *cluster, p *pool, wide, cancelsCreate bool) *sim.Reply {
	for _, q := range c.sorted() {
		if q.op == nil {
			continue
		}
		kind := infoOf(q.op).opType
		own := q == p
		qWide := kind == opCreate || kind == opDelete
		if own && cancelsCreate && kind == opCreate {
			continue
		}
		if own || wide || qWide {
			return detailed(codeFailedPrecondition, []any{errorInfo("OPERATION_IN_PROGRESS")},
				"Operation operation-%s is currently %s node pool %q on cluster %s. Please wait and try again once it is done.",
				q.op.ID, acting(kind), q.np.Name, c.name)
		}
	}
	return nil
}

// acting words an operation type as GKE's concurrency errors do.
func acting(kind string) string {
	switch kind {
	case opCreate:
		return "creating"
	case opDelete:
		return "deleting"
	case opUpgrade:
		return "upgrading"
	}
	return "updating"
}

// cpusOf is a machine type's vCPUs as its name says (n1-standard-4: 4;
// e2-medium: 2, https://cloud.google.com/compute/docs/general-purpose-machines).
func cpusOf(machineType string) int {
	if m := trailingCPUs.FindStringSubmatch(machineType); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return map[string]int{"e2-micro": 2, "e2-small": 2, "e2-medium": 2, "f1-micro": 1, "g1-small": 1}[machineType]
}

var trailingCPUs = regexp.MustCompile(`-(\d+)(?:-lssd)?$`)

// quotaFailure answers a limit or quota a request would exceed:
// RESOURCE_EXHAUSTED with a QuotaFailure, as Google's error model has it
// (https://cloud.google.com/apis/design/errors#error_details).
func quotaFailure(subject, format string, args ...any) *sim.Reply {
	msg := fmt.Sprintf(format, args...)
	return detailed(codeResourceExhausted, []any{errorInfo("QUOTA_EXCEEDED"),
		map[string]any{"@type": "type.googleapis.com/google.rpc.QuotaFailure",
			"violations": []map[string]string{{"subject": subject, "description": msg}}}}, "%s", msg)
}

// checkQuota refuses a pool change that takes the cluster past its limits
// or the project past its regional CPUs: pools is the cluster's pool count
// after it, nodes its nodes, and cpus the CPUs its pools use.
func (s *Server) checkQuota(c *cluster, change *pool, perZone int, locations []string, machineType string) *sim.Reply {
	l := s.limits
	pools, nodes, cpus := 0, 0, 0
	for _, q := range c.pools {
		if q == change {
			continue
		}
		pools++
		nodes += q.nodes()
		cpus += q.nodes() * cpusOf(q.np.Config.MachineType)
	}
	n := perZone * len(locations)
	pools, nodes, cpus = pools+1, nodes+n, cpus+n*cpusOf(machineType)
	switch {
	case l.Pools > 0 && pools > l.Pools:
		return quotaFailure("projects/"+c.project, "Cluster %s may have at most %d node pools (kpool cloudsim limit); it would have %d.", c.name, l.Pools, pools)
	case l.ClusterNodes > 0 && nodes > l.ClusterNodes:
		return quotaFailure("projects/"+c.project, "Cluster %s may have at most %d nodes; it would have %d. Running more requires lifting the cluster size quota.", c.name, l.ClusterNodes, nodes)
	case l.RegionalCPUs > 0 && cpus > l.RegionalCPUs:
		// Compute Engine's quota, as GKE passes it on: 403.
		return errorReply(codePermissionDenied,
			"Insufficient regional quota to satisfy request: resource \"CPUS\": request requires '%.1f' and is short '%.1f'. project has a quota of '%.1f' with '%.1f' available. View and manage quotas at https://console.cloud.google.com/iam-admin/quotas?usage=USED&project=%s.",
			float64(n*cpusOf(machineType)), float64(cpus-l.RegionalCPUs), float64(l.RegionalCPUs), float64(max(l.RegionalCPUs-(cpus-n*cpusOf(machineType)), 0)), c.project)
	}
	return nil
}

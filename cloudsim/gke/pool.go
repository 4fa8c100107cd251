package gke

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"time"

	container "google.golang.org/api/container/v1"

	"github.com/kpool/kpool/cloudsim/sim"
)

// Node pool statuses (NodePool.status) and operation statuses
// (Operation.status), as container-api.json names them.
const (
	statusProvisioning     = "PROVISIONING"
	statusRunning          = "RUNNING"
	statusRunningWithError = "RUNNING_WITH_ERROR"
	statusReconciling      = "RECONCILING"
	statusStopping         = "STOPPING"
	statusError            = "ERROR"

	opPending = "PENDING"
	opRunning = "RUNNING"
	opDone    = "DONE"
)

// Operation types (Operation.operationType).
const (
	opCreate     = "CREATE_NODE_POOL"
	opDelete     = "DELETE_NODE_POOL"
	opSetSize    = "SET_NODE_POOL_SIZE"
	opUpgrade    = "UPGRADE_NODES"
	opUpdate     = "UPDATE_CLUSTER"
	opManagement = "SET_NODE_POOL_MANAGEMENT"
)

type cluster struct {
	project, location, name string
	version                 string
	locations               []string // the zones pools default to
	pools                   map[string]*pool
	// uid is GKE's cluster id (Cluster.id), which names its Kubernetes
	// API under KubePrefix; kubeEndpoint, when set, is the endpoint
	// clusters.get names instead of the emulator's (SetKubeEndpoint).
	uid, kubeEndpoint string
	// synced are the pools whose nodes the Kubernetes API has, with the
	// key of what it was last given (syncNodes).
	synced map[string]string
	// capacity is the engine's (sim.Capacity), which the pools' instance
	// groups take their instances from.
	capacity *sim.Capacity
}

func (c *cluster) path() string {
	return "projects/" + c.project + "/locations/" + c.location + "/clusters/" + c.name
}

type pool struct {
	cluster *cluster
	// np is the pool as GKE returns it, except what is computed: status,
	// statusMessage, conditions, etag, selfLink, instanceGroupUrls.
	np      *container.NodePool
	perZone int // the node count each zone's instance group targets
	// removed are, by zone, the instances deleteInstances took out of the
	// zone's group since its size was last set (setSize): its target
	// size is perZone less them.
	removed map[string]int
	ready   int    // the nodes there are when idle (at the start of op)
	status  string // when idle: RUNNING, RUNNING_WITH_ERROR or ERROR
	message string // statusMessage
	cond    []*container.StatusCondition
	etag    string
	seq     int
	op      *sim.Operation
	// insts are the pool's instances (its nodes) by zone, oldest first;
	// making is the one being made (NotReady), nil when none is.
	insts  map[string][]*instance
	making *instance
	made   int // the instances made, which their names are drawn from
	// template is the id of the upgrade that made the pool's instance
	// template ("" for its first), which its instances are made from.
	template string
	// healAt is when a RUNNING_WITH_ERROR pool is RUNNING again: its
	// instance groups keep trying to reach their size, and GKE clears the
	// error once they have.
	healAt time.Time
	// held is the capacity the pool's instance groups hold, by offering
	// (capacity.go); stockout says they failed to get all they target and
	// keep trying, the pool RUNNING_WITH_ERROR (or ERROR) until they have.
	held     map[sim.Offering]int
	stockout bool
}

// heal makes a RUNNING_WITH_ERROR pool whose instance groups have caught
// up RUNNING again.
func (p *pool) heal(now time.Time) {
	if p.op == nil && p.status == statusRunningWithError && sim.Due(p.healAt, now) {
		p.status, p.message, p.cond, p.healAt = statusRunning, "", nil, time.Time{}
		p.ready = p.goalIn(p.np.Locations, p.np.Config)
	}
	p.retry()
}

// nodes is the node count the pool targets: its groups' target sizes.
func (p *pool) nodes() int { return p.nodesIn(p.np.Locations) }

// nodesIn is the node count of the pool's groups in zones.
func (p *pool) nodesIn(zones []string) int {
	n := 0
	for _, z := range zones {
		n += p.target(z)
	}
	return n
}

// target is the target size of the pool's group in a zone.
func (p *pool) target(zone string) int { return max(p.perZone-p.removed[zone], 0) }

// setPerZone sets every zone's group to n instances, as setSize does
// (instances deleteInstances took count no more).
func (p *pool) setPerZone(n int) { p.perZone, p.removed = n, nil }

func (p *pool) path() string { return p.cluster.path() + "/nodePools/" + p.np.Name }

// readyAt is the node count at t.
func (p *pool) readyAt(t time.Time) int {
	if p.op == nil {
		return p.ready
	}
	return p.op.Nodes(t)
}

// group is the name of the pool's instance group in a zone, as GKE names
// them: gke-CLUSTER-POOL-HASH-grp, the hash its own in each zone.
func (p *pool) group(zone string) string { return p.base(zone) + "-grp" }

// base is the base instance name of the pool's group in a zone
// (gke-CLUSTER-POOL-HASH), which its instances' names start with: GKE
// cuts the cluster's name (then the pool's) so that gke-CLUSTER-POOL is
// at most 37 characters (README.md, "Kubernetes API and nodes").
func (p *pool) base(zone string) string {
	h := fnv.New32a()
	h.Write([]byte(p.path() + "/" + zone))
	cl, np := p.cluster.name, p.np.Name
	if over := len("gke-") + len(cl) + 1 + len(np) - maxPrefix; over > 0 {
		cut := min(over, len(cl)-1)
		cl, over = cl[:len(cl)-cut], over-cut
		np = np[:len(np)-max(over, 0)]
	}
	return fmt.Sprintf("gke-%s-%s-%08x", cl, np, h.Sum32())
}

// maxPrefix is the longest gke-CLUSTER-POOL of a group's name.
const maxPrefix = 37

// view is the pool as GKE returns it; base is the URL the request came to,
// for its links ("" for none).
func (p *pool) view(base string) *container.NodePool {
	out := sim.CloneJSON(p.np)
	out.Status, out.StatusMessage, out.Conditions = p.status, p.message, p.cond
	if p.op != nil {
		switch infoOf(p.op).opType {
		case opCreate:
			out.Status = statusProvisioning
		case opDelete:
			out.Status = statusStopping
		default:
			out.Status = statusReconciling
		}
	}
	out.Etag = p.etag
	if base != "" {
		out.SelfLink = base + "/v1/" + p.path()
		for _, z := range p.np.Locations {
			out.InstanceGroupUrls = append(out.InstanceGroupUrls,
				fmt.Sprintf("%s/compute/v1/projects/%s/zones/%s/instanceGroupManagers/%s", base, p.cluster.project, z, p.group(z)))
		}
	}
	return out
}

// sorted returns a cluster's pools in the order they were created.
func (c *cluster) sorted() []*pool {
	return slices.SortedFunc(maps.Values(c.pools), func(a, b *pool) int { return cmp.Compare(a.seq, b.seq) })
}

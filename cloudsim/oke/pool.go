package oke

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/sim"
)

// Node pool lifecycle states (NodePoolLifecycleStateEnum), node lifecycle
// states (NodeLifecycleStateEnum) and work request operation types, as the
// SDK names them.
const (
	stateCreating       = string(ce.NodePoolLifecycleStateCreating)
	stateActive         = string(ce.NodePoolLifecycleStateActive)
	stateUpdating       = string(ce.NodePoolLifecycleStateUpdating)
	stateDeleting       = string(ce.NodePoolLifecycleStateDeleting)
	stateDeleted        = string(ce.NodePoolLifecycleStateDeleted)
	stateFailed         = string(ce.NodePoolLifecycleStateFailed)
	stateNeedsAttention = string(ce.NodePoolLifecycleStateNeedsAttention)

	opCreate = string(ce.WorkRequestOperationTypeNodepoolCreate)
	opUpdate = string(ce.WorkRequestOperationTypeNodepoolUpdate)
	opDelete = string(ce.WorkRequestOperationTypeNodepoolDelete)
)

// deletedKept is how long a DELETED node pool is still returned by GET and
// list, as OCI keeps deleted resources visible for a while.
const deletedKept = time.Hour

// pool is a node pool and what only the emulator knows of it.
type pool struct {
	id      string
	cluster *cluster
	// np is the pool's configuration as OKE stores it; lifecycle and
	// nodes are added by view.
	np        ce.NodePool
	state     string // when no operation runs: ACTIVE, FAILED, NEEDS_ATTENTION, DELETED
	details   string // lifecycleDetails
	created   time.Time
	seq       int // order of creation
	op        *sim.Operation
	work      *work
	nodes     []*node
	healAt    time.Time // when a NEEDS_ATTENTION pool heals
	deletedAt time.Time
	cycle     *cycle // the node cycling its update runs (cycle.go)
}

// NodeConfig is the configuration a node was created with: OKE applies a
// pool's changes to the nodes created afterwards only, so older nodes keep
// theirs. Of it, OKE's Node shows kubernetesVersion only (and the node's
// freeform tags); the rest is the compute instance's.
type NodeConfig struct {
	KubernetesVersion   string
	Shape               string
	OCPUs, MemoryInGBs  float32
	ImageID             string
	BootVolumeSizeInGBs int64
	Preemptible         bool
	Labels              map[string]string
}

type node struct {
	id, name, ad, subnet, faultDomain, ip string
	state                                 string
	tags                                  map[string]string
	cfg                                   NodeConfig
	del                                   *work         // its DeleteNode's, while it runs (deletenode.go)
	nodeErr                               *ce.NodeError // why it could not launch (capacity.go)
}

// work is a work request, with the errors and log entries
// ListWorkRequestErrors and ListWorkRequestLogs answer.
type work struct {
	id, typ, compartment, poolID string
	// cluster and addon name the add-on of an add-on's work request
	// (poolID is empty then).
	cluster, addon string
	accepted       time.Time
	seq            int
	op             *sim.Operation
	errs           []ce.WorkRequestError
	logs           []ce.WorkRequestLogEntry
	// settled is set by a work request that ends when its node cycling
	// does (cycle.go) rather than when its operation does: it ended at
	// end, failed or not.
	settled, failed bool
	end             time.Time
}

// tick finishes what time has finished: nodes of running operations,
// pools that heal, deleted pools forgotten.
func (s *Server) tick(now time.Time) {
	for id, p := range s.pools {
		p.sync(now, s)
		if p.op == nil && p.removing() == nil && p.state == stateNeedsAttention && sim.Due(p.healAt, now) {
			p.heal(s)
		}
		if p.state == stateDeleted && p.op == nil && now.Sub(p.deletedAt) > deletedKept {
			delete(s.pools, id)
		}
	}
	s.settleCapacity()
	s.syncKube()
}

// heal brings a NEEDS_ATTENTION pool to its size with new nodes, ACTIVE;
// those that find no capacity leave it NEEDS_ATTENTION, for good
// (capacity.go).
func (p *pool) heal(s *Server) {
	size := ptr.Deref(p.np.NodeConfigDetails.Size, 0)
	p.dropFailed()
	for len(p.nodes) > size {
		p.nodes = p.nodes[:len(p.nodes)-1]
	}
	for len(p.nodes) < size {
		p.addNode(s)
	}
	activate(p.nodes)
	p.state, p.details, p.healAt = stateActive, "", time.Time{}
	if n := p.failedNodes(); n > 0 {
		p.state, p.details = stateNeedsAttention, shortage(n)
	}
}

// activate makes the nodes ACTIVE, but those that could not launch.
func activate(nodes []*node) {
	for _, n := range nodes {
		if !n.failed() {
			n.state = string(ce.NodeLifecycleStateActive)
		}
	}
}

// config is the configuration new nodes of the pool get.
func (p *pool) config() NodeConfig {
	c := NodeConfig{KubernetesVersion: ptr.Deref(p.np.KubernetesVersion, ""), Shape: ptr.Deref(p.np.NodeShape, ""), Labels: map[string]string{}}
	if sc := p.np.NodeShapeConfig; sc != nil {
		c.OCPUs, c.MemoryInGBs = ptr.Deref(sc.Ocpus, 0), ptr.Deref(sc.MemoryInGBs, 0)
	}
	if src, ok := p.np.NodeSourceDetails.(ce.NodeSourceViaImageDetails); ok {
		c.ImageID, c.BootVolumeSizeInGBs = ptr.Deref(src.ImageId, ""), ptr.Deref(src.BootVolumeSizeInGBs, 0)
	}
	for _, pc := range p.np.NodeConfigDetails.PlacementConfigs {
		if pc.PreemptibleNodeConfig != nil {
			c.Preemptible = true
		}
	}
	for _, kv := range p.np.InitialNodeLabels {
		c.Labels[ptr.Deref(kv.Key, "")] = ptr.Deref(kv.Value, "")
	}
	return c
}

// addNode adds a CREATING node in the placement domain with the fewest.
func (p *pool) addNode(s *Server) {
	pcs := p.np.NodeConfigDetails.PlacementConfigs
	best := 0
	count := func(ad string) int {
		n := 0
		for _, x := range p.nodes {
			if x.ad == ad {
				n++
			}
		}
		return n
	}
	for i := range pcs {
		if count(ptr.Deref(pcs[i].AvailabilityDomain, "")) < count(ptr.Deref(pcs[best].AvailabilityDomain, "")) {
			best = i
		}
	}
	s.seq++
	n := &node{id: ocid("instance", p.cluster.Region, s.NewID()), state: string(ce.NodeLifecycleStateCreating),
		faultDomain: "FAULT-DOMAIN-" + strconv.Itoa(s.seq%3+1), ip: fmt.Sprintf("10.0.%d.%d", (s.seq/250)%250, s.seq%250+2),
		tags: maps.Clone(p.np.NodeConfigDetails.FreeformTags), cfg: p.config()}
	if len(pcs) > 0 {
		n.ad, n.subnet = ptr.Deref(pcs[best].AvailabilityDomain, ""), ptr.Deref(pcs[best].SubnetId, "")
	}
	n.name = p.nodeName(n.subnet)
	p.nodes = append(p.nodes, n)
	s.launch(p, n)
}

// nodeName is the name OKE gives a new node of the pool in subnet:
// oke-c<part of the cluster's OCID>-n<part of the pool's>-s<part of the
// subnet's>-<slot>, the slot the lowest one the pool's nodes in the
// subnet leave free ("Generated Worker Node Name Formats").
func (p *pool) nodeName(subnet string) string {
	prefix := "oke-c" + shortID(p.cluster.ID) + "-n" + shortID(p.id) + "-s" + shortID(subnet) + "-"
	for slot := 0; ; slot++ {
		name := prefix + strconv.Itoa(slot)
		if !slices.ContainsFunc(p.nodes, func(x *node) bool { return x.name == name }) {
			return name
		}
	}
}

// victim moves the node to remove next to the end: one outside the
// placement domains, else one of the domain with the most nodes.
func (p *pool) victim() {
	in := map[string]int{}
	for _, pc := range p.np.NodeConfigDetails.PlacementConfigs {
		in[ptr.Deref(pc.AvailabilityDomain, "")] = 0
	}
	for _, n := range p.nodes {
		if _, ok := in[n.ad]; ok {
			in[n.ad]++
		}
	}
	pick := -1
	for i, n := range p.nodes {
		if _, ok := in[n.ad]; !ok {
			pick = i
		}
	}
	if pick < 0 {
		for i, n := range p.nodes {
			if pick < 0 || in[n.ad] >= in[p.nodes[pick].ad] {
				pick = i
			}
		}
	}
	last := len(p.nodes) - 1
	p.nodes[pick], p.nodes[last] = p.nodes[last], p.nodes[pick]
}

// sync moves the pool's nodes with its running operation: nodes come up
// (CREATING, then ACTIVE) or go (DELETING, then gone) one at a time.
func (p *pool) sync(now time.Time, s *Server) {
	if p.cycle != nil {
		p.cycleStep(now, s)
		return
	}
	o := p.op
	if o == nil {
		return
	}
	done := o.Nodes(now)
	if o.To >= o.From {
		want := done
		if done < o.To && o.Running() {
			want++ // the one coming up
		}
		for len(p.nodes) < want {
			p.addNode(s)
		}
		for i, n := range p.nodes {
			if i < done && !n.failed() {
				n.state = string(ce.NodeLifecycleStateActive)
			}
		}
		return
	}
	for len(p.nodes) > done {
		if p.nodes[len(p.nodes)-1].state != string(ce.NodeLifecycleStateDeleting) {
			p.victim()
		}
		p.nodes = p.nodes[:len(p.nodes)-1]
	}
	if done > o.To && o.Running() && len(p.nodes) > 0 {
		if p.nodes[len(p.nodes)-1].state != string(ce.NodeLifecycleStateDeleting) {
			p.victim()
		}
		p.nodes[len(p.nodes)-1].state = string(ce.NodeLifecycleStateDeleting)
	}
}

// lifecycle is the pool's state now.
func (p *pool) lifecycle() string {
	if p.op != nil {
		return p.op.Kind
	}
	return p.state
}

// view returns the pool as GetNodePool returns it.
func (p *pool) view() ce.NodePool {
	v := p.np
	v.Id = &p.id
	v.LifecycleState = ce.NodePoolLifecycleStateEnum(p.lifecycle())
	v.LifecycleDetails = common.String(p.details)
	v.FreeformTags = maps.Clone(v.FreeformTags)
	if v.FreeformTags == nil {
		v.FreeformTags = map[string]string{}
	}
	v.DefinedTags = map[string]map[string]interface{}{}
	v.SystemTags = map[string]map[string]interface{}{}
	v.InitialNodeLabels = slices.Clone(v.InitialNodeLabels)
	ncd := *v.NodeConfigDetails
	ncd.PlacementConfigs = slices.Clone(ncd.PlacementConfigs)
	ncd.FreeformTags = maps.Clone(ncd.FreeformTags)
	v.NodeConfigDetails = &ncd
	if src, ok := v.NodeSourceDetails.(ce.NodeSourceViaImageDetails); ok {
		v.NodeImageId = src.ImageId
		v.NodeSource = ce.NodeSourceViaImageOption{SourceName: common.String("kpool-cloudsim-image"), ImageId: src.ImageId}
	}
	v.Nodes = []ce.Node{}
	for _, n := range p.nodes {
		v.Nodes = append(v.Nodes, n.view(p))
	}
	return v
}

// view returns the node as GetNodePool lists it: one that could not
// launch has no instance (an empty id), no fault domain or IP, and its
// nodeError.
func (n *node) view(p *pool) ce.Node {
	v := ce.Node{Id: common.String(n.id), Name: common.String(n.name), KubernetesVersion: common.String(n.cfg.KubernetesVersion),
		AvailabilityDomain: common.String(n.ad), SubnetId: common.String(n.subnet), NodePoolId: common.String(p.id),
		FaultDomain: common.String(n.faultDomain), PrivateIp: common.String(n.ip), FreeformTags: maps.Clone(n.tags),
		DefinedTags: map[string]map[string]interface{}{}, SystemTags: map[string]map[string]interface{}{},
		LifecycleState: ce.NodeLifecycleStateEnum(n.state), LifecycleDetails: common.String("")}
	if e := n.nodeErr; e != nil {
		cp := *e
		v.NodeError, v.FaultDomain, v.PrivateIp, v.LifecycleDetails = &cp, nil, nil, e.Message
	}
	return v
}

// summary returns the pool as ListNodePools returns it.
func (p *pool) summary() ce.NodePoolSummary {
	v := p.view()
	return ce.NodePoolSummary{Id: v.Id, LifecycleState: v.LifecycleState, LifecycleDetails: v.LifecycleDetails, CompartmentId: v.CompartmentId,
		ClusterId: v.ClusterId, Name: v.Name, KubernetesVersion: v.KubernetesVersion, NodeImageId: v.NodeImageId, NodeShapeConfig: v.NodeShapeConfig,
		NodeSource: v.NodeSource, NodeSourceDetails: v.NodeSourceDetails, NodeShape: v.NodeShape, InitialNodeLabels: v.InitialNodeLabels,
		NodeConfigDetails: v.NodeConfigDetails, FreeformTags: v.FreeformTags, DefinedTags: v.DefinedTags, SystemTags: v.SystemTags,
		SshPublicKey: v.SshPublicKey, NodePoolCyclingDetails: v.NodePoolCyclingDetails, NodeEvictionNodePoolSettings: v.NodeEvictionNodePoolSettings}
}

// etag is the pool's entity tag: it changes whenever what GET returns does.
func etag(v ce.NodePool) string {
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

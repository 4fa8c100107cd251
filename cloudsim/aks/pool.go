package aks

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/sim"
)

type props = armcontainerservice.ManagedClusterAgentPoolProfileProperties

const (
	stateSucceeded = "Succeeded"
	stateFailed    = "Failed"
	stateCreating  = "Creating"
	stateUpdating  = "Updating"
	stateScaling   = "Scaling"
	stateUpgrading = "Upgrading"
	stateDeleting  = "Deleting"
	stateStarting  = "Starting"
	stateStopping  = "Stopping"
	stateCanceled  = "Canceled"
	// stateNodeImage is a node image upgrade's provisioning state.
	stateNodeImage = "UpgradingNodeImageVersion"
	// kindAbort is the operation of an abort, which runs on no pool.
	kindAbort = "Aborting"

	poolType    = "Microsoft.ContainerService/managedClusters/agentPools"
	clusterType = "Microsoft.ContainerService/ManagedClusters"
)

type cluster struct {
	subscription, resourceGroup, name string
	location                          string
	version                           string
	pools                             map[string]*pool // key: lower(name)
	// aadTenant is the tenant of an AKS-managed Entra ID cluster (SetAAD);
	// "" for one with local accounts only.
	aadTenant string
	// synced is, by pool name, what the pool's nodes were when last handed
	// to the emulated Kubernetes API (syncNodes).
	synced map[string]string
}

func (c *cluster) id() string {
	return fmt.Sprintf("/subscriptions/%s/resourcegroups/%s/providers/Microsoft.ContainerService/managedClusters/%s",
		c.subscription, c.resourceGroup, c.name)
}

type pool struct {
	cluster *cluster
	name    string
	// props are the pool's properties as ARM returns them, read-only ones
	// included, except provisioningState and eTag, which are computed.
	props *props
	state string // provisioningState when no operation runs
	etag  string
	ready int // nodes at the start of op, or now when idle (setReady)
	// vms are the instance ids of the pool's scale set, oldest first, and
	// nextVM the id of the next one (nodes.go).
	vms    []int
	nextVM int
	op     *sim.Operation // in progress, or nil
	// failure is why the last operation failed; nil once one succeeds.
	failure *armError
	// held are the instances that hold capacity of their offering, and
	// placed the zones of instances not in the pool's usual turn
	// (capacity.go).
	held   map[int]bool
	placed map[int]string
}

func (p *pool) id() string { return p.cluster.id() + "/agentPools/" + p.name }

// opInfo is what the ARM protocol keeps of an operation, as its
// sim.Operation's Data.
type opInfo struct {
	subscription, location string
	pool                   *pool
	// newVersion is the orchestrator version an upgrade moves to.
	newVersion string
	// newImage is the node image a node image upgrade moves to.
	newImage string
	// aborted is set when an abort ended the operation before its end:
	// its outcome is never applied.
	aborted bool
	// surge is how many surge instances an upgrade got; shortage the
	// allocation error of an operation that got fewer instances than it
	// asked (capacity.go).
	surge    int
	shortage *armError
}

func infoOf(o *sim.Operation) *opInfo { return o.Data.(*opInfo) }

// opStatus is an operation's status as ARM names it.
func opStatus(o *sim.Operation) string {
	switch {
	case infoOf(o).aborted:
		return stateCanceled
	case o.Running():
		return "InProgress"
	case o.Fails:
		return stateFailed
	}
	return stateSucceeded
}

// opError is the error of an operation that failed, as AKS words the
// usual causes: a scale set that cannot get VMs for a create or a scale,
// a drain a PodDisruptionBudget blocks for an upgrade, an internal error
// for a delete. The operation's status and, from api-version 2025-05-01,
// the pool's properties.status.provisioningError carry it.
func opError(o *sim.Operation) *armError {
	p := infoOf(o).pool
	if s := infoOf(o).shortage; s != nil {
		return s
	}
	const injected = " (fault injected by kpool cloudsim)"
	switch o.Kind {
	case stateUpgrading:
		return &armError{Code: "UpgradeFailed",
			Message: fmt.Sprintf("Drain node aks-%s-%s-vmss000000 failed when evicting pod web-0 in namespace default: Eviction failed with Too many requests error. "+
				"This is often caused by a restrictive Pod Disruption Budget (PDB) policy. See http://aka.ms/aks/debugdrainfailures.%s", p.name, vmssID(p), injected),
			Details: []*armError{{Code: "DrainNodeFailed", Message: "Cannot evict pod as it would violate the pod's disruption budget."}}}
	case stateDeleting:
		return &armError{Code: "InternalOperationError",
			Message: fmt.Sprintf("Deleting the virtual machine scale set of agent pool '%s' failed: an internal error occurred.%s", p.name, injected)}
	}
	return &armError{Code: "ReconcileVMSSAgentPoolFailed",
		Message: fmt.Sprintf("Agent pool '%s' could not reach %d nodes: the virtual machine scale set aks-%s-%s-vmss failed to allocate instances.%s",
			p.name, ptr.Deref(p.props.Count, 0), p.name, vmssID(p), injected),
		Details: []*armError{{Code: "AllocationFailed",
			Message: fmt.Sprintf("Allocation failed. We do not have sufficient capacity for the requested VM size %s in this region. "+
				"Read more about improving likelihood of allocation success at http://aka.ms/allocation-guidance", ptr.Deref(p.props.VMSize, ""))}}}
}

// vmssID is the number AKS puts in a pool's scale set name.
func vmssID(p *pool) string {
	h := uint32(2166136261)
	for _, b := range []byte(strings.ToLower(p.cluster.name + "/" + p.name)) {
		h = (h ^ uint32(b)) * 16777619
	}
	return fmt.Sprintf("%08d", h%100000000)
}

// statusVersion is the first api-version whose agent pools have
// properties.status (AgentPoolStatus, armcontainerservice v7.1.0).
const statusVersion = "2025-05-01"

// wire returns the pool as ARM answers api-version version: from
// statusVersion on, a pool whose last operation failed carries why in
// properties.status.provisioningError; older versions have no such field.
func (p *pool) wire(version string) any {
	v := p.view()
	if p.failure == nil || len(version) < len(statusVersion) || version[:len(statusVersion)] < statusVersion {
		return v
	}
	return withStatus{pool: v, err: p.failure}
}

// withStatus is an agent pool with properties.status, which
// armcontainerservice v6 has no field for.
type withStatus struct {
	pool armcontainerservice.AgentPool
	err  *armError
}

func (w withStatus) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(w.pool)
	if err != nil {
		return nil, err
	}
	var top, props map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(top["properties"], &props); err != nil {
		return nil, err
	}
	if props["status"], err = json.Marshal(map[string]any{"provisioningError": w.err}); err != nil {
		return nil, err
	}
	if top["properties"], err = json.Marshal(props); err != nil {
		return nil, err
	}
	return json.Marshal(top)
}

// readyAt is the number of nodes at t: during an operation they move one
// at a time, NodeTime apart, from the count at its start to its target.
func (p *pool) readyAt(t time.Time) int {
	if p.op == nil {
		return p.ready
	}
	return p.op.Nodes(t)
}

// view returns the pool as ARM returns it.
func (p *pool) view() armcontainerservice.AgentPool {
	pr := sim.CloneJSON(p.props)
	st := p.state
	if p.op != nil {
		st = p.op.Kind
	}
	pr.ProvisioningState = ptr.To(st)
	pr.ETag = ptr.To(p.etag)
	return armcontainerservice.AgentPool{ID: ptr.To(p.id()), Name: ptr.To(p.name), Type: ptr.To(poolType), Properties: pr}
}

// ended applies an operation's outcome to its pool when it ends, and
// gives back the capacity of the instances it no longer has.
func (s *Server) ended(o *sim.Operation) {
	in := infoOf(o)
	p := in.pool
	if in.aborted || o.Kind == kindAbort {
		return
	}
	p.op = nil
	if reimaging(o.Kind) {
		p.nextVM += in.surge // the surge nodes are gone, their ids used
	}
	p.setReady(o.To)
	s.settle(p)
	if o.Fails {
		p.state = stateFailed
		p.failure = opError(o)
		return
	}
	p.state = stateSucceeded
	p.failure = nil
	if o.Kind == stateDeleting {
		s.releaseAll(p)
		delete(p.cluster.pools, strings.ToLower(p.name))
		return
	}
	if in.newVersion != "" {
		p.props.CurrentOrchestratorVersion = ptr.To(in.newVersion)
	}
	if in.newImage != "" {
		p.props.NodeImageVersion = ptr.To(in.newImage)
	}
}

// onlyCountDiffers reports whether next differs from old in count alone.
func onlyCountDiffers(old, next *props) bool {
	if ptr.Deref(old.Count, 0) == ptr.Deref(next.Count, 0) {
		return false
	}
	a, b := sim.CloneJSON(old), sim.CloneJSON(next)
	a.Count, b.Count = nil, nil
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

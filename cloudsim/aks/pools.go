package aks

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
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

	poolType    = "Microsoft.ContainerService/managedClusters/agentPools"
	clusterType = "Microsoft.ContainerService/ManagedClusters"
)

type cluster struct {
	subscription, resourceGroup, name string
	location                          string
	version                           string
	pools                             map[string]*pool // key: lower(name)
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
	ready int            // nodes at the start of op, or now when idle
	op    *sim.Operation // in progress, or nil
	// failure is why the last operation failed; nil once one succeeds.
	failure *armError
}

func (p *pool) id() string { return p.cluster.id() + "/agentPools/" + p.name }

// opInfo is what the ARM protocol keeps of an operation, as its
// sim.Operation's Data.
type opInfo struct {
	subscription, location string
	pool                   *pool
	// newVersion is the orchestrator version an upgrade moves to.
	newVersion string
}

func infoOf(o *sim.Operation) *opInfo { return o.Data.(*opInfo) }

// opStatus is an operation's status as ARM names it.
func opStatus(o *sim.Operation) string {
	switch {
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
	pr := cloneProps(p.props)
	st := p.state
	if p.op != nil {
		st = p.op.Kind
	}
	pr.ProvisioningState = ptr.To(st)
	pr.ETag = ptr.To(p.etag)
	return armcontainerservice.AgentPool{ID: ptr.To(p.id()), Name: ptr.To(p.name), Type: ptr.To(poolType), Properties: pr}
}

// finish applies an operation's outcome to its pool when it ends.
func finish(o *sim.Operation) {
	in := infoOf(o)
	p := in.pool
	p.ready = o.To
	p.op = nil
	if o.Fails {
		p.state = stateFailed
		p.failure = opError(o)
		return
	}
	p.state = stateSucceeded
	p.failure = nil
	if o.Kind == stateDeleting {
		delete(p.cluster.pools, strings.ToLower(p.name))
		return
	}
	if in.newVersion != "" {
		p.props.CurrentOrchestratorVersion = ptr.To(in.newVersion)
	}
}

// lookup finds a cluster, answering ARM's 404s when it is missing.
// parent is true on the agent-pool paths.
func (s *Server) lookup(sub, rg, name string, parent bool) (*cluster, *sim.Reply) {
	if c, ok := s.clusters[clusterKey(sub, rg, name)]; ok {
		return c, nil
	}
	subFound, rgFound := false, false
	for _, c := range s.clusters {
		if strings.EqualFold(c.subscription, sub) {
			subFound = true
			rgFound = rgFound || strings.EqualFold(c.resourceGroup, rg)
		}
	}
	switch {
	case !subFound:
		return nil, errorReply(http.StatusNotFound, "SubscriptionNotFound", "The subscription '%s' could not be found.", sub)
	case !rgFound:
		return nil, errorReply(http.StatusNotFound, "ResourceGroupNotFound", "Resource group '%s' could not be found.", rg)
	case parent:
		return nil, errorReply(http.StatusNotFound, "ParentResourceNotFound",
			"Can not perform requested operation on nested resource. Parent resource '%s' not found.", name)
	}
	return nil, errorReply(http.StatusNotFound, "ResourceNotFound",
		"The Resource 'Microsoft.ContainerService/managedClusters/%s' under resource group '%s' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix", name, rg)
}

func poolNotFound(c *cluster, name string) *sim.Reply {
	return errorReply(http.StatusNotFound, "ResourceNotFound",
		"The Resource 'Microsoft.ContainerService/managedClusters/%s/agentPools/%s' under resource group '%s' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix",
		c.name, name, c.resourceGroup)
}

func (s *Server) getCluster(req *request) *sim.Reply {
	c, rep := s.cluster(req, false)
	if rep != nil {
		return rep
	}
	mc := armcontainerservice.ManagedCluster{
		ID: ptr.To(c.id()), Name: ptr.To(c.name), Type: ptr.To(clusterType), Location: ptr.To(c.location),
		Properties: &armcontainerservice.ManagedClusterProperties{
			ProvisioningState:        ptr.To(stateSucceeded),
			KubernetesVersion:        ptr.To(c.version),
			CurrentKubernetesVersion: ptr.To(c.version),
			DNSPrefix:                ptr.To(c.name + "-dns"),
			Fqdn:                     ptr.To(c.name + "-dns.hcp." + c.location + ".azmk8s.io"),
			NodeResourceGroup:        ptr.To("MC_" + c.resourceGroup + "_" + c.name + "_" + c.location),
			PowerState:               &armcontainerservice.PowerState{Code: ptr.To(armcontainerservice.CodeRunning)},
		},
	}
	for _, p := range c.sortedPools() {
		var prof armcontainerservice.ManagedClusterAgentPoolProfile
		v := p.view()
		if b, err := json.Marshal(v.Properties); err == nil && json.Unmarshal(b, &prof) == nil {
			prof.Name = ptr.To(p.name)
			mc.Properties.AgentPoolProfiles = append(mc.Properties.AgentPoolProfiles, &prof)
		}
	}
	return jsonReply(http.StatusOK, mc)
}

func (s *Server) listPools(req *request) *sim.Reply {
	c, rep := s.cluster(req, true)
	if rep != nil {
		return rep
	}
	page, next, err := sim.Page(c.sortedPools(), (*pool).key, req.HTTP.URL.Query().Get("$skipToken"), s.pageSize)
	if err != nil {
		return errorReply(http.StatusBadRequest, "InvalidSkipToken", "The $skipToken '%s' is invalid.", req.HTTP.URL.Query().Get("$skipToken"))
	}
	// AgentPoolListResult, with pools that may carry properties.status.
	out := struct {
		Value    []any   `json:"value"`
		NextLink *string `json:"nextLink,omitempty"`
	}{Value: []any{}}
	for _, p := range page {
		out.Value = append(out.Value, p.wire(req.version))
	}
	if next != "" {
		q := url.Values{}
		q.Set("api-version", req.version)
		q.Set("$skipToken", next)
		out.NextLink = ptr.To(req.base + req.HTTP.URL.Path + "?" + q.Encode())
	}
	return jsonReply(http.StatusOK, out)
}

// key is what pools are sorted and paged by: the name, without case.
func (p *pool) key() string { return strings.ToLower(p.name) }

func (s *Server) getPool(req *request) *sim.Reply {
	name := req.vars["pool"]
	c, rep := s.cluster(req, true)
	if rep != nil {
		return rep
	}
	p, ok := c.pools[strings.ToLower(name)]
	if !ok {
		return poolNotFound(c, name)
	}
	return jsonReply(http.StatusOK, p.wire(req.version))
}

// etagMatches reports whether an If-Match or If-None-Match header value
// matches etag: "*" or one of a comma-separated list, quoted or not.
func etagMatches(header, etag string) bool {
	for _, v := range strings.Split(header, ",") {
		v = strings.TrimSpace(v)
		v = strings.TrimPrefix(v, "W/")
		v = strings.Trim(v, `"`)
		if v == "*" || (v != "" && v == etag) {
			return true
		}
	}
	return false
}

// preconditions checks If-Match and If-None-Match against a pool (nil when
// it does not exist).
func preconditions(r *http.Request, p *pool, name string) *sim.Reply {
	if im := r.Header.Get("If-Match"); im != "" {
		if p == nil {
			return errorReply(http.StatusPreconditionFailed, "PreconditionFailed",
				"Operation failed because agent pool '%s' does not exist and the request has an If-Match header '%s'.", name, im)
		}
		if !etagMatches(im, p.etag) {
			return errorReply(http.StatusPreconditionFailed, "PreconditionFailed",
				"Operation failed because the agent pool's eTag '%s' does not match the If-Match header '%s'.", p.etag, im)
		}
	}
	if inm := r.Header.Get("If-None-Match"); inm != "" && p != nil && etagMatches(inm, p.etag) {
		return errorReply(http.StatusPreconditionFailed, "PreconditionFailed",
			"Operation failed because agent pool '%s' exists and the request has an If-None-Match header '%s'.", p.name, inm)
	}
	return nil
}

var verbs = map[string]string{stateCreating: "create", stateUpdating: "update", stateScaling: "scale", stateUpgrading: "upgrade", stateDeleting: "delete"}

func inProgress(p *pool) *sim.Reply {
	return errorReply(http.StatusConflict, "OperationNotAllowed",
		"Operation is not allowed because there's an in progress %s operation (id '%s', started %s) on agent pool '%s'. Please wait for it to finish before starting a new operation.",
		verbs[p.op.Kind], p.op.ID, p.op.Start.UTC().Format(time.RFC3339), p.name)
}

func (s *Server) putPool(req *request) *sim.Reply {
	name := req.vars["pool"]
	c, rep := s.cluster(req, true)
	if rep != nil {
		return rep
	}
	existing := c.pools[strings.ToLower(name)]
	if rep := preconditions(req.HTTP, existing, name); rep != nil {
		return rep
	}
	if existing != nil && existing.op != nil {
		return inProgress(existing)
	}
	var ap armcontainerservice.AgentPool
	if len(strings.TrimSpace(string(req.Body))) == 0 {
		return errorReply(http.StatusBadRequest, "InvalidRequestContent", "The request content was invalid and could not be deserialized: the body is empty.")
	}
	if err := json.Unmarshal(req.Body, &ap); err != nil {
		return errorReply(http.StatusBadRequest, "InvalidRequestContent", "The request content was invalid and could not be deserialized: %v", err)
	}
	if existing != nil {
		name = existing.name
	}
	next, rep := s.desired(c, name, existing, ap.Properties)
	if rep != nil {
		return rep
	}

	// The operation: what it is called, how long it takes, where nodes go.
	kind := stateCreating
	from := 0
	upgradeNodes := 0
	newVersion := ""
	if existing != nil {
		from = existing.ready
		kind = stateUpdating
		if v := ptr.Deref(next.CurrentOrchestratorVersion, ""); v != ptr.Deref(existing.props.CurrentOrchestratorVersion, "") {
			kind, newVersion = stateUpgrading, v
			// Until the upgrade is done the nodes run the old version.
			next.CurrentOrchestratorVersion = existing.props.CurrentOrchestratorVersion
			upgradeNodes = int(ptr.Deref(next.Count, 0))
		} else if onlyCountDiffers(existing.props, next) {
			kind = stateScaling
		}
	}
	o := req.Start(kind, from, int(ptr.Deref(next.Count, 0)), upgradeNodes)
	created := existing == nil
	p := existing
	if created {
		p = &pool{cluster: c, name: name}
		c.pools[strings.ToLower(name)] = p
	}
	p.props = next
	p.etag = s.NewID()
	startOp(o, c, p)
	infoOf(o).newVersion = newVersion

	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	rep = jsonReply(status, p.wire(req.version))
	rep.Created = created
	rep.Header.Set("Azure-AsyncOperation", s.operationURL(req, o, "operations"))
	return rep
}

func (s *Server) deletePool(req *request) *sim.Reply {
	name := req.vars["pool"]
	c, rep := s.cluster(req, true)
	if rep != nil {
		return rep
	}
	p := c.pools[strings.ToLower(name)]
	if rep := preconditions(req.HTTP, p, name); rep != nil {
		return rep
	}
	if p == nil {
		return sim.NewReply(http.StatusNoContent) // ARM: deleting what is not there succeeds
	}
	if p.op != nil {
		return inProgress(p)
	}
	o := req.Start(stateDeleting, p.ready, 0, 0)
	startOp(o, c, p)
	rep = sim.NewReply(http.StatusAccepted)
	rep.Header.Set("Azure-AsyncOperation", s.operationURL(req, o, "operations"))
	rep.Header.Set("Location", s.operationURL(req, o, "operationresults"))
	return rep
}

// startOp makes o, just started, the operation in progress on pool p of
// cluster c.
func startOp(o *sim.Operation, c *cluster, p *pool) {
	o.Data = &opInfo{subscription: c.subscription, location: c.location, pool: p}
	o.Done = finish
	p.op = o
}

func (s *Server) operationURL(req *request, o *sim.Operation, kind string) string {
	in := infoOf(o)
	return fmt.Sprintf("%s/subscriptions/%s/providers/Microsoft.ContainerService/locations/%s/%s/%s?api-version=%s",
		req.base, in.subscription, in.location, kind, o.ID, url.QueryEscape(req.version))
}

func (s *Server) findOp(req *request) (*sim.Operation, *sim.Reply) {
	sub, location, id := req.vars["subscription"], req.vars["location"], req.vars["id"]
	o := req.Operation(id)
	if o == nil || !strings.EqualFold(infoOf(o).subscription, sub) || !strings.EqualFold(infoOf(o).location, normLocation(location)) {
		return nil, errorReply(http.StatusNotFound, "NotFound", "Operation '%s' was not found in location '%s'.", id, location)
	}
	return o, nil
}

type operationStatus struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Status    string    `json:"status"`
	StartTime string    `json:"startTime"`
	EndTime   string    `json:"endTime,omitempty"`
	Error     *armError `json:"error,omitempty"`
}

func (s *Server) operationStatus(req *request) *sim.Reply {
	o, rep := s.findOp(req)
	if rep != nil {
		return rep
	}
	in := infoOf(o)
	st := operationStatus{
		ID:        fmt.Sprintf("/subscriptions/%s/providers/Microsoft.ContainerService/locations/%s/operations/%s", in.subscription, in.location, o.ID),
		Name:      o.ID,
		Status:    opStatus(o),
		StartTime: o.Start.UTC().Format(time.RFC3339Nano),
	}
	if !o.Running() {
		st.EndTime = o.End.UTC().Format(time.RFC3339Nano)
	}
	if st.Status == stateFailed {
		st.Error = opError(o)
	}
	return jsonReply(http.StatusOK, st)
}

// operationResult answers the Location URL of an operation: 202 while it
// runs, then 204 for a delete (or a pool since gone), 200 with the pool
// for a create or update, or the operation's error.
func (s *Server) operationResult(req *request) *sim.Reply {
	o, rep := s.findOp(req)
	if rep != nil {
		return rep
	}
	switch opStatus(o) {
	case "InProgress":
		rep := sim.NewReply(http.StatusAccepted)
		rep.Header.Set("Location", s.operationURL(req, o, "operationresults"))
		return rep
	case stateFailed:
		e := opError(o)
		return errorReply(http.StatusBadRequest, e.Code, "%s", e.Message)
	}
	if o.Kind == stateDeleting {
		return sim.NewReply(http.StatusNoContent)
	}
	p := infoOf(o).pool
	if cur, ok := p.cluster.pools[strings.ToLower(p.name)]; ok && cur == p {
		return jsonReply(http.StatusOK, cur.wire(req.version))
	}
	return sim.NewReply(http.StatusNoContent)
}

// onlyCountDiffers reports whether next differs from old in count alone.
func onlyCountDiffers(old, next *props) bool {
	if ptr.Deref(old.Count, 0) == ptr.Deref(next.Count, 0) {
		return false
	}
	a, b := cloneProps(old), cloneProps(next)
	a.Count, b.Count = nil, nil
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// cloneProps deep-copies properties through their JSON form.
func cloneProps(p *props) *props {
	out := &props{}
	if p == nil {
		return out
	}
	b, err := json.Marshal(p)
	if err != nil {
		panic(fmt.Sprintf("aks: encoding agent pool properties: %v", err))
	}
	if err := json.Unmarshal(b, out); err != nil {
		panic(fmt.Sprintf("aks: decoding agent pool properties: %v", err))
	}
	return out
}

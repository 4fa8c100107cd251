package gke

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strings"
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
}

func (c *cluster) path() string {
	return "projects/" + c.project + "/locations/" + c.location + "/clusters/" + c.name
}

type pool struct {
	cluster *cluster
	// np is the pool as GKE returns it, except what is computed: status,
	// statusMessage, conditions, etag, selfLink, instanceGroupUrls.
	np      *container.NodePool
	perZone int    // the node count each zone's instance group targets
	ready   int    // the nodes there are when idle (at the start of op)
	status  string // when idle: RUNNING, RUNNING_WITH_ERROR or ERROR
	message string // statusMessage
	cond    []*container.StatusCondition
	etag    string
	seq     int
	op      *sim.Operation
	// healAt is when a RUNNING_WITH_ERROR pool is RUNNING again: its
	// instance groups keep trying to reach their size, and GKE clears the
	// error once they have.
	healAt time.Time
}

// heal makes a RUNNING_WITH_ERROR pool whose instance groups have caught
// up RUNNING again.
func (p *pool) heal(now time.Time) {
	if p.op == nil && p.status == statusRunningWithError && !p.healAt.IsZero() && !now.Before(p.healAt) {
		p.status, p.message, p.cond, p.healAt = statusRunning, "", nil, time.Time{}
		p.ready = p.nodes()
	}
}

// nodes is the node count the pool targets.
func (p *pool) nodes() int { return p.perZone * len(p.np.Locations) }

func (p *pool) path() string { return p.cluster.path() + "/nodePools/" + p.np.Name }

// readyAt is the node count at t.
func (p *pool) readyAt(t time.Time) int {
	if p.op == nil {
		return p.ready
	}
	return p.op.Nodes(t)
}

// group is the name of the pool's instance group in each zone, as GKE
// names them: gke-CLUSTER-POOL-HASH-grp.
func (p *pool) group() string {
	h := fnv.New32a()
	h.Write([]byte(p.path()))
	return fmt.Sprintf("gke-%.14s-%.14s-%08x-grp", p.cluster.name, p.np.Name, h.Sum32())
}

// view is the pool as GKE returns it; base is the URL the request came to,
// for its links ("" for none).
func (p *pool) view(base string) *container.NodePool {
	out := clonePool(p.np)
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
				fmt.Sprintf("%s/compute/v1/projects/%s/zones/%s/instanceGroupManagers/%s", base, p.cluster.project, z, p.group()))
		}
	}
	return out
}

// opInfo is what the protocol keeps of an operation, as its sim.Operation's Data.
type opInfo struct {
	cluster *cluster
	pool    *pool
	opType  string
	// apply, when set, applies the change to the pool when the operation
	// succeeds.
	apply func()
}

func infoOf(o *sim.Operation) *opInfo { return o.Data.(*opInfo) }

// start starts an operation of opType on pool p, moving its nodes from
// its ready count to its target, plus extra node replacements.
func (s *Server) start(req *sim.Request, p *pool, opType string, to, extra int, apply func()) *sim.Operation {
	from := p.ready
	if p.op != nil {
		from = p.readyAt(req.Now)
	}
	o := req.Start(opType, from, to, extra)
	o.Data = &opInfo{cluster: p.cluster, pool: p, opType: opType, apply: apply}
	o.Done = finish
	p.op = o
	p.etag = s.NewID()
	return o
}

// finish applies an operation's outcome when it ends.
func finish(o *sim.Operation) {
	in := infoOf(o)
	p := in.pool
	p.ready, p.op = o.To, nil
	if o.Fails {
		e := opError(o)
		p.message = e.Message
		p.cond = []*container.StatusCondition{{Code: "GCE_STOCKOUT", CanonicalCode: codeResourceExhausted, Message: e.Message}}
		switch in.opType {
		case opCreate, opDelete:
			p.status = statusError
		default:
			// The change is taken (the instance groups have their new
			// size and template) but the instances did not come: the
			// groups keep trying, and reach it as long again as the
			// operation took.
			p.status, p.ready = statusRunningWithError, o.From
			p.healAt = o.End.Add(o.End.Sub(o.Start))
			if in.apply != nil {
				in.apply()
			}
		}
		return
	}
	p.status, p.message, p.cond = statusRunning, "", nil
	if in.opType == opDelete {
		delete(p.cluster.pools, p.np.Name)
		return
	}
	if in.apply != nil {
		in.apply()
	}
}

// opError is the error of a failed operation, as GKE words the usual
// causes: Compute Engine out of capacity for creates and resizes, a drain
// that times out for upgrades.
func opError(o *sim.Operation) *container.Status {
	in := infoOf(o)
	const injected = " (fault injected by kpool cloudsim)"
	switch in.opType {
	case opUpgrade:
		return &container.Status{Code: int64(rpcNumber[codeFailedPrecondition]),
			Message: fmt.Sprintf("Node pool %q: upgrading node gke-%s-%s-0 failed: draining the node timed out: a PodDisruptionBudget prevents evicting pod default/web-0.%s", in.pool.np.Name, in.cluster.name, in.pool.np.Name, injected)}
	case opDelete:
		return &container.Status{Code: int64(rpcNumber[codeInternal]),
			Message: fmt.Sprintf("Deleting the instance groups of node pool %q failed: an internal error occurred.%s", in.pool.np.Name, injected)}
	}
	zone := ""
	if len(in.pool.np.Locations) > 0 {
		zone = in.pool.np.Locations[0]
	}
	return &container.Status{Code: int64(rpcNumber[codeResourceExhausted]),
		Message: fmt.Sprintf("Google Compute Engine: The zone 'projects/%s/zones/%s' does not have enough resources available to fulfill the request. Try a different zone, or try again later.%s", in.cluster.project, zone, injected)}
}

// operation is an Operation as GKE returns it.
func (s *Server) operation(base string, o *sim.Operation, now time.Time) *container.Operation {
	in := infoOf(o)
	c := in.cluster
	out := &container.Operation{
		Name: "operation-" + o.ID, OperationType: in.opType, Zone: c.location, Location: c.location,
		SelfLink:   fmt.Sprintf("%s/v1/projects/%s/locations/%s/operations/operation-%s", base, c.project, c.location, o.ID),
		TargetLink: base + "/v1/" + in.pool.path(),
		StartTime:  o.Start.UTC().Format(time.RFC3339Nano),
		Status:     opRunning,
	}
	switch {
	case o.Running() && !now.After(o.Start):
		out.Status = opPending
	case !o.Running():
		out.Status = opDone
		out.EndTime = o.End.UTC().Format(time.RFC3339Nano)
		if o.Fails {
			out.Error = opError(o)
			out.StatusMessage = out.Error.Message
		}
	}
	return out
}

// lookup finds a cluster, answering GKE's 404 when it is missing.
func (s *Server) lookup(project, location, name string) (*cluster, *sim.Reply) {
	if c, ok := s.clusters[clusterKey(project, location, name)]; ok {
		return c, nil
	}
	return nil, errorReply(codeNotFound, "Not found: projects/%s/locations/%s/clusters/%s.", project, location, name)
}

// find finds a node pool, answering GKE's 404s.
func (s *Server) find(project, location, clusterName, name string) (*pool, *sim.Reply) {
	c, rep := s.lookup(project, location, clusterName)
	if rep != nil {
		return nil, rep
	}
	p, ok := c.pools[name]
	if !ok {
		return nil, errorReply(codeNotFound, "Not found: projects/%s/locations/%s/clusters/%s/nodePools/%s.", project, location, clusterName, name)
	}
	return p, nil
}

// busy is GKE's answer to a second operation on a node pool.
func busy(p *pool) *sim.Reply {
	return detailed(codeFailedPrecondition, []any{errorInfo("OPERATION_IN_PROGRESS")},
		"Operation operation-%s is currently operating on node pool %q (%s). Please wait and try again once it is done.",
		p.op.ID, p.np.Name, infoOf(p.op).opType)
}

// decode reads a request body strictly, as Google's front end does: a
// field the API does not have is INVALID_ARGUMENT.
func decode(req *sim.Request, v any) *sim.Reply {
	if len(bytes.TrimSpace(req.Body)) == 0 {
		return errorReply(codeInvalidArgument, "Invalid JSON payload received. The request body is empty.")
	}
	dec := json.NewDecoder(bytes.NewReader(req.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errorReply(codeInvalidArgument, "Invalid JSON payload received. %v", err)
	}
	return nil
}

func (s *Server) getCluster(req *sim.Request, project, location, name string) *sim.Reply {
	c, rep := s.lookup(project, location, name)
	if rep != nil {
		return rep
	}
	out := &container.Cluster{
		Name: c.name, Location: c.location, Zone: c.location, Locations: c.locations, Status: statusRunning,
		CurrentMasterVersion: c.version, InitialClusterVersion: c.version, SelfLink: req.BaseURL() + "/v1/" + c.path(),
	}
	for _, p := range c.sorted() {
		out.NodePools = append(out.NodePools, p.view(req.BaseURL()))
	}
	return jsonReply(200, out)
}

func (s *Server) listPools(req *sim.Request, project, location, name string) *sim.Reply {
	c, rep := s.lookup(project, location, name)
	if rep != nil {
		return rep
	}
	out := container.ListNodePoolsResponse{NodePools: []*container.NodePool{}}
	for _, p := range c.sorted() {
		out.NodePools = append(out.NodePools, p.view(req.BaseURL()))
	}
	return jsonReply(200, out)
}

func (s *Server) getPool(req *sim.Request, project, location, clusterName, name string) *sim.Reply {
	p, rep := s.find(project, location, clusterName, name)
	if rep != nil {
		return rep
	}
	return jsonReply(200, p.view(req.BaseURL()))
}

// newPool checks a node pool of a create and fills in GKE's defaults.
func (s *Server) newPool(c *cluster, in *container.NodePool) (*pool, *sim.Reply) {
	np := clonePool(in)
	// Output-only fields in a request are ignored.
	np.Status, np.StatusMessage, np.Conditions, np.Etag, np.SelfLink, np.InstanceGroupUrls = "", "", nil, "", "", nil
	np.PodIpv4CidrSize, np.UpdateInfo = 0, nil
	if !poolName.MatchString(np.Name) {
		return nil, invalid("nodePool.name", "Node pool name %q is invalid: 1-40 lowercase letters, digits or '-', starting with a letter and not ending with '-'.", np.Name)
	}
	if _, exists := c.pools[np.Name]; exists {
		return nil, errorReply(codeAlreadyExists, "Already exists: %s/nodePools/%s.", c.path(), np.Name)
	}
	if np.InitialNodeCount < 0 || np.InitialNodeCount > maxPerZone {
		return nil, invalid("nodePool.initialNodeCount", "initial_node_count must be between 0 and %d per zone, got %d.", maxPerZone, np.InitialNodeCount)
	}
	if len(np.Locations) == 0 {
		np.Locations = slices.Clone(c.locations)
	}
	if rep := checkLocations(c, "nodePool.locations", np.Locations); rep != nil {
		return nil, rep
	}
	v, rep := resolveVersion(c, "nodePool.version", np.Version)
	if rep != nil {
		return nil, rep
	}
	np.Version = v
	if np.Config == nil {
		np.Config = &container.NodeConfig{}
	}
	cfg := np.Config
	if cfg.MachineType == "" {
		cfg.MachineType = "e2-medium"
	}
	if cfg.DiskSizeGb == 0 {
		cfg.DiskSizeGb = 100
	}
	if cfg.DiskType == "" {
		cfg.DiskType = "pd-standard"
	}
	if cfg.ImageType == "" {
		cfg.ImageType = "COS_CONTAINERD"
	}
	if rep := checkConfig("nodePool.config", cfg, v); rep != nil {
		return nil, rep
	}
	if rep := checkAutoscaling("nodePool.autoscaling", np.Autoscaling); rep != nil {
		return nil, rep
	}
	if np.Management == nil {
		np.Management = &container.NodeManagement{AutoRepair: true, AutoUpgrade: true}
	}
	s.seq++
	return &pool{cluster: c, np: np, perZone: int(np.InitialNodeCount), status: statusRunning, etag: s.NewID(), seq: s.seq}, nil
}

func (s *Server) createPool(req *sim.Request, project, location, clusterName string) *sim.Reply {
	c, rep := s.lookup(project, location, clusterName)
	if rep != nil {
		return rep
	}
	var body container.CreateNodePoolRequest
	if rep := decode(req, &body); rep != nil {
		return rep
	}
	if body.NodePool == nil {
		return invalid("nodePool", "node_pool is required.")
	}
	p, rep := s.newPool(c, body.NodePool)
	if rep != nil {
		return rep
	}
	c.pools[p.np.Name] = p
	o := s.start(req, p, opCreate, p.nodes(), 0, nil)
	rep = jsonReply(200, s.operation(req.BaseURL(), o, req.Now))
	rep.Created, rep.Resource = true, req.HTTP.URL.Path+"/"+p.np.Name
	return rep
}

func (s *Server) deletePool(req *sim.Request, project, location, clusterName, name string) *sim.Reply {
	p, rep := s.find(project, location, clusterName, name)
	if rep != nil {
		return rep
	}
	if p.op != nil && infoOf(p.op).opType != opCreate {
		// A delete may cancel a create in progress; nothing else.
		return busy(p)
	}
	o := s.start(req, p, opDelete, 0, 0, nil)
	return jsonReply(200, s.operation(req.BaseURL(), o, req.Now))
}

// poolVerb answers the custom methods: setSize, setAutoscaling, setManagement.
func (s *Server) poolVerb(req *sim.Request, project, location, clusterName, name, verb string) *sim.Reply {
	switch verb {
	case "setSize", "setAutoscaling", "setManagement":
	default:
		return errorReply(codeUnimplemented, "kpool cloudsim does not emulate nodePools.%s.", verb)
	}
	p, rep := s.find(project, location, clusterName, name)
	if rep != nil {
		return rep
	}
	var o *sim.Operation
	switch verb {
	case "setSize":
		var body container.SetNodePoolSizeRequest
		if rep := decode(req, &body); rep != nil {
			return rep
		}
		if body.NodeCount < 0 || body.NodeCount > maxPerZone {
			return invalid("nodeCount", "node_count must be between 0 and %d per zone, got %d.", maxPerZone, body.NodeCount)
		}
		if p.op != nil {
			return busy(p)
		}
		p.perZone = int(body.NodeCount)
		o = s.start(req, p, opSetSize, p.nodes(), 0, nil)
	case "setAutoscaling":
		var body container.SetNodePoolAutoscalingRequest
		if rep := decode(req, &body); rep != nil {
			return rep
		}
		if body.Autoscaling == nil {
			return invalid("autoscaling", "autoscaling is required.")
		}
		if rep := checkAutoscaling("autoscaling", body.Autoscaling); rep != nil {
			return rep
		}
		if p.op != nil {
			return busy(p)
		}
		a := *body.Autoscaling
		// The autoscaler brings the pool into its new bounds.
		per := p.perZone
		if a.Enabled {
			lo, hi := int(a.MinNodeCount), int(a.MaxNodeCount)
			if a.TotalMaxNodeCount > 0 {
				n := max(len(p.np.Locations), 1)
				lo, hi = (int(a.TotalMinNodeCount)+n-1)/n, int(a.TotalMaxNodeCount)/n
			}
			per = min(max(per, lo), max(hi, lo))
		}
		p.perZone = per
		o = s.start(req, p, opUpdate, p.nodes(), 0, func() { p.np.Autoscaling = &a })
	case "setManagement":
		var body container.SetNodePoolManagementRequest
		if rep := decode(req, &body); rep != nil {
			return rep
		}
		if body.Management == nil {
			return invalid("management", "management is required.")
		}
		if p.op != nil {
			return busy(p)
		}
		m := *body.Management
		o = s.start(req, p, opManagement, p.nodes(), 0, func() { p.np.Management = &m })
	}
	return jsonReply(200, s.operation(req.BaseURL(), o, req.Now))
}

func (s *Server) updatePool(req *sim.Request, project, location, clusterName, name string) *sim.Reply {
	p, rep := s.find(project, location, clusterName, name)
	if rep != nil {
		return rep
	}
	var body container.UpdateNodePoolRequest
	if rep := decode(req, &body); rep != nil {
		return rep
	}
	if body.Etag != "" && body.Etag != p.etag {
		return errorReply(codeAborted, "Node pool %q has etag %q, not the %q of the request: it changed since it was read.", p.np.Name, p.etag, body.Etag)
	}
	c := p.cluster
	next := clonePool(p.np)
	cfg := next.Config
	rolls, kind := false, opUpdate
	if body.NodeVersion != "" {
		v, rep := resolveVersion(c, "nodeVersion", body.NodeVersion)
		if rep != nil {
			return rep
		}
		if v != next.Version {
			next.Version, rolls, kind = v, true, opUpgrade
		}
	}
	if body.ImageType != "" && body.ImageType != cfg.ImageType {
		cfg.ImageType, rolls, kind = body.ImageType, true, opUpgrade
	}
	if body.MachineType != "" && body.MachineType != cfg.MachineType {
		cfg.MachineType, rolls, kind = body.MachineType, true, opUpgrade
	}
	if body.DiskSizeGb != 0 && body.DiskSizeGb != cfg.DiskSizeGb {
		cfg.DiskSizeGb, rolls, kind = body.DiskSizeGb, true, opUpgrade
	}
	if body.DiskType != "" && body.DiskType != cfg.DiskType {
		cfg.DiskType, rolls, kind = body.DiskType, true, opUpgrade
	}
	if body.Accelerators != nil {
		return invalid("accelerators", "The accelerators of node pool %q cannot be changed; create a new node pool.", p.np.Name)
	}
	if body.Locations != nil {
		if len(body.Locations) == 0 {
			return invalid("locations", "A node pool needs at least one location.")
		}
		if rep := checkLocations(c, "locations", body.Locations); rep != nil {
			return rep
		}
		next.Locations = slices.Clone(body.Locations)
	}
	if body.Labels != nil {
		cfg.Labels = body.Labels.Labels
	}
	if body.Taints != nil {
		cfg.Taints = body.Taints.Taints
	}
	if body.ResourceLabels != nil {
		cfg.ResourceLabels = body.ResourceLabels.Labels
	}
	if rep := checkConfig("", cfg, next.Version); rep != nil {
		return rep
	}
	if p.op != nil {
		return busy(p)
	}
	extra := 0
	if rolls {
		extra = p.nodes() // surge upgrade: every node is replaced
	}
	to := p.perZone * len(next.Locations)
	o := s.start(req, p, kind, to, extra, func() { p.np = next })
	return jsonReply(200, s.operation(req.BaseURL(), o, req.Now))
}

func (s *Server) getOperation(req *sim.Request, project, location, name string) *sim.Reply {
	id, ok := strings.CutPrefix(name, "operation-")
	var o *sim.Operation
	if ok {
		o = req.Operation(id)
	}
	if o == nil || infoOf(o).cluster.project != project || infoOf(o).cluster.location != location {
		return errorReply(codeNotFound, "Not found: projects/%s/locations/%s/operations/%s.", project, location, name)
	}
	return jsonReply(200, s.operation(req.BaseURL(), o, req.Now))
}

// instanceGroupManager is the part of Compute Engine's
// InstanceGroupManager the emulator serves.
type instanceGroupManager struct {
	Kind             string         `json:"kind"`
	Name             string         `json:"name"`
	Zone             string         `json:"zone"`
	SelfLink         string         `json:"selfLink"`
	BaseInstanceName string         `json:"baseInstanceName"`
	TargetSize       int            `json:"targetSize"`
	CurrentActions   map[string]int `json:"currentActions"`
	Status           map[string]any `json:"status"`
}

// getGroup answers Compute Engine's instanceGroupManagers.get for the
// instance group of a node pool in a zone: its target size, and its nodes
// by the action under way on them.
func (s *Server) getGroup(req *sim.Request, project, zone, name string) *sim.Reply {
	for _, c := range s.clusters {
		if c.project != project {
			continue
		}
		for _, p := range c.pools {
			i := slices.Index(p.np.Locations, zone)
			if p.group() != name || i < 0 {
				continue
			}
			n := len(p.np.Locations)
			ready := p.readyAt(req.Now)
			here := ready / n
			if i < ready%n {
				here++
			}
			g := instanceGroupManager{Kind: "compute#instanceGroupManager", Name: name, Zone: req.BaseURL() + "/compute/v1/projects/" + project + "/zones/" + zone,
				SelfLink:         req.BaseURL() + req.HTTP.URL.Path,
				BaseInstanceName: strings.TrimSuffix(name, "-grp"), TargetSize: p.perZone,
				CurrentActions: map[string]int{"none": min(here, p.perZone), "creating": max(p.perZone-here, 0), "deleting": max(here-p.perZone, 0)},
				Status:         map[string]any{"isStable": p.op == nil}}
			return jsonReply(200, g)
		}
	}
	return detailed(codeNotFound, nil, "The resource 'projects/%s/zones/%s/instanceGroupManagers/%s' was not found", project, zone, name)
}

// sorted returns a cluster's pools in the order they were created.
func (c *cluster) sorted() []*pool {
	out := make([]*pool, 0, len(c.pools))
	for _, p := range c.pools {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

// clonePool deep-copies a node pool through its JSON form.
func clonePool(np *container.NodePool) *container.NodePool {
	out := &container.NodePool{}
	b, err := json.Marshal(np)
	if err != nil {
		panic(fmt.Sprintf("gke: encoding a node pool: %v", err))
	}
	if err := json.Unmarshal(b, out); err != nil {
		panic(fmt.Sprintf("gke: decoding a node pool: %v", err))
	}
	return out
}

package eks

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kpool/kpool/cloudsim/sim"
	"k8s.io/utils/ptr"
)

// Node group statuses (NodegroupStatus) and update statuses (UpdateStatus)
// of the EKS model.
const (
	statusCreating     = "CREATING"
	statusActive       = "ACTIVE"
	statusUpdating     = "UPDATING"
	statusDeleting     = "DELETING"
	statusCreateFailed = "CREATE_FAILED"
	statusDeleteFailed = "DELETE_FAILED"
	statusDegraded     = "DEGRADED"

	updateInProgress = "InProgress"
	updateFailed     = "Failed"
	updateSuccessful = "Successful"

	typeConfig  = "ConfigUpdate"
	typeVersion = "VersionUpdate"
)

type cluster struct {
	name, region, account, version string
	subnets                        map[string]string // subnet id to zone name
	nodegroups                     map[string]*nodegroup
	updates                        map[string]*update // by id
	// launched counts the instances ever launched (their ids), inZone
	// those of each zone (their addresses); synced is what was last given
	// to the Kubernetes API, by node group.
	launched int
	inZone   map[string]int
	synced   map[string]string
	// capacity is EC2's, the engine's table (sim.Capacity): what each
	// zone, instance type and capacity type can still launch.
	capacity *sim.Capacity
}

func (c *cluster) arn() string {
	return fmt.Sprintf("arn:aws:eks:%s:%s:cluster/%s", c.region, c.account, c.name)
}

// nodegroup is a node group and what only the emulator knows of it.
type nodegroup struct {
	cluster *cluster
	name    string
	ng      Nodegroup // status is the idle one; the operation's wins
	token   string    // the clientRequestToken of its create
	op      *sim.Operation
	ready   int // nodes now when idle
	updates []string
	// healAt is when a DEGRADED node group is ACTIVE again: its Auto
	// Scaling group keeps launching, and EKS clears the health issue once
	// it reaches its desired capacity.
	healAt time.Time
	// instances are its Auto Scaling group's, oldest first; roll is the
	// version update replacing them; shown the labels and taints their
	// nodes carry (nodes.go).
	instances []*instance
	roll      *roll
	shown     shown
	// short is the last launch its Auto Scaling group could not make for
	// want of capacity since its last operation began (capacity.go).
	short *shortfall
	// planned are the instances its running operation reserved capacity
	// for and has not launched yet.
	planned []placement
}

// heal brings a DEGRADED node group up to its desired size as its Auto
// Scaling group does, which keeps launching: after an injected failure
// once its heal time has come, after a capacity shortfall as soon as EC2
// has the capacity (retryLaunches); EKS clears the health issue once the
// group reaches its desired capacity.
func (g *nodegroup) heal(now time.Time) {
	if g.op != nil || g.ng.Status != statusDegraded {
		return
	}
	if sim.Due(g.healAt, now) {
		g.healAt = time.Time{}
		g.ready = int(ptr.Deref(g.ng.ScalingConfig.DesiredSize, 0))
	}
	if g.healAt.IsZero() {
		g.retryLaunches(now)
	}
}

// update is an UpdateNodegroupConfig or UpdateNodegroupVersion.
type update struct {
	id, typ, nodegroup string
	params             []updateParam
	created            time.Time
	op                 *sim.Operation
	errors             []errorDetail
	// short: its operation could not launch all its instances (shortOf).
	short bool
}

func (u *update) view() updateView {
	v := updateView{ID: u.id, Type: u.typ, Params: u.params, CreatedAt: epoch(u.created), Errors: u.errors, Status: updateSuccessful}
	switch {
	case u.op.Running():
		v.Status = updateInProgress
	case u.op.Fails || u.short:
		v.Status = updateFailed
	}
	if v.Errors == nil {
		v.Errors = []errorDetail{}
	}
	return v
}

func epoch(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }

// view returns the node group as DescribeNodegroup returns it.
func (g *nodegroup) view() Nodegroup {
	v := g.ng
	v.Labels = maps.Clone(v.Labels)
	v.Tags = maps.Clone(v.Tags)
	v.Taints = slices.Clone(v.Taints)
	v.Health.Issues = slices.Clone(v.Health.Issues)
	if v.Health.Issues == nil {
		v.Health.Issues = []issue{}
	}
	if g.op != nil {
		v.Status = g.op.Kind
	}
	return v
}

func (g *nodegroup) readyAt(t time.Time) int {
	if g.op == nil {
		return g.ready
	}
	return g.op.Nodes(t)
}

// listNodegroups answers a page of names; nextToken is opaque to
// clients (here, the last name, encoded).
func (s *Server) listNodegroups(req *call) *sim.Reply {
	c, q := req.cluster, req.HTTP.URL.Query()
	size, ok := sim.PageSize(q.Get("maxResults"), s.pageSize, 100)
	if !ok {
		return invalid(c, "", "maxResults must be between 1 and 100.")
	}
	page, next, err := sim.Page(c.sortedNodegroups(), (*nodegroup).key, q.Get("nextToken"), size)
	if err != nil {
		return invalid(c, "", "The nextToken provided is invalid.")
	}
	out := struct {
		Nodegroups []string `json:"nodegroups"`
		NextToken  *string  `json:"nextToken,omitempty"`
	}{Nodegroups: []string{}}
	for _, g := range page {
		out.Nodegroups = append(out.Nodegroups, g.name)
	}
	if next != "" {
		out.NextToken = &next
	}
	return jsonReply(out)
}

// key is what the list is sorted and paged by: the name.
func (g *nodegroup) key() string { return g.name }

// nodegroup finds the node group the path names.
func (c *call) nodegroup() (*nodegroup, *sim.Reply) {
	name := c.HTTP.PathValue("nodegroup")
	if g, ok := c.cluster.nodegroups[name]; ok {
		return g, nil
	}
	return nil, ngNotFound(c.cluster, name)
}

func (s *Server) describeNodegroup(req *call) *sim.Reply {
	g, rep := req.nodegroup()
	if rep != nil {
		return rep
	}
	return jsonReply(map[string]any{"nodegroup": g.view()})
}

// createRequest is CreateNodegroupRequest.
type createRequest struct {
	NodegroupName      *string           `json:"nodegroupName"`
	ScalingConfig      *scalingConfig    `json:"scalingConfig"`
	DiskSize           *int32            `json:"diskSize"`
	Subnets            []string          `json:"subnets"`
	InstanceTypes      []string          `json:"instanceTypes"`
	AmiType            *string           `json:"amiType"`
	RemoteAccess       json.RawMessage   `json:"remoteAccess"`
	NodeRole           *string           `json:"nodeRole"`
	Labels             map[string]string `json:"labels"`
	Taints             []taint           `json:"taints"`
	Tags               map[string]string `json:"tags"`
	ClientRequestToken *string           `json:"clientRequestToken"`
	LaunchTemplate     *ltSpec           `json:"launchTemplate"`
	UpdateConfig       *updateConfig     `json:"updateConfig"`
	CapacityType       *string           `json:"capacityType"`
	Version            *string           `json:"version"`
	ReleaseVersion     *string           `json:"releaseVersion"`
}

func decode(req *call, v any) *sim.Reply {
	if len(strings.TrimSpace(string(req.Body))) == 0 {
		return failf(errSerialization, "The request body is empty.")
	}
	if err := json.Unmarshal(req.Body, v); err != nil {
		return failf(errSerialization, "The request body could not be deserialized: %v", err)
	}
	return nil
}

func (s *Server) createNodegroup(req *call) *sim.Reply {
	c := req.cluster
	var in createRequest
	if rep := decode(req, &in); rep != nil {
		return rep
	}
	name := ptr.Deref(in.NodegroupName, "")
	if g, ok := c.nodegroups[name]; ok {
		if tok := ptr.Deref(in.ClientRequestToken, ""); tok != "" && tok == g.token {
			return jsonReply(map[string]any{"nodegroup": g.view()}) // a retry of the same create
		}
		return fail(errInUse, apiError{Message: "NodeGroup already exists with name " + name + " and cluster name " + c.name,
			ClusterName: c.name, NodegroupName: name})
	}
	if len(c.nodegroups) >= maxNodegroups {
		return fail(errResourceLimit, apiError{Message: fmt.Sprintf("Cluster %s already has %d managed node groups, the limit per cluster.", c.name, maxNodegroups),
			ClusterName: c.name, NodegroupName: name})
	}
	ng, rep := s.validateCreate(c, &in)
	if rep != nil {
		return rep
	}
	ng.CreatedAt, ng.ModifiedAt = epoch(req.Now), epoch(req.Now)
	g := &nodegroup{cluster: c, name: name, ng: *ng, token: ptr.Deref(in.ClientRequestToken, "")}
	c.nodegroups[name] = g
	o := req.Start(statusCreating, 0, int(*ng.ScalingConfig.DesiredSize), 0)
	s.begin(o, g, nil)
	g.reserve(o.To)
	rep = jsonReply(map[string]any{"nodegroup": g.view()})
	rep.Created, rep.Resource = true, req.HTTP.URL.Path+"/"+name
	return rep
}

// begin makes o the operation in progress on g, and u's when it is an
// update's.
func (s *Server) begin(o *sim.Operation, g *nodegroup, u *update) {
	g.op, g.short = o, nil
	o.Data = g
	o.Done = func(o *sim.Operation) { finish(o, g, u) }
}

// finish applies an operation's outcome to its node group when it ends.
func finish(o *sim.Operation, g *nodegroup, u *update) {
	g.advance(o.End) // its instances as the operation leaves them
	g.unplan()
	g.op = nil
	g.ready = o.To
	g.ng.ModifiedAt = epoch(o.End)
	c := g.cluster
	const injected = " (fault injected by kpool cloudsim)"
	asg := g.asgName()
	switch {
	case shortOf(o, g, u):
	case o.Kind == statusDeleting && !o.Fails:
		delete(c.nodegroups, g.name)
	case o.Kind == statusDeleting:
		g.ng.Status = statusDeleteFailed
		g.ng.Health.Issues = []issue{{Code: "Ec2SecurityGroupDeletionFailure",
			Message: "DependencyViolation - resource has a dependent object" + injected, ResourceIDs: []string{"sg-0a1b2c3d4e5f60718"}}}
	case o.Kind == statusCreating && o.Fails:
		g.ng.Status = statusCreateFailed
		// Not a capacity shortfall (shortOf says those): an instance lost
		// at launch, in the words of hashicorp/terraform-provider-aws#39904
		// with EC2's Client.InternalError state reason.
		g.ng.Health.Issues = []issue{{Code: codeLaunchFailures,
			Message:     "Instance became unhealthy while waiting for instance to be in InService state. Termination Reason: Client.InternalError: Client error on launch" + injected,
			ResourceIDs: []string{asg}}}
	case o.Fails && u != nil && u.typ == typeVersion:
		// The nodes that could not be drained keep the old version; the
		// node group stays usable.
		g.ng.Status = statusActive
		u.errors = []errorDetail{{ErrorCode: "PodEvictionFailure",
			ErrorMessage: "Reached max retries while trying to evict pods from nodes in node group " + g.name + injected, ResourceIDs: []string{g.name}}}
	case o.Fails:
		g.ng.Status = statusDegraded
		g.healAt = o.HealAt()
		g.ng.Health.Issues = []issue{{Code: "AsgInstanceLaunchFailures",
			Message:     "Could not launch Spot Instances or On-Demand Instances: the Auto Scaling group could not reach its desired capacity." + injected,
			ResourceIDs: []string{asg}}}
		if u != nil {
			u.errors = []errorDetail{{ErrorCode: "AsgInstanceLaunchFailures", ErrorMessage: g.ng.Health.Issues[0].Message, ResourceIDs: []string{asg}}}
		}
	default:
		g.ng.Status = statusActive
		g.ng.Health.Issues = nil
		if u != nil && u.typ == typeVersion {
			for _, p := range u.params {
				switch p.Type {
				case "Version":
					g.ng.Version = p.Value
				case "ReleaseVersion":
					g.ng.ReleaseVersion = p.Value
				case "LaunchTemplateVersion":
					g.ng.LaunchTemplate.Version = ptr.To(p.Value)
				}
			}
		}
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// busy refuses a second operation on a node group, as EKS does.
func busy(c *cluster, g *nodegroup, what string) *sim.Reply {
	st := g.view().Status
	return fail(errInUse, apiError{Message: fmt.Sprintf("Nodegroup %s cannot be %s as it is currently not in Active State (status %s).", g.name, what, st),
		ClusterName: c.name, NodegroupName: g.name})
}

func (s *Server) deleteNodegroup(req *call) *sim.Reply {
	g, rep := req.nodegroup()
	if rep != nil {
		return rep
	}
	if g.op != nil {
		return busy(req.cluster, g, "deleted")
	}
	o := req.Start(statusDeleting, len(g.instances), 0, 0)
	s.begin(o, g, nil)
	return jsonReply(map[string]any{"nodegroup": g.view()})
}

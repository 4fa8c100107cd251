package civo

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kpool/kpool/cloudsim/sim"
)

// Instance statuses. Civo's pools have no status of their own: a pool is
// as far along as its instances.
const (
	StatusBuilding = "BUILDING"
	StatusActive   = "ACTIVE"
	StatusDeleting = "DELETING"
	StatusError    = "ERROR"
)

// PoolLabel is the label Civo puts on every node of a pool (and lists
// among the pool's labels), its value the pool id.
const PoolLabel = "kubernetes.civo.com/civo-node-pool"

// The kinds of operation on a pool.
const (
	opCreating = "Creating"
	opScaling  = "Scaling"
	opDeleting = "Deleting"
)

// Wire shapes, as civogo's KubernetesPool, KubernetesInstance and
// corev1.Taint carry them.
type (
	// Taint is a Kubernetes taint (corev1.Taint's JSON).
	Taint struct {
		Key       string  `json:"key"`
		Value     string  `json:"value,omitempty"`
		Effect    string  `json:"effect"`
		TimeAdded *string `json:"timeAdded,omitempty"`
	}
	// Instance is a node of a pool (KubernetesInstance).
	Instance struct {
		ID            string    `json:"id"`
		Hostname      string    `json:"hostname"`
		Size          string    `json:"size"`
		Region        string    `json:"region"`
		SourceType    string    `json:"source_type"`
		SourceID      string    `json:"source_id"`
		InitialUser   string    `json:"initial_user"`
		Status        string    `json:"status"`
		FirewallID    string    `json:"firewall_id"`
		PublicIP      string    `json:"public_ip"`
		CPUCores      int       `json:"cpu_cores"`
		RAMMegabytes  int       `json:"ram_mb"`
		DiskGigabytes int       `json:"disk_gb"`
		Tags          []string  `json:"tags"`
		CreatedAt     time.Time `json:"created_at"`
	}
	// Pool is a pool as GET returns it (KubernetesPool).
	Pool struct {
		ID               string            `json:"id"`
		Count            int               `json:"count"`
		Size             string            `json:"size"`
		InstanceNames    []string          `json:"instance_names"`
		Instances        []Instance        `json:"instances"`
		Labels           map[string]string `json:"labels"`
		Taints           []Taint           `json:"taints"`
		PublicIPNodePool bool              `json:"public_ip_node_pool"`
		Region           string            `json:"region"`
	}
)

// pool is a pool and what only the emulator knows of it.
type pool struct {
	cluster  *cluster
	id, size string
	count    int
	labels   map[string]string // without PoolLabel
	taints   []Taint
	publicIP bool
	created  time.Time
	insts    []*instance // the first ones are the oldest
	op       *sim.Operation
	// healAt is when a pool whose operation failed is whole again:
	// Civo keeps trying to build (or remove) the nodes it could not.
	healAt time.Time
	seq    int
}

// instance is a node; status is its idle one (ACTIVE or ERROR), the
// running operation's wins.
type instance struct {
	id, hostname, publicIP string
	status                 string
	created                time.Time
}

// newInstance adds a node to the pool.
func (s *Server) newInstance(p *pool, now time.Time) *instance {
	p.seq++
	id := s.NewID()
	in := &instance{id: id, status: StatusBuilding, created: now,
		hostname: fmt.Sprintf("k3s-%s-%s-%s-%s", p.cluster.Name, short(p.cluster.ID), short(p.id), id[:5])}
	if p.publicIP {
		in.publicIP = fmt.Sprintf("74.220.%d.%d", 16+p.seq/250%200, 1+p.seq%250)
	}
	return in
}

func short(s string) string {
	s = strings.ReplaceAll(s, "-", "")
	if len(s) > 6 {
		return s[:6]
	}
	return s
}

// statuses returns the pool's instances as they are at now, with their
// statuses.
func (p *pool) statuses(now time.Time) ([]*instance, []string) {
	insts := p.insts
	st := make([]string, len(insts))
	for i, in := range insts {
		st[i] = in.status
	}
	o := p.op
	if o == nil {
		return insts, st
	}
	n := o.Nodes(now)
	switch {
	case o.Kind == opDeleting:
		insts = insts[:min(n, len(insts))]
		st = st[:len(insts)]
		for i := range st {
			st[i] = StatusDeleting
		}
	case grows(o):
		// A node is ACTIVE once built: after the operation's fixed time,
		// the last one at its end.
		n = o.NodesReady(now)
		for i := range st {
			if i >= o.From {
				st[i] = StatusActive
				if i >= n {
					st[i] = StatusBuilding
				}
			}
		}
	default: // shrinking
		insts = insts[:min(n, len(insts))]
		st = st[:len(insts)]
		for i := range st {
			if i >= p.count {
				st[i] = StatusDeleting
			}
		}
	}
	return insts, st
}

// view returns the pool as Civo's GET returns it at now.
func (p *pool) view(now time.Time) Pool {
	v := Pool{ID: p.id, Count: p.count, Size: p.size, Region: p.cluster.Region, PublicIPNodePool: p.publicIP,
		Labels: maps.Clone(p.labels), Taints: slices.Clone(p.taints), InstanceNames: []string{}, Instances: []Instance{}}
	if v.Labels == nil {
		v.Labels = map[string]string{}
	}
	v.Labels[PoolLabel] = p.id
	if v.Taints == nil {
		v.Taints = []Taint{}
	}
	spec := sizes[p.size]
	insts, st := p.statuses(now)
	for i, in := range insts {
		v.InstanceNames = append(v.InstanceNames, in.hostname)
		v.Instances = append(v.Instances, Instance{
			ID: in.id, Hostname: in.hostname, Size: p.size, Region: p.cluster.Region, SourceType: "diskimage",
			SourceID: "talos-v1.5.0", InitialUser: "civo", Status: st[i], FirewallID: p.cluster.ID,
			PublicIP: in.publicIP, CPUCores: spec.cpu, RAMMegabytes: spec.ramMB, DiskGigabytes: spec.diskGB,
			Tags: []string{"k3s-cluster=" + p.cluster.Name}, CreatedAt: in.created.UTC(),
		})
	}
	return v
}

// start begins an operation on p from..to nodes, superseding any other
// (its end then changes nothing).
func (s *Server) start(req *sim.Request, p *pool, kind string, from, to int) {
	o := req.Start(kind, from, to, 0)
	p.op, p.healAt = o, time.Time{}
	o.Data = &opData{pool: p, from: from, to: to}
	o.Done = func(o *sim.Operation) { finish(o, p) }
}

// opData is the emulator's record of an operation: the node counts it
// was asked to go between (a failed one's To is half way, which for a
// shrink of one node is From).
type opData struct {
	pool     *pool
	from, to int
}

// grows reports whether an operation adds nodes.
func grows(o *sim.Operation) bool {
	d := o.Data.(*opData)
	return d.to > d.from
}

// finish applies an operation's outcome to its pool when it ends.
func finish(o *sim.Operation, p *pool) {
	if p.op != o {
		return // superseded
	}
	p.op = nil
	switch {
	case o.Kind == opDeleting && !o.Fails:
		delete(p.cluster.pools, p.id)
		return
	case o.Kind == opDeleting:
		// The nodes that could not be removed keep running; the pool stays.
		p.insts = p.insts[:min(o.To, len(p.insts))]
		for _, in := range p.insts {
			in.status = StatusActive
		}
		return
	case grows(o):
		for i, in := range p.insts {
			if i >= o.From {
				in.status = StatusActive
				if i >= o.To {
					in.status = StatusError // the build failed
				}
			}
		}
	default: // shrank
		p.insts = p.insts[:min(o.To, len(p.insts))]
		for i, in := range p.insts {
			if i >= p.count {
				in.status = StatusError // the removal failed
			}
		}
	}
	if o.Fails {
		p.healAt = o.End.Add(o.End.Sub(o.Start)) // as long again as the operation took
	}
}

// heal finishes what a failed operation left: nodes that failed to build
// are up, those that failed to go are gone.
func (p *pool) heal(now time.Time) {
	if p.op != nil || p.healAt.IsZero() || now.Before(p.healAt) {
		return
	}
	p.healAt = time.Time{}
	p.dropErrors(true)
}

// dropErrors removes the nodes in ERROR (replace: those within the count
// come back ACTIVE instead).
func (p *pool) dropErrors(replace bool) {
	var keep []*instance
	for i, in := range p.insts {
		if in.status != StatusError {
			keep = append(keep, in)
			continue
		}
		if replace && i < p.count {
			in.status = StatusActive
			keep = append(keep, in)
		}
	}
	p.insts = keep
}

// failedNodes counts the pool's nodes in ERROR.
func (p *pool) failedNodes() int {
	n := 0
	for _, in := range p.insts {
		if in.status == StatusError {
			n++
		}
	}
	return n
}

// PoolState is a pool as GET returns it now, plus what only the emulator
// knows.
type PoolState struct {
	Pool
	// Operation is the kind of the operation in progress (Creating,
	// Scaling, Deleting); "" when idle.
	Operation string
	// Created is when the pool was created.
	Created time.Time
}

// PoolOf returns a pool as Civo would return it now; false if there is
// none. region must be the cluster's.
func (s *Server) PoolOf(region, clusterID, id string) (st PoolState, found bool) {
	s.Do(func(now time.Time) {
		s.heal(now)
		c, ok := s.clusters[clusterID]
		if !ok || !strings.EqualFold(c.Region, region) {
			return
		}
		p, ok := c.pools[id]
		if !ok {
			return
		}
		st, found = PoolState{Pool: p.view(now), Created: p.created}, true
		if p.op != nil {
			st.Operation = p.op.Kind
		}
	})
	return st, found
}

// Mutate changes a pool behind the client's back, as someone using Civo's
// dashboard would: fn may change its labels, taints, count, size and public
// IP setting (instances and the id are the emulator's). A count change is
// applied at once, with no operation.
func (s *Server) Mutate(region, clusterID, id string, fn func(*Pool)) (err error) {
	s.Do(func(now time.Time) {
		c, ok := s.clusters[clusterID]
		if !ok || !strings.EqualFold(c.Region, region) {
			err = fmt.Errorf("civo: no cluster %s in %s", clusterID, region)
			return
		}
		p, ok := c.pools[id]
		if !ok {
			err = fmt.Errorf("civo: no pool %s in cluster %s", id, clusterID)
			return
		}
		v := p.view(now)
		fn(&v)
		delete(v.Labels, PoolLabel)
		p.labels, p.taints, p.size, p.publicIP = v.Labels, v.Taints, v.Size, v.PublicIPNodePool
		if v.Count >= 1 && v.Count != p.count && p.op == nil {
			p.count = v.Count
			for len(p.insts) < p.count {
				in := s.newInstance(p, now)
				in.status = StatusActive
				p.insts = append(p.insts, in)
			}
			p.insts = p.insts[:p.count]
		}
	})
	return err
}

func poolNotFound(c *cluster, id string) *sim.Reply {
	return failf(http.StatusNotFound, codePoolNotFound, "The requested pool %s could not be found in Kubernetes cluster %s", id, c.ID)
}

func (s *Server) listPools(req *sim.Request, c *cluster) *sim.Reply {
	ids := make([]string, 0, len(c.pools))
	for id := range c.pools {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		a, b := c.pools[ids[i]], c.pools[ids[j]]
		if !a.created.Equal(b.created) {
			return a.created.Before(b.created)
		}
		return ids[i] < ids[j]
	})
	out := make([]Pool, 0, len(ids))
	for _, id := range ids {
		out = append(out, c.pools[id].view(req.Now))
	}
	return jsonReply(out)
}

func (s *Server) getPool(req *sim.Request, c *cluster, id string) *sim.Reply {
	p, ok := c.pools[id]
	if !ok {
		return poolNotFound(c, id)
	}
	return jsonReply(p.view(req.Now))
}

func (s *Server) createPool(req *sim.Request, c *cluster, in *poolRequest) *sim.Reply {
	if in.ID == "" {
		in.ID = s.NewID() // Civo names a pool it is given no id for
	}
	if _, ok := c.pools[in.ID]; ok {
		return failf(http.StatusConflict, codeDuplicate, "A pool with the id %s already exists in Kubernetes cluster %s", in.ID, c.ID)
	}
	if rep := validateCreate(in); rep != nil {
		return rep
	}
	p := &pool{cluster: c, id: in.ID, size: in.Size, count: *in.Count, labels: maps.Clone(in.Labels),
		publicIP: in.PublicIPNodePool != nil && *in.PublicIPNodePool, created: req.Now}
	if in.Taints != nil {
		p.taints = slices.Clone(*in.Taints)
	}
	delete(p.labels, PoolLabel)
	for range p.count {
		p.insts = append(p.insts, s.newInstance(p, req.Now))
	}
	c.pools[p.id] = p
	s.start(req, p, opCreating, 0, p.count)
	rep := success(p.id)
	rep.Created, rep.Resource = true, req.HTTP.URL.Path+"/"+p.id
	return rep
}

func (s *Server) updatePool(req *sim.Request, c *cluster, id string, in *poolRequest) *sim.Reply {
	p, ok := c.pools[id]
	if !ok {
		return poolNotFound(c, id)
	}
	if rep := validateUpdate(p, in); rep != nil {
		return rep
	}
	target := p.count
	if in.Count != nil {
		target = *in.Count
	}
	// A PUT of the count rebuilds what a failed operation left in ERROR.
	rebuild := in.Count != nil && p.failedNodes() > 0
	resize := target != p.count || rebuild
	if p.op != nil && (p.op.Kind == opDeleting || resize) {
		return failf(http.StatusConflict, codeBusy, "The pool %s is already %s; try again once it is done", p.id, strings.ToLower(p.op.Kind))
	}
	if in.Labels != nil {
		p.labels = maps.Clone(in.Labels)
		delete(p.labels, PoolLabel)
	}
	if in.Taints != nil {
		p.taints = slices.Clone(*in.Taints)
	}
	if resize {
		p.healAt = time.Time{}
		p.dropErrors(false)
		from := len(p.insts)
		p.count = target
		for len(p.insts) < target {
			p.insts = append(p.insts, s.newInstance(p, req.Now))
		}
		if from != target {
			s.start(req, p, opScaling, from, target)
		}
	}
	return jsonReply(p.view(req.Now))
}

func (s *Server) deletePool(req *sim.Request, c *cluster, id string) *sim.Reply {
	p, ok := c.pools[id]
	if !ok {
		return poolNotFound(c, id)
	}
	if p.op != nil && p.op.Kind == opDeleting {
		return success(p.id) // already going
	}
	insts, _ := p.statuses(req.Now)
	p.insts = insts
	s.start(req, p, opDeleting, len(insts), 0)
	return success(p.id)
}

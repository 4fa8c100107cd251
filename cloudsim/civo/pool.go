package civo

import (
	"fmt"
	"maps"
	"slices"
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

package civo

import (
	"fmt"
	"hash/fnv"
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
// corev1.Taint carry them, with every member of the pool civogo's
// pool_test.go TestGetKubernetesPool records.
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
		ID              string    `json:"id"`
		Name            string    `json:"name"`
		Hostname        string    `json:"hostname"`
		AccountID       string    `json:"account_id"`
		Size            string    `json:"size"`
		FirewallID      string    `json:"firewall_id"`
		SourceType      string    `json:"source_type"`
		SourceID        string    `json:"source_id"`
		NetworkID       string    `json:"network_id"`
		InitialUser     string    `json:"initial_user"`
		InitialPassword string    `json:"initial_password"`
		SSHKey          string    `json:"ssh_key"`
		Tags            []string  `json:"tags"`
		Script          string    `json:"script"`
		Status          string    `json:"status"`
		CivoStatsdToken string    `json:"civostatsd_token"`
		PublicIP        string    `json:"public_ip"`
		PrivateIP       string    `json:"private_ip"`
		NamespaceID     string    `json:"namespace_id"`
		Notes           string    `json:"notes"`
		ReverseDNS      string    `json:"reverse_dns"`
		Region          string    `json:"region,omitempty"` // in a cluster's instances only
		CPUCores        int       `json:"cpu_cores"`
		RAMMegabytes    int       `json:"ram_mb"`
		DiskGigabytes   int       `json:"disk_gb"`
		CreatedAt       time.Time `json:"created_at"`
	}
	// Pool is a pool as GET returns it (KubernetesPool). Civo's pool
	// carries no region: it is its cluster's.
	Pool struct {
		ID               string            `json:"id"`
		Count            int               `json:"count"`
		Size             string            `json:"size"`
		InstanceNames    []string          `json:"instance_names"`
		Instances        []Instance        `json:"instances"`
		Labels           map[string]string `json:"labels"`
		Annotations      map[string]string `json:"annotations"`
		Taints           []Taint           `json:"taints"`
		PublicIPNodePool bool              `json:"public_ip_node_pool"`
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
	id, hostname, publicIP, privateIP string
	status                            string
	created                           time.Time
	// held is the size whose capacity the node holds ("" none: it is
	// short, or gave it back); short: it could not start for want of
	// capacity, and stays in ERROR until a PUT of the count drops it.
	held  string
	short bool
}

// newInstance adds a node to the pool.
func (s *Server) newInstance(p *pool, now time.Time) *instance {
	p.seq++
	id := s.NewID()
	// Civo's node names: k3s-<cluster name>-<the cluster id's first 4
	// and next 6 characters>-node-pool-<the pool id's first 4>-<5 random>
	// (Civo's docs show k3s-docs-demo-614e-9e2f67-node-pool-1372-dnz9h);
	// the node's name is the instance's hostname (Civo's cloud controller
	// manager finds an instance by its node's name).
	cid := short(p.cluster.ID, 10)
	in := &instance{id: id, status: StatusBuilding, created: now, privateIP: fmt.Sprintf("192.168.%d.%d", 1+p.seq/250%250, 2+p.seq%250),
		hostname: fmt.Sprintf("k3s-%s-%s-%s-node-pool-%s-%s", p.cluster.Name, cid[:min(4, len(cid))], cid[min(4, len(cid)):], short(p.id, 4), suffix(id))}
	if p.publicIP {
		in.publicIP = fmt.Sprintf("74.220.%d.%d", 16+p.seq/250%200, 1+p.seq%250)
	}
	return in
}

// suffix is a node name's random end, made from an instance id: five
// characters of the alphabet Kubernetes' generated names use.
func suffix(id string) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	n := h.Sum32()
	out := make([]byte, 5)
	for i := range out {
		out[i] = alphabet[n%uint32(len(alphabet))]
		n /= uint32(len(alphabet))
	}
	return string(out)
}

// short is s without dashes, cut to n characters.
func short(s string, n int) string {
	s = strings.ReplaceAll(s, "-", "")
	if len(s) > n {
		return s[:n]
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
			if i >= o.From && !insts[i].short {
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
	v := Pool{ID: p.id, Count: p.count, Size: p.size, PublicIPNodePool: p.publicIP, Labels: maps.Clone(p.labels),
		Annotations: map[string]string{}, Taints: slices.Clone(p.taints), InstanceNames: []string{}, Instances: []Instance{}}
	if v.Labels == nil {
		v.Labels = map[string]string{}
	}
	v.Labels[PoolLabel] = p.id
	if v.Taints == nil {
		v.Taints = []Taint{}
	}
	spec := sizes[p.size]
	insts, st := p.statuses(now)
	c := p.cluster
	for i, in := range insts {
		v.InstanceNames = append(v.InstanceNames, in.hostname)
		v.Instances = append(v.Instances, Instance{
			ID: in.id, Name: in.hostname, Hostname: in.hostname, AccountID: accountID, Size: p.size, FirewallID: c.ID,
			SourceType: "diskimage", SourceID: c.Version, NetworkID: c.networkID(), InitialUser: "root", SSHKey: "-",
			Tags: []string{"k3s"}, Status: st[i], PublicIP: in.publicIP, PrivateIP: in.privateIP,
			NamespaceID: "cust-default-" + short(accountID, 8), CPUCores: spec.cpu, RAMMegabytes: spec.ramMB,
			DiskGigabytes: spec.diskGB, CreatedAt: in.created.UTC(),
		})
	}
	return v
}

// accountID is the emulator's one account.
const accountID = "6b1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"

// networkID is the id of the cluster's network, made from its own.
func (c *cluster) networkID() string { return "0e" + c.ID[min(2, len(c.ID)):] }

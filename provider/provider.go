// Package provider is the contract between kpool and the clouds: one Driver
// per provider with the ADR's four node-pool operations (List, Create,
// Update, Delete; a single pool is found by listing), the capabilities each
// provider has, the per-field change plan, zone mapping and provider pool
// names. Drivers live in the subpackages (aks, …); unsupported answers k3s
// and microVM clusters with NOT_IMPLEMENTED.
package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/kpool/kpool"
)

// The labels of the placement contract. Every pool kpool creates carries
// LabelPool (its kpool name) and, when it is in exactly one zone, LabelZone
// (the logical zone). Updates never change them.
const (
	LabelPool = "kompox.dev/node-pool"
	LabelZone = "kompox.dev/node-zone"
)

// Driver manages the node pools of one provider. Calls never wait for a
// long-running operation: they start it and return, and progress is seen
// through NodePoolList. Every error is an *Error.
type Driver interface {
	Capabilities() Capabilities
	// NodePoolList returns every pool of the cluster, kpool's and others.
	NodePoolList(ctx context.Context, c *kpool.Cluster) ([]Pool, error)
	// NodePoolCreate creates a pool. A pool of that provider name that
	// already matches the spec is returned as it is; one that differs in a
	// field only a new pool can change is a validation error; one that
	// differs only in fields an update can change is ErrAlreadyExists.
	NodePoolCreate(ctx context.Context, c *kpool.Cluster, s PoolSpec) (*Pool, error)
	// NodePoolUpdate changes an existing pool to the spec. Changing a
	// field the provider cannot change in place is a validation error.
	NodePoolUpdate(ctx context.Context, c *kpool.Cluster, s PoolSpec) (*Pool, error)
	// NodePoolDelete deletes a pool by provider name; a missing pool is not
	// an error.
	NodePoolDelete(ctx context.Context, c *kpool.Cluster, providerName string) error
}

// PoolSpec is what a driver is asked to create or change: the pool's spec
// in provider-neutral terms, zones already logical, labels including the
// placement contract's.
type PoolSpec struct {
	Name         string // the kpool name
	ProviderName string
	Mode         string // system or user
	MachineType  string
	Count        int
	Autoscaling  bool
	MinCount     int
	MaxCount     int
	Zones        []string // logical, sorted
	DiskSizeGB   int
	DiskType     string
	Spot         bool
	Accelerators []kpool.Accelerator
	Labels       map[string]string
	Taints       []kpool.Taint
	Version      string
	// Tags are the user's cloud resource tags, without the owner's mark.
	Tags map[string]string
	// Owner is the owner's mark: the one a driver is to write (on create,
	// and on an update of a pool that has none), and the one a listed
	// pool carries (zero: none). Drivers keep it out of Tags and Labels.
	Owner Owner
	// Settings are provider-only inputs with no neutral form (user data, an
	// image, a shape's size), by their name in the platform block.
	Settings map[string]string
	// Upgrade is the pool's update strategy as the cloud's own upgrade
	// settings take it (nil: the spec sets none; the cloud's defaults).
	Upgrade *Upgrade
}

// Upgrade is how a cloud rolls a pool's nodes (a version upgrade, a change
// that rolls nodes, OKE's node cycling), from spec.updateStrategy: AKS
// upgradeSettings, EKS updateConfig, GKE upgradeSettings, OKE
// nodePoolCyclingDetails and nodeEvictionNodePoolSettings. A zero field
// is one the spec leaves unset: the driver sends nothing for it. What a
// cloud lacks kpool's controllers carry out themselves (a replacement,
// its drain and soak), and the profile refuses at submit a value the
// cloud would refuse.
type Upgrade struct {
	MaxSurge       string // "1", "33%"
	MaxUnavailable string // "0", "25%"
	DrainTimeout   time.Duration
	Soak           time.Duration
	// Force deletes pods past their disruption budgets once DrainTimeout
	// is over (onStuck: Force): EKS's force flag on a version update,
	// OKE's isForceDeleteAfterGraceDuration.
	Force bool
	// Cycle asks the cloud to replace the nodes that run an earlier
	// configuration (OKE's node cycling, isNodeCyclingEnabled); an update
	// sends it, it is never read back.
	Cycle bool
}

// State is a pool's lifecycle at the provider, in kpool's words.
type State string

const (
	StateCreating State = "Creating"
	StateReady    State = "Ready"
	StateUpdating State = "Updating"
	StateDeleting State = "Deleting"
	StateFailed   State = "Failed"
	StateUnknown  State = "Unknown"
)

// Pool is a pool as the provider reports it. Its PoolSpec is the observed
// spec (Name comes from the LabelPool label; "" for a pool kpool did not
// create).
type Pool struct {
	PoolSpec
	State State
	// ProviderState is the provider's own provisioning state, verbatim.
	ProviderState string
	// Message is the provider's own account of the state, when it gives
	// one: why the last operation failed, the pool's health issues. The
	// controllers put it in the pool's status.
	Message string
	// Nodes is the node count the provider reports; ReadyNodes those
	// known to be up (equal to Nodes once the pool is Ready). A provider
	// that does not say how many nodes are up while an operation runs (ARM
	// gives only the target count) sets ReadyUnknown instead of reporting
	// 0: the controllers then keep the last count they knew (a scale from 3
	// to 5 shows 3 until it ends, not 0).
	Nodes        int
	ReadyNodes   int
	ReadyUnknown bool
	NodesByZone  map[string]int
	// StaleNodes are nodes still running an earlier configuration, on a
	// provider that applies changes to new nodes only (OKE): they change
	// when the pool is cycled.
	StaleNodes int
	// Extra holds provider-specific facts (ids, image versions…).
	Extra map[string]string
	// Problems lists breaches of the placement label contract.
	Problems []string
	// Shortage is set when the cloud says it could not start the pool's
	// nodes for want of capacity (its last operation failed, or its health
	// says so): the pool has fewer nodes than it asks for until capacity
	// comes back or the spec asks for less. Nil: no shortage reported.
	Shortage *Shortage
}

// Shortage is a cloud's account of capacity it lacks for a pool: not a
// quota of the account (KindQuota) and not the spec's fault.
type Shortage struct {
	// Code is the cloud's own code: ZonalAllocationFailed,
	// InsufficientInstanceCapacity, ZONE_RESOURCE_POOL_EXHAUSTED, …
	Code string
	// Message is the cloud's words, on one line (FirstLine).
	Message string
	// Zones are the logical zones the cloud names as short; nil when it
	// names none (then the pool's zones, or the pool has none).
	Zones []string
}

// Find returns the pool of a provider name from a list.
func Find(pools []Pool, providerName string) (*Pool, bool) {
	for i := range pools {
		if pools[i].ProviderName == providerName {
			return &pools[i], true
		}
	}
	return nil, false
}

// CheckContract reports how a pool's labels break the placement contract:
// LabelPool must be set; LabelZone must be set to the zone of a single-zone
// pool and absent otherwise.
func CheckContract(p *Pool) []string {
	var out []string
	name := p.Labels[LabelPool]
	if name == "" {
		out = append(out, "label "+LabelPool+" is missing")
	}
	zone, hasZone := p.Labels[LabelZone]
	switch {
	case len(p.Zones) == 1 && zone != p.Zones[0]:
		out = append(out, fmt.Sprintf("label %s is %q, want %q (the pool's only zone)", LabelZone, zone, p.Zones[0]))
	case len(p.Zones) != 1 && hasZone:
		out = append(out, fmt.Sprintf("label %s is %q on a pool in %d zones", LabelZone, zone, len(p.Zones)))
	}
	return out
}

// Desired builds what a driver is asked for from a kpool pool and its
// cluster: zones mapped to logical ones, the spec's labels and taints merged
// with the platform block's, and the placement labels added.
func Desired(p Profile, c *kpool.Cluster, pool *kpool.NodePool) (PoolSpec, error) {
	s := &pool.Spec
	zones, _, err := PoolZones(p, c, s)
	if err != nil {
		return PoolSpec{}, err
	}
	b := p.Block(c, s)
	d := PoolSpec{
		Name: pool.Name, ProviderName: pool.ProviderName, Mode: s.Mode, Count: s.Count(),
		Zones: zones, Labels: Labels(b, s), Taints: Taints(b, s), Version: s.KubernetesVersion, Tags: s.Tags,
		MachineType: b.MachineType, DiskSizeGB: b.DiskSizeGB, DiskType: b.DiskType, Spot: b.Spot,
		Accelerators: b.Accelerators, Settings: b.Extra, Upgrade: UpgradeOf(s.UpdateStrategy),
	}
	if a := s.Autoscaling; a.On() {
		d.Autoscaling = true
		if a.MinNodes != nil {
			d.MinCount = *a.MinNodes
		}
		if a.MaxNodes != nil {
			d.MaxCount = *a.MaxNodes
		}
	}
	d.Labels[LabelPool] = pool.LogicalPool()
	if len(zones) == 1 {
		d.Labels[LabelZone] = zones[0]
	}
	return d, nil
}

// UpgradeOf maps a spec's update strategy onto a cloud's upgrade
// settings: the fields it sets (nil: none set).
func UpgradeOf(u *kpool.UpdateStrategy) *Upgrade {
	if u == nil {
		return nil
	}
	up := &Upgrade{MaxSurge: u.MaxSurge, MaxUnavailable: u.MaxUnavailable, Force: u.OnStuck == kpool.OnStuckForce}
	up.DrainTimeout, _ = time.ParseDuration(u.DrainTimeout)
	up.Soak, _ = time.ParseDuration(u.Soak)
	if *up == (Upgrade{}) {
		return nil
	}
	return up
}

// Labels returns spec.labels merged with the platform block's labels.
// Validation refuses a key given twice with different values.
func Labels(b Block, s *kpool.NodePoolSpec) map[string]string {
	out := make(map[string]string, len(b.Labels)+len(s.Labels)+2)
	for k, v := range b.Labels {
		out[k] = v
	}
	for k, v := range s.Labels {
		out[k] = v
	}
	return out
}

// Taints returns spec.taints followed by the platform block's taints,
// without exact duplicates.
func Taints(b Block, s *kpool.NodePoolSpec) []kpool.Taint {
	var out []kpool.Taint
	seen := map[kpool.Taint]bool{}
	for _, list := range [][]kpool.Taint{s.Taints, b.Taints} {
		for _, t := range list {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// Unsupported is the driver of a platform without node pools (k3s,
// microVMs via flintlock) or without a configured driver: every call is
// NOT_IMPLEMENTED, deterministically, so callers treat it as a capability
// boundary and never retry.
type Unsupported struct{ Profile Profile }

func (u Unsupported) Capabilities() Capabilities { return u.Profile.Capabilities() }

func (u Unsupported) err(op string) error {
	t := u.Profile.Type()
	if u.Profile.Capabilities().NodePools {
		return NotImplementedError(t, "%s: no %s driver is configured in this kpool", op, t)
	}
	return NoPoolsError(u.Profile, op)
}

func (u Unsupported) NodePoolList(context.Context, *kpool.Cluster) ([]Pool, error) {
	return nil, u.err("NodePoolList")
}

func (u Unsupported) NodePoolCreate(context.Context, *kpool.Cluster, PoolSpec) (*Pool, error) {
	return nil, u.err("NodePoolCreate")
}

func (u Unsupported) NodePoolUpdate(context.Context, *kpool.Cluster, PoolSpec) (*Pool, error) {
	return nil, u.err("NodePoolUpdate")
}

func (u Unsupported) NodePoolDelete(context.Context, *kpool.Cluster, string) error {
	return u.err("NodePoolDelete")
}

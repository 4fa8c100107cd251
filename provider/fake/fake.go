// Package fake is an in-memory provider.Driver for tests. Pools live in a
// map; creates, updates and deletes are operations that take time on a
// clock the test moves (Creating → Ready, Updating → Ready, Deleting →
// gone, nodes coming and going one at a time); every call is logged; errors
// can be scripted per call or per pool, or rolled at a fault rate, and a
// rate limit answers Throttled with a Retry-After.
//
// It behaves like a real provider where the controllers rely on it: a
// create is idempotent by provider name, fields the provider cannot change
// in place (its capabilities say which) are validation errors, a missing
// pool is NotFound, a pool keeps the owner's mark it was created with (an
// unmarked one takes the mark of its next update) and one marked by
// another owner is neither adopted nor changed, and it passes the driver conformance suite
// (provider/providertest).
package fake

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
)

// Clock tells the driver what time it is; operations end and nodes come up
// as it moves. k8s.io/utils/clock/testing's FakeClock is one.
type Clock interface {
	Now() time.Time
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// Op is one of the driver's operations.
type Op string

const (
	List   Op = "list"
	Create Op = "create"
	Update Op = "update"
	Delete Op = "delete"
)

// Fault is a fault the driver injected into a call.
type Fault string

const (
	// FaultThrottled: refused by the rate limit, with a Retry-After.
	FaultThrottled Fault = "throttled"
	// FaultError: refused with a transient error; nothing was done.
	FaultError Fault = "error"
	// FaultUnavailable: refused with a transient error and a Retry-After
	// of one second; nothing was done.
	FaultUnavailable Fault = "unavailable"
	// FaultLostReply: done, but answered with a transient error, as when
	// a reply is lost on the way back.
	FaultLostReply Fault = "lost reply"
	// FaultFailLater: accepted; the operation fails when it ends and the
	// pool is left Failed, with the provider's reason in its Message.
	FaultFailLater Fault = "failed operation"
	// FaultHang: the cluster's endpoint accepted the call and never
	// answered; the call ended when its context did (see Hang).
	FaultHang Fault = "hang"
)

// Call is one call the driver answered.
type Call struct {
	Op           Op
	Cluster      string // the cluster's ID, or its name when it has none
	ProviderName string // "" for a list
	At           time.Time
	// Created is true for a create that made a pool (not one that found
	// it there already).
	Created bool
	Fault   Fault // the fault injected, if any
	Err     error // what the call returned
}

// Options configure a Driver. Zero values take the defaults.
type Options struct {
	// Platform is the provider the driver stands for: its profile's
	// capabilities, pool name rules and provider-added taints (default the
	// catalog's first platform with pools).
	Platform kpool.PlatformType
	// Clock times the operations (default the wall clock).
	Clock Clock
	// An operation takes OperationTime plus NodeTime for each node it adds
	// or removes (default 30s and 10s); nodes move one per NodeTime.
	OperationTime, NodeTime time.Duration
	// Seed seeds the fault rolls.
	Seed uint64
	// Opaque makes the driver report, as ARM does, only the target count
	// while an operation runs: ReadyUnknown, not nodes one at a time.
	Opaque bool
	// Facts are what ClusterFacts answers for a cluster (nil, or none:
	// the provider offers no catalogue, and preflight has nothing).
	Facts func(c *kpool.Cluster) *kpool.ClusterFacts
}

// Driver is the in-memory driver. It is safe for concurrent use.
type Driver struct {
	platform         kpool.PlatformType
	profile          provider.Profile
	caps             provider.Capabilities
	clock            Clock
	opTime, nodeTime time.Duration
	opaque           bool
	facts            func(c *kpool.Cluster) *kpool.ClusterFacts

	mu         sync.Mutex
	hung       map[string]bool // clusters whose endpoint never answers
	oneAtATime bool            // a cluster runs one operation at a time (OneOperationAtATime)
	failOps    map[Op]int      // accepted operations still to fail (FailOperations)
	pools      map[poolKey]*pool
	calls      []Call
	next       map[Op][]*provider.Error // scripted: the next calls of an op
	failing    map[Op]map[string]*provider.Error
	faultRate  float64
	rng        *rand.Rand
	limiter    *rate.Limiter // nil: no rate limit
}

type poolKey struct{ cluster, name string }

// pool is a pool as the provider holds it.
type pool struct {
	spec    provider.PoolSpec // Name is unset: it is read from the labels
	state   provider.State    // when no operation runs: Ready or Failed
	nodes   int               // when no operation runs
	message string            // why the last operation failed
	op      *operation
	// stale nodes run an earlier configuration: on a provider that
	// changes new nodes only, an update of such a field leaves every node
	// there stale until the pool is cycled; a scale-down removes them first.
	stale int
}

// operation is a create, update or delete under way: it ends at end, and
// its nodes move one per NodeTime from from to to.
type operation struct {
	kind       provider.State
	start, end time.Time
	from, to   int
	fail       bool
	// providerState, when set, is the provider's own name for an
	// operation kpool did not start (see Operate).
	providerState string
}

// New returns an empty driver.
func New(o Options) *Driver {
	profiles := catalog.Registry()
	if o.Platform == "" {
		for _, p := range profiles.Profiles() {
			if p.Capabilities().NodePools {
				o.Platform = p.Type()
				break
			}
		}
	}
	if o.Clock == nil {
		o.Clock = wallClock{}
	}
	if o.OperationTime == 0 {
		o.OperationTime = 30 * time.Second
	}
	if o.NodeTime == 0 {
		o.NodeTime = 10 * time.Second
	}
	profile := profiles.Profile(o.Platform)
	return &Driver{
		platform: o.Platform, profile: profile, caps: profile.Capabilities(), clock: o.Clock, opTime: o.OperationTime, nodeTime: o.NodeTime,
		opaque: o.Opaque, facts: o.Facts, hung: map[string]bool{}, failOps: map[Op]int{}, pools: map[poolKey]*pool{}, next: map[Op][]*provider.Error{}, failing: map[Op]map[string]*provider.Error{},
		rng: rand.New(rand.NewPCG(o.Seed, o.Seed)),
	}
}

var _ provider.Driver = (*Driver)(nil)

// Capabilities returns the capabilities of the platform the driver stands for.
func (d *Driver) Capabilities() provider.Capabilities { return d.caps }

// at returns a cluster's pool of a provider name as it is now, operations
// ended; d.mu is held.
func (d *Driver) at(c *kpool.Cluster, providerName string) (*pool, poolKey, time.Time, bool) {
	now := d.clock.Now()
	d.advance(now)
	k := poolKey{clusterOf(c), providerName}
	p, ok := d.pools[k]
	return p, k, now, ok
}

func clusterOf(c *kpool.Cluster) string {
	if c.ID != "" {
		return c.ID
	}
	return c.Name
}

func (d *Driver) notFound(providerName string) *provider.Error {
	return &provider.Error{Kind: provider.KindNotFound, Provider: d.platform, Reason: "pool " + providerName + " not found"}
}

// NodePoolList returns the cluster's pools, sorted by provider name.
func (d *Driver) NodePoolList(ctx context.Context, c *kpool.Cluster) ([]provider.Pool, error) {
	if err := d.hang(ctx, List, c, ""); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	call, err := d.call(ctx, List, c, "")
	if err != nil {
		call.Err = err
		return nil, err
	}
	now := call.At
	d.advance(now)
	var out []provider.Pool
	for k, p := range d.pools {
		if k.cluster == call.Cluster {
			out = append(out, d.view(p, k, now))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProviderName < out[j].ProviderName })
	return out, d.answer(call, nil)
}

// NodePoolCreate starts creating a pool with the spec's owner's mark, or
// returns the one of that provider name when it already matches the spec
// (unless another owner marked it: KindForeign).
func (d *Driver) NodePoolCreate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	if err := d.hang(ctx, Create, c, s.ProviderName); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	call, err := d.call(ctx, Create, c, s.ProviderName)
	if err != nil {
		call.Err = err
		return nil, err
	}
	out, err := d.create(call, s)
	return out, d.answer(call, err)
}

func (d *Driver) create(call *Call, s provider.PoolSpec) (*provider.Pool, error) {
	if !d.caps.Names.Match(s.ProviderName) {
		return nil, provider.ValidationError(d.platform, "provider_name", "%q is not a %s pool name: it must match %s", s.ProviderName, d.platform, d.caps.Names.Pattern)
	}
	if err := d.unsupported(s); err != nil {
		return nil, err
	}
	now := call.At
	d.advance(now)
	if err := d.busy(call.Cluster); err != nil {
		return nil, err
	}
	k := poolKey{call.Cluster, s.ProviderName}
	if p, ok := d.pools[k]; ok {
		if o := p.spec.Owner; !o.IsZero() && o != s.Owner {
			// Another owner's pool: never adopted, whatever it holds.
			return nil, provider.ForeignError(d.platform, s.ProviderName, o)
		}
		if err := d.immutable(p, s); err != nil {
			return nil, err
		}
		if !d.sameMutable(p, s) {
			return nil, &provider.Error{Kind: provider.KindAlreadyExists, Provider: d.platform,
				Reason: "pool " + s.ProviderName + " exists with other mutable settings; update it"}
		}
		v := d.view(p, k, now)
		return &v, nil
	}
	p := &pool{spec: d.stored(s), state: provider.StateReady}
	p.op = d.start(provider.StateCreating, now, 0, s.Count, call.Fault == FaultFailLater)
	d.pools[k] = p
	call.Created = true
	v := d.view(p, k, now)
	return &v, nil
}

// NodePoolUpdate starts changing a pool to the spec. Placement labels stay
// as the pool has them; with autoscaling on, the count stays the
// autoscaler's (within the new bounds). An unmarked pool gets the spec's
// owner's mark; a pool another owner marked is refused (KindForeign).
func (d *Driver) NodePoolUpdate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	if err := d.hang(ctx, Update, c, s.ProviderName); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	call, err := d.call(ctx, Update, c, s.ProviderName)
	if err != nil {
		call.Err = err
		return nil, err
	}
	out, err := d.update(call, s)
	return out, d.answer(call, err)
}

func (d *Driver) update(call *Call, s provider.PoolSpec) (*provider.Pool, error) {
	now := call.At
	d.advance(now)
	k := poolKey{call.Cluster, s.ProviderName}
	p, ok := d.pools[k]
	if !ok {
		return nil, d.notFound(s.ProviderName)
	}
	if p.op != nil {
		// As the clouds answer (409): one operation at a time.
		return nil, &provider.Error{Kind: provider.KindBusy, Provider: d.platform,
			Reason: fmt.Sprintf("pool %s is %s; another operation is in progress", s.ProviderName, p.op.kind)}
	}
	if err := d.unsupported(s); err != nil {
		return nil, err
	}
	if err := d.immutable(p, s); err != nil {
		return nil, err
	}
	mark, err := provider.Remark(d.platform, s.ProviderName, p.spec.Owner, s.Owner)
	if err != nil {
		return nil, err
	}
	next := d.stored(s)
	next.Owner = mark
	for _, l := range []string{provider.LabelPool, provider.LabelZone} {
		if v, ok := p.spec.Labels[l]; ok {
			next.Labels[l] = v
		} else {
			delete(next.Labels, l)
		}
	}
	if s.Autoscaling {
		next.Count = min(max(p.spec.Count, s.MinCount), s.MaxCount)
	}
	// What the spec leaves unset stays as it is.
	if next.MachineType == "" {
		next.MachineType = p.spec.MachineType
	}
	if next.DiskSizeGB == 0 {
		next.DiskSizeGB = p.spec.DiskSizeGB
	}
	if next.DiskType == "" {
		next.DiskType = p.spec.DiskType
	}
	if next.Version == "" {
		next.Version = p.spec.Version
	}
	if d.newNodesOnly(p.spec, next) {
		p.stale = p.nodes
	}
	p.stale = min(p.stale, next.Count)
	p.spec = next
	p.op = d.start(provider.StateUpdating, now, p.nodes, next.Count, call.Fault == FaultFailLater)
	v := d.view(p, k, now)
	return &v, nil
}

// NodePoolDelete starts deleting a pool; a missing one, or one being
// deleted, is not an error.
func (d *Driver) NodePoolDelete(ctx context.Context, c *kpool.Cluster, providerName string) error {
	if err := d.hang(ctx, Delete, c, providerName); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	call, err := d.call(ctx, Delete, c, providerName)
	if err != nil {
		call.Err = err
		return err
	}
	now := call.At
	d.advance(now)
	p, ok := d.pools[poolKey{call.Cluster, providerName}]
	if ok && (p.op == nil || p.op.kind != provider.StateDeleting) {
		from := p.nodes
		if p.op != nil {
			from = p.op.nodesAt(now, d.nodeTime)
		}
		p.op = d.start(provider.StateDeleting, now, from, 0, call.Fault == FaultFailLater)
	}
	return d.answer(call, nil)
}

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
// pool is NotFound, and it passes the driver conformance suite
// (provider/providertest).
package fake

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
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
}

// Driver is the in-memory driver. It is safe for concurrent use.
type Driver struct {
	platform         kpool.PlatformType
	profile          provider.Profile
	caps             provider.Capabilities
	clock            Clock
	opTime, nodeTime time.Duration
	opaque           bool

	mu        sync.Mutex
	hung      map[string]bool // clusters whose endpoint never answers
	failOps   map[Op]int      // accepted operations still to fail (FailOperations)
	pools     map[poolKey]*pool
	calls     []Call
	next      map[Op][]*provider.Error // scripted: the next calls of an op
	failing   map[Op]map[string]*provider.Error
	faultRate float64
	rng       *rand.Rand
	limiter   *rate.Limiter // nil: no rate limit
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
		opaque: o.Opaque, hung: map[string]bool{}, failOps: map[Op]int{}, pools: map[poolKey]*pool{}, next: map[Op][]*provider.Error{}, failing: map[Op]map[string]*provider.Error{},
		rng: rand.New(rand.NewPCG(o.Seed, o.Seed)),
	}
}

var _ provider.Driver = (*Driver)(nil)

// Capabilities returns the capabilities of the platform the driver stands for.
func (d *Driver) Capabilities() provider.Capabilities { return d.caps }

// FailNext makes the next n calls of op that get past the rate limit fail
// with err, before anything else happens.
func (d *Driver) FailNext(op Op, n int, err *provider.Error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for range n {
		d.next[op] = append(d.next[op], err)
	}
}

// StopFailing drops the failures FailNext queued for op that have not
// happened yet.
func (d *Driver) StopFailing(op Op) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.next, op)
}

// FailOperations makes the next n operations of op (create, update or
// delete) that the driver accepts fail when they end, leaving the pool
// Failed with the provider's reason in its Message.
func (d *Driver) FailOperations(op Op, n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.failOps[op] += n
}

// FailPool makes every call of op (create, update or delete) on the pool
// of a provider name, in any cluster, fail with err; a nil err ends it.
func (d *Driver) FailPool(op Op, providerName string, err *provider.Error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failing[op] == nil {
		d.failing[op] = map[string]*provider.Error{}
	}
	if err == nil {
		delete(d.failing[op], providerName)
		return
	}
	d.failing[op][providerName] = err
}

// Hang makes the cluster's endpoint accept calls and never answer them
// (on), or answer again (off): each call blocks until its context ends.
func (d *Driver) Hang(c *kpool.Cluster, on bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.hung[clusterOf(c)] = on
}

// hang blocks a call to a hung cluster until ctx ends, and logs it; it
// returns nil at once for any other cluster.
func (d *Driver) hang(ctx context.Context, op Op, c *kpool.Cluster, providerName string) error {
	d.mu.Lock()
	if !d.hung[clusterOf(c)] {
		d.mu.Unlock()
		return nil
	}
	d.calls = append(d.calls, Call{Op: op, Cluster: clusterOf(c), ProviderName: providerName, At: d.clock.Now(), Fault: FaultHang})
	i := len(d.calls) - 1
	d.mu.Unlock()
	<-ctx.Done()
	d.mu.Lock()
	d.calls[i].Err = ctx.Err()
	d.mu.Unlock()
	return ctx.Err()
}

// at returns a cluster's pool of a provider name as it is now, operations
// ended; d.mu is held.
func (d *Driver) at(c *kpool.Cluster, providerName string) (*pool, poolKey, time.Time, bool) {
	now := d.clock.Now()
	d.advance(now)
	k := poolKey{clusterOf(c), providerName}
	p, ok := d.pools[k]
	return p, k, now, ok
}

// Operate starts an operation on a pool outside kpool, as someone using
// the provider's own tools would (an image upgrade, a stop): for dur the
// pool reports state and the provider's own providerState, and refuses
// other operations.
func (d *Driver) Operate(c *kpool.Cluster, providerName string, state provider.State, providerState string, dur time.Duration) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	p, _, now, ok := d.at(c, providerName)
	if !ok {
		return d.notFound(providerName)
	}
	p.op = &operation{kind: state, start: now, end: now.Add(dur), from: p.nodes, to: p.nodes, providerState: providerState}
	return nil
}

// SetFaultRate sets the fraction (0..1) of calls that fail in one of the
// ways Fault lists.
func (d *Driver) SetFaultRate(rate float64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.faultRate = min(max(rate, 0), 1)
}

// SetRateLimit limits the calls to perSecond with a burst (0: no limit);
// calls over it are Throttled with the Retry-After the bucket needs.
func (d *Driver) SetRateLimit(perSecond float64, burst int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if perSecond <= 0 {
		d.limiter = nil
		return
	}
	d.limiter = rate.NewLimiter(rate.Limit(perSecond), max(burst, 1))
}

// Calls returns the calls answered so far, oldest first.
func (d *Driver) Calls() []Call {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.calls)
}

// Creates counts the creates that made a pool of a provider name, in any
// cluster: more than one means a pool was created twice.
func (d *Driver) Creates(providerName string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, c := range d.calls {
		if c.Created && c.ProviderName == providerName {
			n++
		}
	}
	return n
}

// Pool returns a cluster's pool as NodePoolList would now, without a call.
func (d *Driver) Pool(c *kpool.Cluster, providerName string) (provider.Pool, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p, k, now, ok := d.at(c, providerName)
	if !ok {
		return provider.Pool{}, false
	}
	return d.view(p, k, now), true
}

// Mutate changes a pool behind the driver's back, as someone using the
// provider's own tools would.
func (d *Driver) Mutate(c *kpool.Cluster, providerName string, fn func(*provider.PoolSpec)) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.advance(d.clock.Now())
	p, ok := d.pools[poolKey{clusterOf(c), providerName}]
	if !ok {
		return d.notFound(providerName)
	}
	fn(&p.spec)
	if p.op == nil && p.state == provider.StateReady {
		p.nodes = p.spec.Count
	}
	return nil
}

func clusterOf(c *kpool.Cluster) string {
	if c.ID != "" {
		return c.ID
	}
	return c.Name
}

// call logs a call and decides whether it fails before it does anything:
// the context, the rate limit, a scripted error, a fault. It returns the
// log entry, whose Fault also tells the operation to lose its reply or
// fail later, and the error to answer with at once.
func (d *Driver) call(ctx context.Context, op Op, c *kpool.Cluster, providerName string) (*Call, error) {
	d.calls = append(d.calls, Call{Op: op, Cluster: clusterOf(c), ProviderName: providerName, At: d.clock.Now()})
	call := &d.calls[len(d.calls)-1]
	if err := ctx.Err(); err != nil {
		return call, err
	}
	if d.limiter != nil {
		now := call.At
		if r := d.limiter.ReserveN(now, 1); r.DelayFrom(now) > 0 {
			wait := r.DelayFrom(now)
			r.CancelAt(now)
			call.Fault = FaultThrottled
			secs := max(1, math.Ceil(wait.Seconds())) // Retry-After is in whole seconds
			return call, &provider.Error{Kind: provider.KindThrottled, Provider: d.platform, Reason: "too many requests",
				RetryAfter: time.Duration(secs) * time.Second}
		}
	}
	if q := d.next[op]; len(q) > 0 {
		d.next[op] = q[1:]
		return call, q[0]
	}
	if err := d.failing[op][providerName]; err != nil && providerName != "" {
		return call, err
	}
	if d.faultRate > 0 && d.rng.Float64() < d.faultRate {
		kinds := []Fault{FaultError, FaultUnavailable}
		if op != List {
			kinds = append(kinds, FaultLostReply, FaultFailLater)
		}
		call.Fault = kinds[d.rng.IntN(len(kinds))]
		switch call.Fault {
		case FaultError:
			return call, d.transient("internal error (fault injected by the fake driver)", 0)
		case FaultUnavailable:
			return call, d.transient("service unavailable (fault injected by the fake driver)", time.Second)
		}
	}
	if d.failOps[op] > 0 && call.Fault == "" {
		d.failOps[op]--
		call.Fault = FaultFailLater
	}
	return call, nil
}

// answer is what a call that got through returns: its error, or the
// transient error of a lost reply.
func (d *Driver) answer(call *Call, err error) error {
	if err == nil && call.Fault == FaultLostReply {
		err = d.transient("the reply was lost (fault injected by the fake driver)", 0)
	}
	call.Err = err
	return err
}

func (d *Driver) transient(reason string, retryAfter time.Duration) *provider.Error {
	return &provider.Error{Kind: provider.KindTransient, Provider: d.platform, Reason: reason, RetryAfter: retryAfter}
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

// NodePoolCreate starts creating a pool, or returns the one of that
// provider name when it already matches the spec.
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
	k := poolKey{call.Cluster, s.ProviderName}
	if p, ok := d.pools[k]; ok {
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
// autoscaler's (within the new bounds).
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
		return nil, d.transient(fmt.Sprintf("pool %s is %s; another operation is in progress", s.ProviderName, p.op.kind), 0)
	}
	if err := d.unsupported(s); err != nil {
		return nil, err
	}
	if err := d.immutable(p, s); err != nil {
		return nil, err
	}
	next := d.stored(s)
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

// newNodesOnly reports whether going from old to next changes a field the
// provider applies to new nodes only.
func (d *Driver) newNodesOnly(old, next provider.PoolSpec) bool {
	changed := map[provider.Field]bool{
		provider.FieldMachineType: old.MachineType != next.MachineType,
		provider.FieldZones:       !slices.Equal(old.Zones, next.Zones),
		provider.FieldLabels:      !provider.SameMap(old.Labels, next.Labels),
		provider.FieldSpot:        old.Spot != next.Spot,
		provider.FieldDisk:        old.DiskSizeGB != next.DiskSizeGB || old.DiskType != next.DiskType,
		provider.FieldVersion:     old.Version != next.Version,
		provider.FieldImage:       !provider.SameMap(old.Settings, next.Settings),
	}
	for f, c := range changed {
		if c && d.caps.Updates[f].Class == kpool.UpdateNewNodesOnly {
			return true
		}
	}
	return false
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

func (d *Driver) start(kind provider.State, now time.Time, from, to int, fail bool) *operation {
	moved := time.Duration(max(from-to, to-from)) * d.nodeTime
	return &operation{kind: kind, start: now, end: now.Add(d.opTime + moved), from: from, to: to, fail: fail}
}

// nodesAt is the node count at t: nodes move one at a time, NodeTime
// apart, from the count at the start to the target.
func (o *operation) nodesAt(t time.Time, nodeTime time.Duration) int {
	if !t.Before(o.end) {
		return o.to
	}
	steps := int(max(t.Sub(o.start), 0) / nodeTime)
	if o.to < o.from {
		return max(o.from-steps, o.to)
	}
	return min(o.from+steps, o.to)
}

// advance ends the operations whose time has come.
func (d *Driver) advance(now time.Time) {
	for k, p := range d.pools {
		o := p.op
		if o == nil || now.Before(o.end) {
			continue
		}
		p.op, p.nodes = nil, o.to
		p.message = ""
		switch {
		case o.fail:
			p.state = provider.StateFailed
			p.message = fmt.Sprintf("%s failed: AllocationFailed: not enough capacity for %s in the zone (fault injected by the fake driver)",
				strings.ToLower(string(o.kind)), p.spec.MachineType)
		case o.kind == provider.StateDeleting:
			delete(d.pools, k)
		default:
			p.state = provider.StateReady
		}
	}
}

// view is a pool as NodePoolList reports it at now.
func (d *Driver) view(p *pool, k poolKey, now time.Time) provider.Pool {
	v := provider.Pool{PoolSpec: clone(p.spec), State: p.state, Nodes: p.nodes,
		Extra: map[string]string{"id": k.cluster + "/" + k.name}}
	v.ProviderState = string(v.State)
	v.Message = p.message
	if p.op != nil {
		v.State, v.Nodes, v.ProviderState = p.op.kind, p.op.nodesAt(now, d.nodeTime), string(p.op.kind)
		if p.op.providerState != "" {
			v.ProviderState = p.op.providerState
		}
	}
	v.ReadyNodes = v.Nodes
	v.StaleNodes = min(p.stale, v.Nodes)
	if d.opaque && p.op != nil {
		// Only the target is known, as ARM reports it.
		v.Nodes, v.ReadyNodes, v.ReadyUnknown = p.op.to, 0, true
	}
	v.Name = v.Labels[provider.LabelPool]
	if len(v.Zones) > 0 && !v.ReadyUnknown {
		v.NodesByZone = map[string]int{}
		for i, z := range v.Zones {
			n := v.Nodes / len(v.Zones)
			if i < v.Nodes%len(v.Zones) {
				n++
			}
			v.NodesByZone[z] = n
		}
	}
	v.Problems = provider.CheckContract(&v)
	return v
}

// stored is a spec as the provider keeps it: its own copies, zones sorted,
// the taints the provider adds included, no kpool name.
func (d *Driver) stored(s provider.PoolSpec) provider.PoolSpec {
	s = clone(s)
	s.Name = ""
	s.Taints = d.profile.NodeTaints(s)
	sort.Strings(s.Zones)
	return s
}

func clone(s provider.PoolSpec) provider.PoolSpec {
	s.Zones = slices.Clone(s.Zones)
	s.Accelerators = slices.Clone(s.Accelerators)
	s.Taints = slices.Clone(s.Taints)
	s.Labels = maps.Clone(s.Labels)
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	s.Tags = maps.Clone(s.Tags)
	s.Settings = maps.Clone(s.Settings)
	return s
}

// path names a field in a validation error. The fake has no wire format of
// its own, so it names fields by their neutral names (spec.machineType).
func path(f provider.Field) string { return "spec." + string(f) }

// unsupported refuses a spec that sets a field the provider does not have
// (NOT_IMPLEMENTED), as the API's planner does before it.
func (d *Driver) unsupported(s provider.PoolSpec) error { return provider.CheckSupported(d.caps, s) }

// immutable refuses a spec that differs from a pool in a field only a new
// pool can change (class Replace in the capabilities); fields the spec
// leaves unset are not compared.
func (d *Driver) immutable(p *pool, s provider.PoolSpec) error {
	got := p.spec
	zones := slices.Sorted(slices.Values(s.Zones))
	checks := []struct {
		field     provider.Field
		old, next string
		set       bool
	}{
		{provider.FieldMachineType, got.MachineType, s.MachineType, s.MachineType != ""},
		{provider.FieldZones, strings.Join(got.Zones, ","), strings.Join(zones, ","), true},
		{provider.FieldSpot, fmt.Sprint(got.Spot), fmt.Sprint(s.Spot), true},
		{provider.FieldDisk, fmt.Sprint(got.DiskSizeGB), fmt.Sprint(s.DiskSizeGB), s.DiskSizeGB != 0},
		{provider.FieldDisk, got.DiskType, s.DiskType, s.DiskType != ""},
		{provider.FieldAccelerators, fmt.Sprint(got.Accelerators), fmt.Sprint(s.Accelerators), true},
	}
	for _, k := range slices.Sorted(maps.Keys(s.Settings)) {
		checks = append(checks, struct {
			field     provider.Field
			old, next string
			set       bool
		}{provider.FieldImage, got.Settings[k], s.Settings[k], true})
	}
	for _, c := range checks {
		u := d.caps.Updates[c.field]
		if c.set && u.Class == kpool.UpdateReplace && !strings.EqualFold(c.old, c.next) {
			return provider.ValidationError(d.platform, path(c.field), "pool %s has %q and %s cannot change it to %q in place (%s); create a new pool",
				s.ProviderName, c.old, d.platform, c.next, u.Reason)
		}
	}
	return nil
}

// sameMutable reports whether a pool already has the settings of a spec
// that an update could change.
func (d *Driver) sameMutable(p *pool, s provider.PoolSpec) bool {
	got := p.spec
	switch {
	case got.Autoscaling != s.Autoscaling,
		s.Autoscaling && (got.MinCount != s.MinCount || got.MaxCount != s.MaxCount),
		!s.Autoscaling && got.Count != s.Count,
		!maps.Equal(got.Labels, s.Labels),
		!provider.SameTaints(got.Taints, d.profile.NodeTaints(s)),
		len(got.Tags) != len(s.Tags) || !maps.Equal(got.Tags, s.Tags),
		got.Mode != s.Mode,
		s.Version != "" && got.Version != s.Version:
		return false
	}
	return true
}

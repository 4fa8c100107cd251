package fake

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

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

var _ provider.FactsReader = (*Driver)(nil)

// ClusterFacts answers Options.Facts for the cluster, stamped with the
// driver's clock; nil when the options give none. It is not a call of the
// log: the provider's catalogue is read apart from its pools.
func (d *Driver) ClusterFacts(_ context.Context, c *kpool.Cluster) (*kpool.ClusterFacts, error) {
	d.mu.Lock()
	facts := d.facts
	d.mu.Unlock()
	if facts == nil {
		return nil, nil
	}
	f := facts(c)
	if f != nil {
		f.LearnedAt = d.clock.Now()
	}
	return f, nil
}

// SetFacts replaces what ClusterFacts answers (Options.Facts).
func (d *Driver) SetFacts(f func(c *kpool.Cluster) *kpool.ClusterFacts) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.facts = f
}

// OneOperationAtATime makes every cluster take one pool operation at a
// time, as GKE does: a create while another pool's operation runs is
// refused busy (KindBusy) until it ends.
func (d *Driver) OneOperationAtATime(on bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.oneAtATime = on
}

// busy is the refusal of a create in cluster while one of its pools has
// an operation running, when clusters take one at a time.
func (d *Driver) busy(cluster string) error {
	if !d.oneAtATime {
		return nil
	}
	for k, p := range d.pools {
		if k.cluster == cluster && p.op != nil {
			return &provider.Error{Kind: provider.KindBusy, Provider: d.platform,
				Reason: fmt.Sprintf("pool %s of cluster %s is %s: one operation at a time", k.name, cluster, strings.ToLower(string(p.op.kind)))}
		}
	}
	return nil
}

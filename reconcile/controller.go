// Package reconcile holds kpool's controllers: they make every stored pool
// real at its provider, report its status through the same path external
// controllers use, delete it safely, and detect drift.
//
// The work is level-triggered: a cluster is the unit of work; reconciling
// it reads the cluster's pools from the store, lists the provider's pools
// once, and acts on each difference. Committed changes (the events outbox)
// and a periodic resync put clusters on a keyed, de-duplicating work queue
// with jittered exponential backoff. Several kpool processes may run the
// controllers on one PostgreSQL database: the clusters are spread over
// them by shard, and a process acts on a cluster only while it holds its
// shard's lease in the database (shard.go).
package reconcile

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/audit"
	"github.com/kpool/kpool/internal/tracing"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/deadline"
	"github.com/kpool/kpool/provider/metrics"
	"github.com/kpool/kpool/provider/ratelimit"
	"github.com/kpool/kpool/provider/traced"
)

// Identity is the controllers' own identity: they read everything and
// write status through the service, like any external controller.
var Identity = &kpool.Identity{Email: "controllers@kpool.internal", Controller: true, System: true}

// Controller runs the node-pool controllers.
type Controller struct {
	cfg     Config
	store   kpool.Store
	drivers map[kpool.PlatformType]provider.Driver // registered ones: rate-limited, cut off, counted
	lanes   map[kpool.PlatformType]*lanes          // per-provider concurrency
	retries *backoff                               // per pool, for pool errors
	// risky holds a slot per call to a cluster not known to answer: at
	// most half of the workers wait on such calls.
	risky chan struct{}

	mu       sync.Mutex
	clusters map[string]*clusterState // what the controllers remember of each cluster
	noDriver map[kpool.PlatformType]bool

	// tracer, with Config.Traces, gives each pass a span; links holds,
	// by cluster, the requests its next pass links to (trace.go).
	tracer trace.Tracer
	links  map[string][]trace.Link

	// watches are the clusters' node watches, one per cluster.
	watches watches

	// budgets are the cloud accounts' call budgets, and ledger what their
	// clusters' drift passes cost (budget.go).
	budgets *ratelimit.Budgets
	ledger  ledger
	// shards are the shards this process holds, while Run runs.
	shards *keeper
}

// clusterState is what the controllers remember of a cluster between
// passes. It is pruned as pools and clusters go, so it stays as large as
// what is stored.
type clusterState struct {
	seen  map[string]seenGeneration // pool id → when a generation was first seen
	sent  map[string]time.Time      // pool id → when its last call was taken, for the log's durations
	retry map[string]poolRetry      // pool id → when to act on it again
	// trust says which lane its calls take: whether its endpoint answers,
	// hangs, or has not been reached yet.
	trust trust
	// failingSince is when its lists began to fail with outages (zero:
	// the last one succeeded): after UnreachableAfter it is not Reachable.
	failingSince time.Time
	// factsAt is when the provider was last asked what it offers the
	// cluster (learnFacts).
	factsAt time.Time
	// short holds, by pool id, since when its nodes have been fewer
	// Ready in Kubernetes than at the cloud (kubeReady).
	short map[string]time.Time
	// want holds, by provider pool name, the labels its nodes are to
	// carry, as the last pass found them (NodeSource); under c.mu.
	want map[string]map[string]string
	// pools is how many pools seen and retry hold, as of the end of the
	// last pass; the maps are the cluster's worker's alone, this count is
	// read under the controller's lock.
	pools int
	// from is the pool a pass stopped at after Config.WritesPerPass
	// writes: the next one starts there.
	from string
}

type seenGeneration struct {
	generation int64
	at         time.Time
}

// poolRetry is a pool whose last action failed: it is left alone until
// next, unless its spec changes.
type poolRetry struct {
	generation int64
	deleting   bool // the pool was being deleted: a delete since is tried at once
	next       time.Time
}

// New returns the controllers for cfg.
func New(cfg Config) *Controller {
	cfg.defaults()
	c := &Controller{cfg: cfg, store: cfg.Service.Store, drivers: map[kpool.PlatformType]provider.Driver{},
		lanes: map[kpool.PlatformType]*lanes{}, retries: newBackoff(cfg.BackoffBase, cfg.BackoffMax),
		clusters: map[string]*clusterState{}, noDriver: map[kpool.PlatformType]bool{}, risky: make(chan struct{}, max(1, cfg.Workers/2)),
		tracer: tracing.Tracer(cfg.Traces), links: map[string][]trace.Link{}}
	overrides := map[string]provider.Quota{}
	for t, q := range cfg.Budgets {
		overrides[string(t)] = q
	}
	c.budgets = ratelimit.NewBudgets(cfg.Clock, overrides, cfg.Metrics.Provider.Budget.Spent)
	for _, t := range cfg.Drivers.Types() {
		l, ok := cfg.Limits[t]
		if !ok {
			l = DefaultLimits
		}
		if cfg.Drivers.HasDriver(t) {
			d := cfg.Drivers.Driver(t)
			limiter := rate.NewLimiter(rate.Limit(l.RequestsPerSecond), l.Burst)
			// The deadline starts once the rate limit lets a call go: a
			// call waiting its turn is not a provider that fails to answer.
			d = deadline.Decorate(metrics.Decorate(traced.Decorate(d, cfg.Traces), cfg.Metrics.Provider), cfg.CallTimeout, cfg.Clock)
			c.drivers[t] = ratelimit.Decorate(d, limiter, cfg.Clock)
			cfg.Metrics.DriftFights.WithLabelValues(string(t)) // served at 0 from the start: an increase sees the first
		}
		c.lanes[t] = newLanes(l.Concurrency)
	}
	return c
}

// state returns what the controllers remember of a cluster; the first
// time, its endpoint's trust is what its stored status says.
func (c *Controller) state(cl *kpool.Cluster) *clusterState {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.clusters[cl.ID]
	if !ok {
		st = &clusterState{seen: map[string]seenGeneration{}, retry: map[string]poolRetry{}, sent: map[string]time.Time{}, short: map[string]time.Time{}, trust: trustOf(cl)}
		c.clusters[cl.ID] = st
	}
	return st
}

// forget drops what the controllers remember of a cluster that is gone.
func (c *Controller) forget(id string) {
	c.mu.Lock()
	st := c.clusters[id]
	delete(c.clusters, id)
	c.mu.Unlock()
	c.watches.drop(id)
	c.shards.forget(id)
	if st != nil {
		for pool := range st.retry {
			c.retries.Forget(pool)
		}
	}
}

// tracked returns how many pools the controllers remember.
func (c *Controller) tracked() (pools int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.clusters {
		pools += st.pools
	}
	return pools
}

// Run runs the controllers until ctx ends: it joins the other processes
// on the store, holds its share of the shards and acts on their clusters,
// then gives its shards back. It fails when a running process counts
// shards otherwise (Config.Shards).
func (c *Controller) Run(ctx context.Context) error {
	k := newKeeper(c)
	if err := k.join(ctx); err != nil || ctx.Err() != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	k.run, c.shards = wctx, k
	k.metrics()
	// The first shards are taken before the feed's first look, which so
	// queues all their clusters at once, in the store's order.
	next := k.round(wctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.work(wctx)
	}()
	k.keep(wctx, next)
	cancel()
	<-done
	k.releaseAll()
	return nil
}

// work runs the queue: the feed fills it, the workers drain it.
func (c *Controller) work(ctx context.Context) {
	bo := newBackoff(c.cfg.BackoffBase, c.cfg.BackoffMax)
	q := workqueue.NewTypedRateLimitingQueueWithConfig[string](bo,
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "clusters", Clock: c.cfg.Clock})
	go func() {
		<-ctx.Done()
		q.ShutDown()
	}()
	queued := &sync.Map{} // cluster → when queued, for the latency metric
	add := func(id string) {
		queued.LoadOrStore(id, c.cfg.Clock.Now())
		q.Add(id)
	}
	// A node change puts its cluster on the queue, after a moment so that
	// a burst of changes (a pool scaling) makes one pass.
	c.watches.start(ctx, func(id string) { q.AddAfter(id, nodeBurst) })
	defer c.watches.stop()
	var wg sync.WaitGroup
	for range c.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				id, shutdown := q.Get()
				if shutdown {
					return
				}
				if at, ok := queued.LoadAndDelete(id); ok {
					c.cfg.Metrics.QueueLatency.Observe(c.cfg.Clock.Since(at.(time.Time)).Seconds())
				}
				c.cfg.Metrics.QueueDepth.Set(float64(q.Len()))
				s, pctx, ok := c.shards.begin(ctx, id)
				if !ok {
					// Not this process's shard (any more): its holder
					// has it queued.
					q.Forget(id)
					q.Done(id)
					continue
				}
				c.process(pctx, q, bo, id)
				c.shards.end(s, id)
				q.Done(id)
			}
		}()
	}
	c.feed(ctx, add)
	wg.Wait()
}

// process reconciles one cluster, counts what its pass came to and
// schedules its next turn.
func (c *Controller) process(ctx context.Context, q workqueue.TypedRateLimitingInterface[string], bo *backoff, id string) {
	start := c.cfg.Clock.Now()
	result := ResultOK
	pctx, p := c.startPass(ctx, id)
	next, err := c.reconcileCluster(pctx, id, &result)
	c.endPass(p, id, next, err)
	c.cfg.Metrics.Duration.Observe(c.cfg.Clock.Since(start).Seconds())
	c.cfg.Metrics.Tracked.Set(float64(c.tracked()))
	c.cfg.Metrics.NodeWatches.Set(float64(c.watches.count()))
	switch {
	case ctx.Err() != nil:
		return
	case errors.Is(err, errLaneBusy):
		// Not a failure: its turn comes again soon, without backoff.
		c.cfg.Metrics.Reconciles.WithLabelValues(ResultDeferred).Inc()
		q.Forget(id)
		q.AddAfter(id, c.cfg.ResyncFast)
	case err != nil:
		c.cfg.Metrics.Reconciles.WithLabelValues(failedResult(err, result)).Inc()
		if after, ok := provider.RetryAfter(err); ok {
			q.AddAfter(id, max(after, bo.When(id))) // the provider's wait, and never less than the backoff
		} else {
			q.AddRateLimited(id)
		}
		c.cfg.Log.Info("cluster reconcile failed; retrying", append([]any{"cluster_id", id, "failures", q.NumRequeues(id)}, errAttrs(err)...)...)
	default:
		c.cfg.Metrics.Reconciles.WithLabelValues(result).Inc()
		q.Forget(id)
		switch {
		case next == yield:
			q.Add(id) // behind the clusters queued meanwhile, once Done
		case next > 0:
			q.AddAfter(id, next)
		}
	}
}

// failedResult is the result of a pass that ended in err: throttled when
// the provider asked to slow down, the pass's own result when it found
// the cluster unreachable, error otherwise.
func failedResult(err error, result string) string {
	switch {
	case provider.IsThrottled(err):
		return ResultThrottled
	case result == ResultUnreachable:
		return result
	}
	return ResultError
}

// feed queues every cluster once, then each cluster named by a committed
// event (its own status reports aside), until ctx ends. audit.Feed
// finds events that commit out of id order, so none is missed.
func (c *Controller) feed(ctx context.Context, add func(string)) {
	wake := c.store.Subscribe(ctx)
	f := &audit.Feed{Store: c.store, Now: c.cfg.Clock.Now}
	if err := f.Start(ctx); err != nil && ctx.Err() == nil {
		c.cfg.Log.Warn("events", "err", err)
	}
	c.all(ctx, add, c.shards.holds)
	poll := c.cfg.Clock.NewTicker(c.cfg.PollEvents)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.shards.wakes():
			// Shards gained: every cluster of theirs is looked at.
			if gained := c.shards.takeGained(); gained != nil {
				c.all(ctx, add, gained)
			}
			continue
		case <-wake:
		case <-poll.C():
		}
		evs, err := f.Next(ctx)
		switch {
		case errors.Is(err, audit.ErrPruned):
			// The feed fell behind the outbox's retention: what it missed
			// is found by looking at every cluster.
			c.cfg.Log.Info("events pruned past the feed; resyncing every cluster")
			c.all(ctx, add, c.shards.holds)
		case err != nil && ctx.Err() == nil:
			c.cfg.Log.Warn("events", "err", err)
		}
		for _, e := range evs {
			// Another shard's clusters are its holder's: its feed sees them.
			if e.Type != kpool.EventNodePoolStatus && e.Type != kpool.EventClusterStatus && c.shards.holds(e.ClusterID) {
				c.follow(&e)
				add(e.ClusterID)
			}
		}
	}
}

// all queues every cluster mine says is this process's.
func (c *Controller) all(ctx context.Context, add func(string), mine func(string) bool) {
	err := c.eachCluster(ctx, func(cl *kpool.Cluster) {
		if mine(cl.ID) {
			add(cl.ID)
		}
	})
	if err != nil && ctx.Err() == nil {
		c.cfg.Log.Warn("listing clusters", "err", err)
	}
}

// eachCluster calls fn with every cluster in the store, a page at a time.
func (c *Controller) eachCluster(ctx context.Context, fn func(*kpool.Cluster)) error {
	var after string
	for ctx.Err() == nil {
		cs, _, err := c.store.Clusters(ctx, kpool.ClusterFilter{Page: kpool.Page{Limit: 100, After: cursorOf(after)}})
		if err != nil {
			return err
		}
		for i := range cs {
			fn(cs[i])
		}
		if len(cs) < 100 {
			return nil
		}
		after = kpool.EncodeCursor(kpool.Cursor{CreatedAt: cs[len(cs)-1].CreatedAt, ID: cs[len(cs)-1].ID})
	}
	return ctx.Err()
}

func cursorOf(s string) *kpool.Cursor {
	if s == "" {
		return nil
	}
	c, _ := kpool.DecodeCursor(s)
	return c
}

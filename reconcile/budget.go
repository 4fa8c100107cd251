package reconcile

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/ratelimit"
)

// Call budgets, from the controllers' side: every pass runs in a context
// charged to its cluster's cloud account (provider.AccountOf), at the
// priority of what it does (a drift pass's reads wait behind a change's),
// with a meter that counts what its requests cost at the wire. The reads a
// drift pass of each cluster costs are remembered by account: when the
// account's clusters' passes at DriftInterval would take more than
// DriftShare of its read budget, its clusters' drift interval stretches by
// demand / budget (at most MaxStretch), said in the log, a metric and
// each cluster's status (kpool.DriftSchedule), which the dashboard shows.

// ledger is what the drift passes of each account cost.
type ledger struct {
	mu       sync.Mutex
	accounts map[provider.Account]*accountCost
}

// accountCost is what one account's clusters' drift passes cost, and the
// stretch last logged.
type accountCost struct {
	budget  *ratelimit.Budget
	passes  map[string]passCost // by cluster id
	stretch float64
}

// passCost is the reads of a cluster's last drift pass, and when it ran.
type passCost struct {
	reads float64
	at    time.Time
}

// charge returns ctx charged to cluster cl's account at the priority of
// what the pass is for, and what to call when the pass ends: it records
// what a drift pass cost and sets the cluster's drift schedule.
func (c *Controller) charge(ctx context.Context, cl *kpool.Cluster, pools []*kpool.NodePool) (context.Context, func()) {
	a, q := provider.AccountOf(c.cfg.Drivers.Profile(cl.Spec.Platform.Type), cl)
	b := c.budgets.For(a, q)
	p := priorityOf(pools)
	ctx = provider.WithPriority(provider.WithGate(ctx, b), p)
	ctx, m := provider.WithMeter(ctx)
	return ctx, func() {
		// A cluster without pools is looked at every ResyncSlow, not at
		// the drift interval: it is left out of the demand.
		if p == provider.Drift && len(pools) > 0 && m.Reads() > 0 {
			c.measured(b, cl.ID, m.Reads())
		}
		c.reportDrift(ctx, cl, b)
	}
}

// priorityOf is a pass's priority: Drift when every pool is settled (its
// generation observed, Ready, neither deleting nor being replaced), and
// Change when one is not, which a person asked for.
func priorityOf(pools []*kpool.NodePool) provider.Priority {
	for _, p := range pools {
		if p.Deleting() || p.Status.ObservedGeneration < p.Generation || p.Status.Phase != kpool.PhaseReady || p.Status.Replacement.Active() {
			return provider.Change
		}
	}
	return provider.Drift
}

// measured records the reads of a cluster's drift pass, and logs and
// counts a change of its account's stretch.
func (c *Controller) measured(b *ratelimit.Budget, cluster string, reads int64) {
	now := c.cfg.Clock.Now()
	l := &c.ledger
	l.mu.Lock()
	ac := l.account(b)
	ac.passes[cluster] = passCost{reads: float64(reads), at: now}
	demand, allowed, stretch := c.stretchOf(ac, now)
	changed := math.Abs(stretch-ac.stretch) >= 0.05*ac.stretch
	ac.stretch = stretch
	l.mu.Unlock()
	labels := []string{string(b.Account.Platform), b.Account.String()}
	c.cfg.Metrics.DriftStretch.WithLabelValues(labels...).Set(stretch)
	c.cfg.Metrics.DriftReads.WithLabelValues(labels...).Set(demand)
	if changed {
		c.cfg.Log.Info("drift interval set by the account's read budget", "account", b.Account.String(), "stretch", math.Round(stretch*100)/100,
			"drift_interval", c.stretched(stretch), "reads_per_second", math.Round(demand*100)/100, "budget_for_drift", allowed)
	}
}

// account returns b's account's costs; l.mu held.
func (l *ledger) account(b *ratelimit.Budget) *accountCost {
	if l.accounts == nil {
		l.accounts = map[provider.Account]*accountCost{}
	}
	ac, ok := l.accounts[b.Account]
	if !ok {
		ac = &accountCost{budget: b, passes: map[string]passCost{}, stretch: 1}
		l.accounts[b.Account] = ac
	}
	return ac
}

// stretchOf is an account's drift demand (reads a second at DriftInterval),
// the reads a second its budget leaves for drift, and the stretch that
// keeps the one within the other; ac's lock held. A cluster not measured
// for twice the longest interval is gone, or no longer settled: forgotten.
func (c *Controller) stretchOf(ac *accountCost, now time.Time) (demand, allowed, stretch float64) {
	stale := time.Duration(2 * c.cfg.MaxStretch * float64(c.cfg.DriftInterval))
	for id, p := range ac.passes {
		if now.Sub(p.at) > stale {
			delete(ac.passes, id)
			continue
		}
		demand += p.reads
	}
	demand /= c.cfg.DriftInterval.Seconds()
	q := ac.budget.Quota.Reads
	if q <= 0 || math.IsInf(q, 1) {
		return demand, math.Inf(1), 1
	}
	allowed = q * c.cfg.DriftShare
	return demand, allowed, min(c.cfg.MaxStretch, max(1, demand/allowed))
}

// driftInterval is when a settled cluster is looked at again: DriftInterval,
// stretched by its account's read budget.
func (c *Controller) driftInterval(cl *kpool.Cluster) time.Duration {
	a, _ := provider.AccountOf(c.cfg.Drivers.Profile(cl.Spec.Platform.Type), cl)
	c.ledger.mu.Lock()
	defer c.ledger.mu.Unlock()
	if ac, ok := c.ledger.accounts[a]; ok {
		return c.stretched(ac.stretch)
	}
	return c.cfg.DriftInterval
}

// stretched is DriftInterval stretched s times, to the second.
func (c *Controller) stretched(s float64) time.Duration {
	if s <= 1 {
		return c.cfg.DriftInterval
	}
	return max(c.cfg.DriftInterval, time.Duration(s*float64(c.cfg.DriftInterval)).Round(time.Second))
}

// reportDrift sets the cluster's drift schedule in its status when it is
// not what the cluster's account's stretch says, so that the dashboard,
// maybe in another process, can say so.
func (c *Controller) reportDrift(ctx context.Context, cl *kpool.Cluster, b *ratelimit.Budget) {
	want := kpool.DriftSchedule{}
	if every := c.driftInterval(cl); every > c.cfg.DriftInterval {
		want = kpool.DriftSchedule{EverySeconds: int64(every / time.Second), ConfiguredSeconds: int64(c.cfg.DriftInterval / time.Second), Account: b.Account.String()}
	}
	have := kpool.DriftSchedule{}
	if cl.Status.Drift != nil {
		have = *cl.Status.Drift
	}
	if have == want || ctx.Err() != nil {
		return
	}
	ictx := kpool.WithIdentity(ctx, Identity)
	if _, err := c.cfg.Service.ReportClusterStatus(ictx, cl.ID, kpool.ClusterReport{Drift: &want}); err != nil && !kpool.IsNotFound(err) {
		c.cfg.Log.Warn("reporting the cluster's drift schedule", "cluster_id", cl.ID, "err", err)
	}
}

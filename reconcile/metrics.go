package reconcile

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kpool/kpool/provider/metrics"
)

// Metrics are the controllers' Prometheus metrics, prefixed kpool_.
type Metrics struct {
	Reconciles   *prometheus.CounterVec // by result
	Duration     prometheus.Histogram   // of a cluster's reconcile
	QueueDepth   prometheus.Gauge       // clusters waiting
	QueueLatency prometheus.Histogram   // from enqueue to work
	SpecToReady  prometheus.Histogram   // from a spec change seen to Ready reported
	Leader       prometheus.Gauge       // 1 while this process holds a shard
	// Shards is how many shards this process holds; Clusters how many
	// clusters of theirs it knows.
	Shards, Clusters prometheus.Gauge
	// Tracked is how many pools the controllers keep state on: it follows
	// the stored pools down as they go, never only up.
	Tracked prometheus.Gauge
	// NodeWatches is how many clusters' Nodes the controllers watch: one
	// watch per cluster, whatever its number of pools.
	NodeWatches prometheus.Gauge
	// DriftFights counts pools whose drift kpool stopped correcting, as
	// the provider kept undoing it (by provider): each is an alert.
	DriftFights *prometheus.CounterVec
	// LogicalMoves counts the moves of logical pools' nodes between
	// offerings (by provider and direction: away from an offering that
	// ran out, back to one that returned).
	LogicalMoves *prometheus.CounterVec
	// DriftStretch is how many times DriftInterval an account's clusters'
	// drift interval is stretched to (by platform and account: 1 when
	// not), and DriftReads the reads per second their drift passes would
	// take at DriftInterval (budget.go).
	DriftStretch *prometheus.GaugeVec
	DriftReads   *prometheus.GaugeVec
	// Provider counts and times the calls to the providers, the requests
	// they send, and the accounts' budgets.
	Provider *metrics.Metrics
}

// NewMetrics registers the metrics with reg (nil: a private registry).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	m := &Metrics{
		Reconciles: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kpool_reconciles_total",
			Help: "Cluster reconciles by result: ok, following, backoff, deferred, throttled (not failures); pool_failed, unreachable, error (failures)."}, []string{"result"}),
		Duration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kpool_reconcile_duration_seconds",
			Help: "Time to reconcile one cluster and its pools.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}),
		QueueDepth: prometheus.NewGauge(prometheus.GaugeOpts{Name: "kpool_queue_depth", Help: "Clusters waiting to be reconciled."}),
		QueueLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kpool_queue_latency_seconds",
			Help: "Time from a cluster being queued to its reconcile starting.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}),
		SpecToReady: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kpool_spec_to_ready_seconds",
			Help: "Time from a controller seeing a pool's new generation to reporting it Ready.", Buckets: prometheus.ExponentialBuckets(0.1, 2, 16)}),
		Leader: prometheus.NewGauge(prometheus.GaugeOpts{Name: "kpool_controller_leader", Help: "1 while this process holds a shard of the clusters and runs their controllers."}),
		Shards: prometheus.NewGauge(prometheus.GaugeOpts{Name: "kpool_controller_shards", Help: "Shards of the clusters this process holds."}),
		Clusters: prometheus.NewGauge(prometheus.GaugeOpts{Name: "kpool_controller_clusters",
			Help: "Clusters of the shards this process holds that it knows of."}),
		Tracked: prometheus.NewGauge(prometheus.GaugeOpts{Name: "kpool_controller_tracked_pools",
			Help: "Pools the controllers keep state on (generations seen, retries due)."}),
		NodeWatches: prometheus.NewGauge(prometheus.GaugeOpts{Name: "kpool_node_watches",
			Help: "Clusters whose Nodes the controllers watch in their Kubernetes API (one watch each)."}),
		DriftFights: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kpool_drift_fights_total",
			Help: "Pools whose drift the controllers stopped correcting because the provider kept changing it back."}, []string{"provider"}),
		LogicalMoves: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kpool_logical_moves_total",
			Help: "Moves of logical pools' nodes between offerings: away from one that ran out of capacity, back to one that returned."}, []string{"provider", "direction"}),
		DriftStretch: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kpool_drift_stretch",
			Help: "How many times the configured drift interval an account's clusters are looked at for drift, to keep within its read budget (1: as configured)."}, []string{"platform", "account"}),
		DriftReads: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kpool_drift_reads_per_second",
			Help: "Reads per second an account's clusters' drift passes would take at the configured drift interval, as measured at the wire."}, []string{"platform", "account"}),
	}
	reg.MustRegister(m.Reconciles, m.Duration, m.QueueDepth, m.QueueLatency, m.SpecToReady, m.Leader, m.Shards, m.Clusters, m.Tracked, m.NodeWatches, m.DriftFights, m.LogicalMoves,
		m.DriftStretch, m.DriftReads)
	for _, r := range Results {
		// Each result is served from the start at 0, so that a rate or
		// an increase sees its first pass.
		m.Reconciles.WithLabelValues(r)
	}
	m.Provider = metrics.New(reg)
	return m
}

// The results a cluster's pass is counted under (kpool_reconciles_total's
// result label). The first five are not failures: a dashboard reads
// pool_failed, unreachable and error as the failure rate.
const (
	// ResultOK: every pool settled; the cluster is looked at again at the
	// drift interval or on an event.
	ResultOK = "ok"
	// ResultFollowing: an operation is under way at the provider; the
	// cluster is looked at again soon to follow it.
	ResultFollowing = "following"
	// ResultBackoff: no pool failed in this pass, but one that failed
	// before waits for its retry.
	ResultBackoff = "backoff"
	// ResultDeferred: the provider's slots were all busy; the cluster's
	// turn comes again soon, without backoff.
	ResultDeferred = "deferred"
	// ResultThrottled: the provider asked kpool to slow down; the pass is
	// retried after its Retry-After.
	ResultThrottled = "throttled"
	// ResultPoolFailed: a pool's call failed and the pool backs off, or
	// a pool was found unable to progress without a person (a refused
	// spec, a foreign pool, an observed pool missing at the provider);
	// the rest of the cluster was reconciled.
	ResultPoolFailed = "pool_failed"
	// ResultUnreachable: the provider refuses the cluster or has not
	// answered for a while: it is Reachable=False.
	ResultUnreachable = "unreachable"
	// ResultError: the pass failed as a whole (the provider's list, the
	// store); it is retried with backoff.
	ResultError = "error"
)

// Results lists every result, for a dashboard's legend and the tests.
var Results = []string{ResultOK, ResultFollowing, ResultBackoff, ResultDeferred, ResultThrottled, ResultPoolFailed, ResultUnreachable, ResultError}

// Limits bound the calls to one provider.
type Limits struct {
	// Concurrency is how many calls to the provider may be in flight at
	// once; a quarter of that more (at least one) is kept for clusters
	// whose endpoint stopped answering, so they never take the others'.
	Concurrency int
	// RequestsPerSecond and Burst bound the calls to the provider's API:
	// each call takes a token, and each HTTP request it sends past its
	// first one more (ratelimit.Decorate).
	RequestsPerSecond float64
	Burst             int
}

// DefaultLimits are used for a provider without its own.
var DefaultLimits = Limits{Concurrency: 4, RequestsPerSecond: 20, Burst: 40}

package reconcile

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// Metrics are the controllers' Prometheus metrics, prefixed kpool_.
type Metrics struct {
	Reconciles    *prometheus.CounterVec   // by result
	Duration      prometheus.Histogram     // of a cluster's reconcile
	QueueDepth    prometheus.Gauge         // clusters waiting
	QueueLatency  prometheus.Histogram     // from enqueue to work
	ProviderCalls *prometheus.CounterVec   // by provider, operation, result
	CallDuration  *prometheus.HistogramVec // by provider, operation
	SpecToReady   prometheus.Histogram     // from a spec change seen to Ready reported
	Leader        prometheus.Gauge         // 1 while this process leads
}

// NewMetrics registers the metrics with reg (nil: a private registry).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	m := &Metrics{
		Reconciles: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kpool_reconciles_total",
			Help: "Cluster reconciles by result (ok, requeued, error)."}, []string{"result"}),
		Duration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kpool_reconcile_duration_seconds",
			Help: "Time to reconcile one cluster and its pools.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}),
		QueueDepth: prometheus.NewGauge(prometheus.GaugeOpts{Name: "kpool_queue_depth", Help: "Clusters waiting to be reconciled."}),
		QueueLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kpool_queue_latency_seconds",
			Help: "Time from a cluster being queued to its reconcile starting.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}),
		ProviderCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kpool_provider_calls_total",
			Help: "Provider calls by provider, operation and result."}, []string{"provider", "operation", "result"}),
		CallDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "kpool_provider_call_duration_seconds",
			Help: "Provider call latency.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}, []string{"provider", "operation"}),
		SpecToReady: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kpool_spec_to_ready_seconds",
			Help: "Time from a controller seeing a pool's new generation to reporting it Ready.", Buckets: prometheus.ExponentialBuckets(0.1, 2, 16)}),
		Leader: prometheus.NewGauge(prometheus.GaugeOpts{Name: "kpool_controller_leader", Help: "1 while this process runs the controllers."}),
	}
	reg.MustRegister(m.Reconciles, m.Duration, m.QueueDepth, m.QueueLatency, m.ProviderCalls, m.CallDuration, m.SpecToReady, m.Leader)
	return m
}

// Limits bound the calls to one provider.
type Limits struct {
	// Concurrency is how many clusters of the provider are reconciled at once.
	Concurrency int
	// RequestsPerSecond and Burst bound the calls to the provider's API.
	RequestsPerSecond float64
	Burst             int
}

// DefaultLimits are used for a provider without its own.
var DefaultLimits = Limits{Concurrency: 4, RequestsPerSecond: 20, Burst: 40}

// limited is a driver decorator: it waits for the provider's rate limiter
// before each call and counts the calls.
type limited struct {
	provider.Driver
	name    string
	limiter *rate.Limiter
	m       *Metrics
}

func (l *limited) call(ctx context.Context, op string, fn func() error) error {
	if err := l.limiter.Wait(ctx); err != nil {
		return err
	}
	start := time.Now()
	err := fn()
	l.m.CallDuration.WithLabelValues(l.name, op).Observe(time.Since(start).Seconds())
	l.m.ProviderCalls.WithLabelValues(l.name, op, result(err)).Inc()
	return err
}

// result names an error's kind for metrics.
func result(err error) string {
	var e *provider.Error
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &e):
		return string(e.Kind)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "canceled"
	}
	return "error"
}

func (l *limited) NodePoolList(ctx context.Context, c *kpool.Cluster) (out []provider.Pool, err error) {
	err = l.call(ctx, "list", func() error { out, err = l.Driver.NodePoolList(ctx, c); return err })
	return out, err
}

func (l *limited) NodePoolCreate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (out *provider.Pool, err error) {
	err = l.call(ctx, "create", func() error { out, err = l.Driver.NodePoolCreate(ctx, c, s); return err })
	return out, err
}

func (l *limited) NodePoolUpdate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (out *provider.Pool, err error) {
	err = l.call(ctx, "update", func() error { out, err = l.Driver.NodePoolUpdate(ctx, c, s); return err })
	return out, err
}

func (l *limited) NodePoolDelete(ctx context.Context, c *kpool.Cluster, name string) error {
	return l.call(ctx, "delete", func() error { return l.Driver.NodePoolDelete(ctx, c, name) })
}

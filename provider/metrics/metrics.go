// Package metrics is a driver decorator that counts and times every call a
// driver makes to its provider, in Prometheus (the shape of Karpenter's
// metrics.Decorate). The driver's optional interfaces stay reachable
// through provider.As.
package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// Metrics are the provider call metrics, prefixed kpool_.
type Metrics struct {
	Calls    *prometheus.CounterVec   // by provider, operation, result
	Duration *prometheus.HistogramVec // by provider, operation
}

// New registers the metrics with reg (nil: a private registry).
func New(reg prometheus.Registerer) *Metrics {
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	m := &Metrics{
		Calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kpool_provider_calls_total",
			Help: "Provider calls by provider, operation and result."}, []string{"provider", "operation", "result"}),
		Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "kpool_provider_call_duration_seconds",
			Help: "Provider call latency.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}, []string{"provider", "operation"}),
	}
	reg.MustRegister(m.Calls, m.Duration)
	return m
}

// Operations are the operation label's values.
var Operations = []string{"list", "create", "update", "delete"}

// Decorate returns d with every call counted by result and timed. Latency
// is a property of the call, so it is measured on the wall clock. Each
// operation's ok series is served from the start at 0, so that a rate of
// calls, or of errors against them, has a series to start from.
func Decorate(d provider.Driver, m *Metrics) provider.Driver {
	name := string(d.Capabilities().Provider)
	for _, op := range Operations {
		m.Calls.WithLabelValues(name, op, "ok")
		m.Duration.WithLabelValues(name, op)
	}
	return &driver{Driver: d, name: name, m: m}
}

type driver struct {
	provider.Driver
	name string
	m    *Metrics
}

// Unwrap returns the decorated driver.
func (d *driver) Unwrap() provider.Driver { return d.Driver }

func (d *driver) observe(op string, start time.Time, err error) {
	d.m.Duration.WithLabelValues(d.name, op).Observe(time.Since(start).Seconds())
	d.m.Calls.WithLabelValues(d.name, op, provider.Outcome(err)).Inc()
}

func (d *driver) NodePoolList(ctx context.Context, c *kpool.Cluster) ([]provider.Pool, error) {
	start := time.Now()
	out, err := d.Driver.NodePoolList(ctx, c)
	d.observe("list", start, err)
	return out, err
}

func (d *driver) NodePoolCreate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	start := time.Now()
	out, err := d.Driver.NodePoolCreate(ctx, c, s)
	d.observe("create", start, err)
	return out, err
}

func (d *driver) NodePoolUpdate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	start := time.Now()
	out, err := d.Driver.NodePoolUpdate(ctx, c, s)
	d.observe("update", start, err)
	return out, err
}

func (d *driver) NodePoolDelete(ctx context.Context, c *kpool.Cluster, providerName string) error {
	start := time.Now()
	err := d.Driver.NodePoolDelete(ctx, c, providerName)
	d.observe("delete", start, err)
	return err
}

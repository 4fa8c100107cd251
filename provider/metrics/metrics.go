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
	// Requests counts the HTTP requests the calls sent (charged at the
	// wire, SDK retries included), by provider, operation and access
	// (read, write); PerCall is how many one call sent.
	Requests *prometheus.CounterVec
	PerCall  *prometheus.HistogramVec
	// Budget is what the accounts' budgets charged (budget.go).
	Budget *Budget
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
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kpool_provider_requests_total",
			Help: "HTTP requests the provider calls sent (SDK retries included), by provider, operation and access (read, write)."}, []string{"provider", "operation", "access"}),
		PerCall: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "kpool_provider_requests_per_call",
			Help: "HTTP requests one provider call sent.", Buckets: []float64{0, 1, 2, 3, 5, 10, 20, 50, 100, 200}}, []string{"provider", "operation"}),
	}
	reg.MustRegister(m.Calls, m.Duration, m.Requests, m.PerCall)
	m.Budget = newBudget(reg)
	return m
}

// Operations are the operation label's values.
var Operations = []string{"list", "create", "update", "delete"}

// Decorate returns d with every call counted by result and timed, and the
// HTTP requests each sent counted (provider.WithMeter, which the wire
// counts on). Latency
// is a property of the call, so it is measured on the wall clock. Each
// operation's ok series is served from the start at 0, so that a rate of
// calls, or of errors against them, has a series to start from.
func Decorate(d provider.Driver, m *Metrics) provider.Driver {
	name := string(d.Capabilities().Provider)
	for _, op := range Operations {
		m.Calls.WithLabelValues(name, op, "ok")
		m.Duration.WithLabelValues(name, op)
		m.PerCall.WithLabelValues(name, op)
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

func (d *driver) observe(op string, start time.Time, sent *provider.Meter, err error) {
	d.m.Duration.WithLabelValues(d.name, op).Observe(time.Since(start).Seconds())
	d.m.Calls.WithLabelValues(d.name, op, provider.Outcome(err)).Inc()
	r, w := sent.Reads(), sent.Writes()
	if r > 0 {
		d.m.Requests.WithLabelValues(d.name, op, provider.Read.String()).Add(float64(r))
	}
	if w > 0 {
		d.m.Requests.WithLabelValues(d.name, op, provider.Write.String()).Add(float64(w))
	}
	d.m.PerCall.WithLabelValues(d.name, op).Observe(float64(r + w))
}

func (d *driver) NodePoolList(ctx context.Context, c *kpool.Cluster) ([]provider.Pool, error) {
	start := time.Now()
	ctx, sent := provider.WithMeter(ctx)
	out, err := d.Driver.NodePoolList(ctx, c)
	d.observe("list", start, sent, err)
	return out, err
}

func (d *driver) NodePoolCreate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	start := time.Now()
	ctx, sent := provider.WithMeter(ctx)
	out, err := d.Driver.NodePoolCreate(ctx, c, s)
	d.observe("create", start, sent, err)
	return out, err
}

func (d *driver) NodePoolUpdate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	start := time.Now()
	ctx, sent := provider.WithMeter(ctx)
	out, err := d.Driver.NodePoolUpdate(ctx, c, s)
	d.observe("update", start, sent, err)
	return out, err
}

func (d *driver) NodePoolDelete(ctx context.Context, c *kpool.Cluster, providerName string) error {
	start := time.Now()
	ctx, sent := provider.WithMeter(ctx)
	err := d.Driver.NodePoolDelete(ctx, c, providerName)
	d.observe("delete", start, sent, err)
	return err
}

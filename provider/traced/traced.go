// Package traced is a driver decorator that gives every call a driver
// makes to its provider a span (the shape of provider/metrics): named by
// the operation, with the provider, the cluster, the pool and the kind of
// result, a child of the controllers' reconcile span. The driver's
// optional interfaces stay reachable through provider.As.
package traced

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/internal/scrub"
	"github.com/kpool/kpool/internal/tracing"
	"github.com/kpool/kpool/provider"
)

// Attribute keys of a provider call's span.
const (
	AttrProvider  = "kpool.provider"
	AttrOperation = "kpool.operation"
	AttrResult    = "kpool.result"
	AttrCluster   = "kpool.cluster_id"
	AttrPool      = "kpool.provider_pool"
)

// Decorate returns d with every call traced on tp; with a nil tp, d
// itself.
func Decorate(d provider.Driver, tp trace.TracerProvider) provider.Driver {
	if tp == nil {
		return d
	}
	return &driver{Driver: d, tracer: tracing.Tracer(tp), name: attribute.String(AttrProvider, string(d.Capabilities().Provider))}
}

type driver struct {
	provider.Driver
	tracer trace.Tracer
	name   attribute.KeyValue
}

// Unwrap returns the decorated driver.
func (d *driver) Unwrap() provider.Driver { return d.Driver }

// start opens the span of operation op on cluster c (and pool, if any).
func (d *driver) start(ctx context.Context, op string, c *kpool.Cluster, pool string) (context.Context, trace.Span) {
	attrs := []attribute.KeyValue{d.name, attribute.String(AttrOperation, op), attribute.String(AttrCluster, c.ID)}
	if pool != "" {
		attrs = append(attrs, attribute.String(AttrPool, pool))
	}
	return d.tracer.Start(ctx, "provider."+op, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// end closes span with the kind of err's result; an error's message (the
// provider's mapped reason) is its status, scrubbed of secrets as the log
// is: a trace backend is no safer a place for one.
func end(span trace.Span, err error) {
	span.SetAttributes(attribute.String(AttrResult, provider.Outcome(err)))
	if err != nil {
		span.SetStatus(codes.Error, scrub.String(err.Error()))
	}
	span.End()
}

func (d *driver) NodePoolList(ctx context.Context, c *kpool.Cluster) ([]provider.Pool, error) {
	ctx, span := d.start(ctx, "list", c, "")
	out, err := d.Driver.NodePoolList(ctx, c)
	end(span, err)
	return out, err
}

func (d *driver) NodePoolCreate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	ctx, span := d.start(ctx, "create", c, s.ProviderName)
	out, err := d.Driver.NodePoolCreate(ctx, c, s)
	end(span, err)
	return out, err
}

func (d *driver) NodePoolUpdate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	ctx, span := d.start(ctx, "update", c, s.ProviderName)
	out, err := d.Driver.NodePoolUpdate(ctx, c, s)
	end(span, err)
	return out, err
}

func (d *driver) NodePoolDelete(ctx context.Context, c *kpool.Cluster, providerName string) error {
	ctx, span := d.start(ctx, "delete", c, providerName)
	err := d.Driver.NodePoolDelete(ctx, c, providerName)
	end(span, err)
	return err
}

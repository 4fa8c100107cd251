// Package tracing is what kpool's rooms share of OpenTelemetry: the tracer
// they start spans with, the attribute naming an API request, and the W3C
// traceparent an event keeps so that the controllers' work on it links back
// to the request that caused it.
//
// Nothing here sets OpenTelemetry's global provider: each room is handed a
// trace.TracerProvider (kpool serve and dev build one for --otlp-endpoint),
// and without one a room starts no span at all.
package tracing

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Scope is the instrumentation scope of every kpool span.
const Scope = "github.com/kpool/kpool"

// RequestID is the attribute of a span (or a span link) that names the
// API request it serves or follows: the X-Request-ID of the access log and
// the request_id of the audit trail.
const RequestID = "kpool.request_id"

// Tracer is tp's kpool tracer, or nil when tp is nil (tracing off).
func Tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		return nil
	}
	return tp.Tracer(Scope)
}

// propagator reads and writes the W3C traceparent (and tracestate).
var propagator = propagation.TraceContext{}

// TraceParent is the W3C traceparent of the span in ctx, or "" when ctx
// holds no valid, sampled span (tracing off, or this trace not kept): what
// an event records of the request that wrote it.
func TraceParent(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() || !sc.IsSampled() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagator.Inject(ctx, c)
	return c["traceparent"]
}

// Parse is the span context a TraceParent names; ok is false for "" or a
// value that is not a valid traceparent.
func Parse(traceParent string) (sc trace.SpanContext, ok bool) {
	if traceParent == "" {
		return sc, false
	}
	ctx := propagator.Extract(context.Background(), propagation.MapCarrier{"traceparent": traceParent})
	sc = trace.SpanContextFromContext(ctx)
	return sc, sc.IsValid()
}

// Extract returns ctx with the remote span context of a carrier's
// traceparent header (an incoming HTTP request's), if it has a valid one.
func Extract(ctx context.Context, c propagation.TextMapCarrier) context.Context {
	return propagator.Extract(ctx, c)
}

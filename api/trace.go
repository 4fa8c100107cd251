package api

import (
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/kpool/kpool/internal/tracing"
)

// Trace makes the server give every request a span on tp (a child of the
// caller's traceparent, if it sends one), named by its route pattern, with
// the method, route, status and kpool request id; the service's store
// calls and the events the request writes carry it on. Without Trace (or
// with a nil tp) no request is traced.
func (s *Server) Trace(tp trace.TracerProvider) *Server {
	s.tracer = tracing.Tracer(tp)
	return s
}

// startSpan opens the span of request r, whose kpool request id is id,
// and returns r in it.
func (s *Server) startSpan(r *http.Request, id string) (*http.Request, trace.Span) {
	ctx := tracing.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, span := s.tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
		attribute.String("http.request.method", r.Method), attribute.String("url.path", r.URL.Path),
		attribute.String(tracing.RequestID, id)))
	return r.WithContext(ctx), span
}

// endSpan closes the span of request r, which was answered with status:
// named "METHOD /route/{pattern}" once the router has matched r (a path
// no route takes keeps the method alone, so ids never make span names).
// A 5xx is an error of the server; a 4xx is the caller's, not the span's.
func endSpan(span trace.Span, r *http.Request, status int) {
	if route := routeOf(r.Pattern); route != "" {
		span.SetName(r.Method + " " + route)
		span.SetAttributes(attribute.String("http.route", route))
	}
	span.SetAttributes(attribute.Int("http.response.status_code", status))
	if status >= 500 {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
	span.End()
}

// routeOf is the path of a ServeMux pattern ("POST /api/v1/nodepools/{id}"
// gives "/api/v1/nodepools/{id}"), or "" for none or the catch-all.
func routeOf(pattern string) string {
	if i := strings.IndexByte(pattern, '/'); i >= 0 {
		pattern = pattern[i:]
	}
	if pattern == "/" || !strings.HasPrefix(pattern, "/") {
		return ""
	}
	return pattern
}

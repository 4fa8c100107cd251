package api

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/internal/tracing"
	"github.com/kpool/kpool/store/testdb"
)

func TestRouteOf(t *testing.T) {
	for pattern, want := range map[string]string{
		"POST /api/v1/clusters/{id}/nodepools": "/api/v1/clusters/{id}/nodepools",
		"/healthz":                             "/healthz",
		"/":                                    "",
		"":                                     "",
	} {
		if got := routeOf(pattern); got != want {
			t.Errorf("routeOf(%q) = %q, want %q", pattern, got, want)
		}
	}
}

// TestRequestSpans: a traced server gives each request one server span,
// named by its route pattern (a path no route takes: by its method
// alone), with the method, route, status and request id, continuing the
// caller's traceparent; the event the request writes keeps the span's
// context. An untraced server starts none.
func TestRequestSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	a := newTestAPI(t, testdb.SQLite)
	a.server.Trace(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	const caller = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	create := a.as(user, "POST", "/api/v1/clusters", `{"name":"prod","spec":`+gcpCluster+`}`, "traceparent: "+caller, "X-Request-ID: req-create")
	want(t, create, http.StatusCreated)
	want(t, a.as(user, "GET", "/api/v1/nowhere/1", ""), http.StatusNotFound)
	want(t, a.as(user, "GET", "/api/v1/nodepools/550e8400-e29b-41d4-a716-446655440000", ""), http.StatusNotFound)

	tests := []struct {
		name, route string
		status      int
	}{
		{"POST /api/v1/clusters", "/api/v1/clusters", 201},
		{"GET", "", 404},
		{"GET /api/v1/nodepools/{id}", "/api/v1/nodepools/{id}", 404},
	}
	spans := rec.Ended()
	if len(spans) != len(tests) {
		t.Fatalf("%d spans, want %d", len(spans), len(tests))
	}
	for i, tc := range tests {
		s := spans[i]
		attrs := map[attribute.Key]string{}
		for _, kv := range s.Attributes() {
			attrs[kv.Key] = kv.Value.Emit()
		}
		if s.Name() != tc.name || attrs["http.route"] != tc.route || attrs["http.response.status_code"] != strconv.Itoa(tc.status) ||
			attrs[tracing.RequestID] == "" || s.Status().Code == codes.Error {
			t.Errorf("span %d: %s %v %v, want %s", i, s.Name(), attrs, s.Status(), tc.name)
		}
	}
	first := spans[0]
	if first.Parent().TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || first.Parent().SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("the create's span is not the caller's child: parent %v", first.Parent())
	}
	evs, err := a.svc.Store.AuditEvents(context.Background(), kpool.EventFilter{Type: kpool.EventClusterCreated})
	if err != nil || len(evs) != 1 {
		t.Fatalf("events %v, %v", evs, err)
	}
	if sc, ok := tracing.Parse(evs[0].TraceParent); !ok || sc.SpanID() != first.SpanContext().SpanID() || evs[0].RequestID != "req-create" {
		t.Errorf("the create's event keeps %q (request %q), not its span %v", evs[0].TraceParent, evs[0].RequestID, first.SpanContext().SpanID())
	}
}

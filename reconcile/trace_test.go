package reconcile_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/internal/tracing"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/store/testdb"
	"github.com/kpool/kpool/store/traced"
)

// TestTraceFromRequestToProvider: one API create of a pool, traced in
// memory, yields the request's server span, the store transaction under
// it, and the controllers' reconcile pass, linked to the request by the
// traceparent its event kept, with the provider's create call under the
// pass: whether the event queued the pass (the controllers were running)
// or the pass found the pool on its own (they started after the create,
// their feed after its event).
func TestTraceFromRequestToProvider(t *testing.T) {
	for _, running := range []bool{true, false} {
		t.Run(map[bool]string{true: "controllers running", false: "controllers started after"}[running], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { traceCreate(t, running) })
		})
	}
}

func traceCreate(t *testing.T, running bool) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	pt := anyPlatform(platforms)
	w := newWorld(t, traced.New(testdb.SQLite(t), tp, "sqlite"), pt)
	start := func() { t.Cleanup(w.start("a", func(c *reconcile.Config) { c.Traces = tp })) }
	if running {
		start()
	}

	access, err := auth.NewAccess(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := api.NewServer(w.svc, access, slog.New(slog.NewTextHandler(io.Discard, nil))).Trace(tp)
	body := `{"name":"web","cluster_id":"` + w.cluster.ID + `","spec":{"platform":` + w.block + `,"nodeCount":2}}`
	req := httptest.NewRequest(http.MethodPost, "/api/v1/nodepools", strings.NewReader(body))
	req.Header.Set("X-User-Email", owner)
	req.Header.Set("X-Request-ID", "req-trace-1")
	rr := httptest.NewRecorder()
	srv.ServeHTTP(rr, req)
	if rr.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rr.Code, rr.Body)
	}
	if !running {
		start()
	}
	w.until(time.Minute, func() (bool, string) {
		return len(find(rec.Ended(), "provider.create")) > 0, "no provider create span"
	})

	spans := rec.Ended()
	reqs := find(spans, "POST /api/v1/nodepools")
	if len(reqs) != 1 {
		t.Fatalf("%d request spans, want 1", len(reqs))
	}
	request := reqs[0]
	if attr(request, tracing.RequestID) != "req-trace-1" || request.SpanKind() != trace.SpanKindServer {
		t.Errorf("request span: %v %v", request.Attributes(), request.SpanKind())
	}
	var stored bool
	for _, s := range spans {
		stored = stored || strings.HasPrefix(s.Name(), "store.") && s.Parent().SpanID() == request.SpanContext().SpanID()
	}
	if !stored {
		t.Error("no store span under the request")
	}

	create := find(spans, "provider.create")[0]
	if attr(create, "kpool.result") != "ok" || attr(create, "kpool.provider_pool") == "" {
		t.Errorf("provider create span: %v", create.Attributes())
	}
	var pass sdktrace.ReadOnlySpan
	for _, s := range find(spans, "reconcile cluster") {
		if s.SpanContext().SpanID() == create.Parent().SpanID() {
			pass = s
		}
	}
	if pass == nil {
		t.Fatalf("the provider create (parent %v) is not under a reconcile pass", create.Parent().SpanID())
	}
	if pass.SpanContext().TraceID() == request.SpanContext().TraceID() {
		t.Error("the pass is in the request's trace: it should be its own, linked")
	}
	linked := false
	for _, l := range pass.Links() {
		if l.SpanContext.SpanID() == request.SpanContext().SpanID() && l.SpanContext.TraceID() == request.SpanContext().TraceID() {
			for _, kv := range l.Attributes {
				linked = linked || kv.Key == tracing.RequestID && kv.Value.AsString() == "req-trace-1"
			}
		}
	}
	if !linked {
		t.Errorf("the pass links %v, not the request %v with its request id", pass.Links(), request.SpanContext())
	}
	if w.calls(fake.Create, "") != 1 {
		t.Errorf("%d creates", w.calls(fake.Create, ""))
	}
}

// anyPlatform is one of the tests' platforms, whichever.
func anyPlatform[K comparable, V any](m map[K]V) K {
	for k := range m {
		return k
	}
	panic("no platform")
}

func find(spans []sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

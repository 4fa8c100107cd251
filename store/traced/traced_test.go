package traced_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/store/testdb"
	"github.com/kpool/kpool/store/traced"
)

// TestSpans: a read and a transaction made in a span are each a child
// span named by the operation, with no SQL; a missing row is an error
// span with its code; calls outside any span start none; and without a
// provider the store is returned as it is.
func TestSpans(t *testing.T) {
	raw := testdb.SQLite(t)
	if traced.New(raw, nil, "sqlite") != raw {
		t.Fatal("a nil provider decorated the store")
	}
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	st := traced.New(raw, tp, "sqlite")

	if _, err := st.LastEventID(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Ended()); n != 0 {
		t.Fatalf("%d spans outside any span, want none", n)
	}

	ctx, parent := tp.Tracer("test").Start(context.Background(), "request")
	if _, err := st.Cluster(ctx, "00000000-0000-0000-0000-000000000000"); !kpool.IsNotFound(err) {
		t.Fatalf("Cluster = %v, want NOT_FOUND", err)
	}
	if err := st.Write(ctx, func(tx kpool.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	parent.End()

	tests := []struct {
		name   string
		status codes.Code
		code   string
	}{
		{"store.Cluster", codes.Error, kpool.CodeNotFound},
		{"store.Write", codes.Unset, ""},
	}
	spans := rec.Ended()
	if len(spans) != len(tests)+1 {
		t.Fatalf("%d spans, want %d", len(spans), len(tests)+1)
	}
	for i, tc := range tests {
		s := spans[i]
		attrs := map[attribute.Key]string{}
		for _, a := range s.Attributes() {
			attrs[a.Key] = a.Value.Emit()
		}
		if s.Name() != tc.name || s.Parent().SpanID() != parent.SpanContext().SpanID() || s.Status().Code != tc.status ||
			attrs["db.system.name"] != "sqlite" || attrs["kpool.error_code"] != tc.code {
			t.Errorf("span %d: %s parent %s status %v attrs %v; want %s under the request", i, s.Name(), s.Parent().SpanID(), s.Status(), attrs, tc.name)
		}
		for k, v := range attrs {
			if k == "db.query.text" || len(v) > 64 {
				t.Errorf("span %s carries %s=%q: no SQL in spans", s.Name(), k, v)
			}
		}
	}
}

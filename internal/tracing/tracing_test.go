package tracing

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

// TestTraceParentRoundTrip: what an event records of a sampled span parses
// back to the same span context; nothing is recorded of no span or an
// unsampled one, and garbage parses to nothing.
func TestTraceParentRoundTrip(t *testing.T) {
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	sampled := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled})
	tests := []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"sampled", trace.ContextWithSpanContext(context.Background(), sampled), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		{"unsampled", trace.ContextWithSpanContext(context.Background(), sampled.WithTraceFlags(0)), ""},
		{"no span", context.Background(), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := TraceParent(tc.ctx)
			if got != tc.want {
				t.Fatalf("TraceParent = %q, want %q", got, tc.want)
			}
			sc, ok := Parse(got)
			if ok != (tc.want != "") || ok && (sc.TraceID() != tid || sc.SpanID() != sid || !sc.IsRemote()) {
				t.Fatalf("Parse(%q) = %v, %v", got, sc, ok)
			}
		})
	}
	for _, bad := range []string{"x", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-zz-01"} {
		if _, ok := Parse(bad); ok {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	if Tracer(nil) != nil {
		t.Error("a nil provider gave a tracer")
	}
}

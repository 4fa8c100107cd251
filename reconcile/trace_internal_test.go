package reconcile

import (
	"context"
	"errors"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/kpool/kpool"
)

// TestPassLinks: a pass links the requests followed since the last pass
// of its cluster, once; a pass put off by a busy lane hands them on to the
// next; an event without a traceparent, or of another cluster, adds none;
// at most maxLinks are kept; with tracing off nothing is kept.
func TestPassLinks(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	c := &Controller{tracer: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer("t"), links: map[string][]trace.Link{}}
	const req = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	c.follow(&kpool.Event{ClusterID: "c1", TraceParent: req, RequestID: "r1", Type: kpool.EventNodePoolCreated})
	c.follow(&kpool.Event{ClusterID: "c1", RequestID: "r2"})
	c.follow(&kpool.Event{ClusterID: "c2", TraceParent: req, RequestID: "r3"})

	tests := []struct {
		name  string
		err   error
		next  time.Duration
		links int
		out   string
	}{
		{"busy lane", errLaneBusy, 0, 1, "lane_busy"},
		{"acts", nil, time.Second, 1, "requeued"},
		{"next pass", errors.New("boom"), 0, 0, "error"},
	}
	for i, tc := range tests {
		_, p := c.startPass(context.Background(), "c1")
		c.endPass(p, "c1", tc.next, tc.err)
		s := rec.Ended()[i]
		if len(s.Links()) != tc.links || attrValue(s, "kpool.outcome") != tc.out {
			t.Errorf("%s: %d links, outcome %q; want %d, %q", tc.name, len(s.Links()), attrValue(s, "kpool.outcome"), tc.links, tc.out)
		}
	}
	for range 2 * maxLinks {
		c.follow(&kpool.Event{ClusterID: "c3", TraceParent: req})
	}
	if n := len(c.links["c3"]); n != maxLinks {
		t.Errorf("%d links kept, want %d", n, maxLinks)
	}

	off := &Controller{links: map[string][]trace.Link{}}
	off.follow(&kpool.Event{ClusterID: "c1", TraceParent: req})
	if ctx, p := off.startPass(context.Background(), "c1"); len(off.links) != 0 || p != nil || ctx != context.Background() {
		t.Error("tracing off kept links or started a span")
	}
}

func attrValue(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

package traced_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/provider/traced"
)

// TestSpanPerCall: each call is one span, a child of the caller's, named
// by its operation, with the provider, cluster, pool and the kind of its
// result in snake case.
func TestSpanPerCall(t *testing.T) {
	cl := &kpool.Cluster{ID: "c1"}
	spec := provider.PoolSpec{ProviderName: "web", MachineType: "m", Count: 1, Labels: map[string]string{provider.LabelPool: "web"}}
	tests := []struct {
		name   string
		call   func(d provider.Driver, f *fake.Driver) error
		span   string
		result string
		pool   string
	}{
		{"list", func(d provider.Driver, _ *fake.Driver) error {
			_, err := d.NodePoolList(context.Background(), cl)
			return err
		}, "provider.list", "ok", ""},
		{"create over quota", func(d provider.Driver, f *fake.Driver) error {
			f.FailNext(fake.Create, 1, &provider.Error{Kind: provider.KindQuota})
			_, err := d.NodePoolCreate(context.Background(), cl, spec)
			return err
		}, "provider.create", "quota", "web"},
		{"update of a missing pool", func(d provider.Driver, _ *fake.Driver) error {
			_, err := d.NodePoolUpdate(context.Background(), cl, spec)
			return err
		}, "provider.update", "not_found", "web"},
		{"delete", func(d provider.Driver, _ *fake.Driver) error {
			return d.NodePoolDelete(context.Background(), cl, "web")
		}, "provider.delete", "ok", "web"},
		{"list failing with a credential in its message", func(d provider.Driver, f *fake.Driver) error {
			f.FailNext(fake.List, 1, &provider.Error{Kind: provider.KindPermissionDenied, Reason: "sent Authorization: Bearer abcdefgh.ijklmnop"})
			_, err := d.NodePoolList(context.Background(), cl)
			return err
		}, "provider.list", "permission_denied", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			f := fake.New(fake.Options{})
			d := traced.Decorate(f, tp)
			if err := tc.call(d, f); (err == nil) != (tc.result == "ok") {
				t.Fatalf("call returned %v", err)
			}
			spans := rec.Ended()
			if len(spans) != 1 {
				t.Fatalf("%d spans, want 1", len(spans))
			}
			s := spans[0]
			attrs := map[attribute.Key]string{}
			for _, a := range s.Attributes() {
				attrs[a.Key] = a.Value.Emit()
			}
			want := map[attribute.Key]string{traced.AttrProvider: string(f.Capabilities().Provider), traced.AttrResult: tc.result, traced.AttrCluster: "c1"}
			if tc.pool != "" {
				want[traced.AttrPool] = tc.pool
			}
			for k, v := range want {
				if attrs[k] != v {
					t.Errorf("%s = %q, want %q", k, attrs[k], v)
				}
			}
			if strings.Contains(s.Status().Description, "abcdefgh") {
				t.Errorf("the span's status shows a credential: %s", s.Status().Description)
			}
			if s.Name() != tc.span || (s.Status().Code == codes.Error) != (tc.result != "ok") {
				t.Errorf("span %s status %v", s.Name(), s.Status())
			}
		})
	}
}

// TestOutcome: the result names of errors that are not a provider's.
func TestOutcome(t *testing.T) {
	for err, want := range map[error]string{nil: "ok", context.Canceled: "canceled", errors.New("x"): "error",
		provider.ErrPermissionDenied: "permission_denied"} {
		if got := provider.Outcome(err); got != want {
			t.Errorf("Outcome(%v) = %q, want %q", err, got, want)
		}
	}
}

// TestOff: without a provider the driver is returned as it is; with one,
// the driver's optional interfaces stay reachable.
func TestOff(t *testing.T) {
	f := fake.New(fake.Options{})
	if traced.Decorate(f, nil) != provider.Driver(f) {
		t.Fatal("a nil provider decorated the driver")
	}
	d := traced.Decorate(f, sdktrace.NewTracerProvider())
	if got, ok := provider.As[*fake.Driver](d); !ok || got != f {
		t.Fatal("the driver is not reachable through the decorator")
	}
}

package metrics_test

import (
	"context"
	"errors"
	"regexp"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/provider/metrics"
)

// plain fails every list with an error that is not a provider's.
type plain struct{ *fake.Driver }

func (plain) NodePoolList(context.Context, *kpool.Cluster) ([]provider.Pool, error) {
	return nil, errors.New("not a provider error")
}

// diskTyper is an optional interface a driver may offer beyond Driver.
type diskTyper interface{ DiskType(string) string }

// diskTyped is a driver with an optional interface.
type diskTyped struct{ *fake.Driver }

func (diskTyped) DiskType(string) string { return "Managed" }

// TestCountsByResult: each call is counted under its operation and the
// kind of its error, and timed.
func TestCountsByResult(t *testing.T) {
	cl := &kpool.Cluster{ID: "c1"}
	spec := provider.PoolSpec{ProviderName: "web", MachineType: "Standard_D4s_v5", Count: 1, Labels: map[string]string{provider.LabelPool: "web"}}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name   string
		call   func(d provider.Driver, f *fake.Driver) error
		op     string
		result string
	}{
		{"list", func(d provider.Driver, _ *fake.Driver) error {
			_, err := d.NodePoolList(context.Background(), cl)
			return err
		}, "list", "ok"},
		{"create throttled", func(d provider.Driver, f *fake.Driver) error {
			f.FailNext(fake.Create, 1, &provider.Error{Kind: provider.KindThrottled})
			_, err := d.NodePoolCreate(context.Background(), cl, spec)
			return err
		}, "create", "throttled"},
		{"update of a missing pool", func(d provider.Driver, _ *fake.Driver) error {
			_, err := d.NodePoolUpdate(context.Background(), cl, spec)
			return err
		}, "update", "not_found"},
		{"create over quota", func(d provider.Driver, f *fake.Driver) error {
			f.FailNext(fake.Create, 1, &provider.Error{Kind: provider.KindQuota})
			_, err := d.NodePoolCreate(context.Background(), cl, spec)
			return err
		}, "create", "quota"},
		{"create refused", func(d provider.Driver, f *fake.Driver) error {
			f.FailNext(fake.Create, 1, &provider.Error{Kind: provider.KindPermissionDenied})
			_, err := d.NodePoolCreate(context.Background(), cl, spec)
			return err
		}, "create", "permission_denied"},
		{"delete canceled", func(d provider.Driver, _ *fake.Driver) error { return d.NodePoolDelete(canceled, cl, "web") }, "delete", "canceled"},
		{"list failing otherwise", func(d provider.Driver, _ *fake.Driver) error {
			_, err := d.NodePoolList(context.Background(), cl)
			return err
		}, "list", "error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := fake.New(fake.Options{})
			var inner provider.Driver = f
			if tc.result == "error" {
				inner = plain{f}
			}
			m := metrics.New(nil)
			d := metrics.Decorate(inner, m)
			err := tc.call(d, f)
			if (err == nil) != (tc.result == "ok") {
				t.Fatalf("call returned %v", err)
			}
			if n := testutil.ToFloat64(m.Calls.WithLabelValues("azure", tc.op, tc.result)); n != 1 {
				t.Fatalf("calls{%s,%s} = %v, want 1", tc.op, tc.result, n)
			}
			// Each operation's ok series is there from the start, at 0.
			wantCalls := len(metrics.Operations)
			if tc.result != "ok" {
				wantCalls++
			}
			if n := testutil.CollectAndCount(m.Calls); n != wantCalls {
				t.Fatalf("%d call series, want %d", n, wantCalls)
			}
			if n := testutil.CollectAndCount(m.Duration); n != len(metrics.Operations) {
				t.Fatalf("%d duration series, want %d", n, len(metrics.Operations))
			}
		})
	}
}

// TestOptionalInterfacesReachable: the decorated driver's DiskTyper is
// found through the decorator.
func TestOptionalInterfacesReachable(t *testing.T) {
	f := fake.New(fake.Options{})
	d := metrics.Decorate(diskTyped{f}, metrics.New(nil))
	if _, ok := d.(diskTyper); ok {
		t.Fatal("the decorator itself claims DiskTyper")
	}
	if dt, ok := provider.As[diskTyper](d); !ok || dt.DiskType("") != "Managed" {
		t.Fatal("DiskTyper not reachable through the decorator")
	}
	if d.Capabilities().Provider != f.Capabilities().Provider {
		t.Fatalf("capabilities not forwarded: %+v", d.Capabilities())
	}
}

// TestResultLabels: every kind of provider error is a result label a
// query can name unquoted: lower case and underscores, never a space.
func TestResultLabels(t *testing.T) {
	kinds := []provider.Kind{provider.KindNotImplemented, provider.KindValidation, provider.KindNotFound, provider.KindAlreadyExists,
		provider.KindThrottled, provider.KindTransient, provider.KindPermissionDenied, provider.KindForeign, provider.KindQuota}
	label := regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)
	for _, k := range kinds {
		f := fake.New(fake.Options{})
		f.FailNext(fake.List, 1, &provider.Error{Kind: k})
		m := metrics.New(nil)
		_, _ = metrics.Decorate(f, m).NodePoolList(context.Background(), &kpool.Cluster{ID: "c1"})
		for _, s := range collect(t, m) {
			if !label.MatchString(s) {
				t.Errorf("kind %q: result label %q", k, s)
			}
		}
	}
}

// collect returns the result labels of m's call series.
func collect(t *testing.T, m *metrics.Metrics) []string {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(m.Calls)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		for _, s := range mf.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "result" {
					out = append(out, l.GetValue())
				}
			}
		}
	}
	return out
}

package metrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/provider/metrics"
)

// describing is a driver whose list sends a read per pool and a write, as
// the wire would count them (provider.Charge).
type describing struct{ *fake.Driver }

func (d describing) NodePoolList(ctx context.Context, c *kpool.Cluster) ([]provider.Pool, error) {
	for _, a := range []provider.Access{provider.Read, provider.Read, provider.Read, provider.Write} {
		if err := provider.Charge(ctx, a); err != nil {
			return nil, err
		}
	}
	return d.Driver.NodePoolList(ctx, c)
}

// TestRequestsPerOperation: the HTTP requests a call sends are counted
// under its operation and access, and how many one call sent.
func TestRequestsPerOperation(t *testing.T) {
	m := metrics.New(prometheus.NewRegistry())
	d := metrics.Decorate(describing{fake.New(fake.Options{})}, m)
	if _, err := d.NodePoolList(context.Background(), &kpool.Cluster{ID: "c1"}); err != nil {
		t.Fatal(err)
	}
	name := string(d.Capabilities().Provider)
	if r, w := testutil.ToFloat64(m.Requests.WithLabelValues(name, "list", "read")), testutil.ToFloat64(m.Requests.WithLabelValues(name, "list", "write")); r != 3 || w != 1 {
		t.Fatalf("requests of a list: %v reads, %v writes; want 3 and 1", r, w)
	}
	if n := testutil.CollectAndCount(m.PerCall, "kpool_provider_requests_per_call"); n != len(metrics.Operations) {
		t.Fatalf("%d series of requests per call, want one per operation", n)
	}
}

// TestBudgetMetrics: each charge is counted by platform, account and
// access, a wait with its time, and a window's use of the budget's rate.
func TestBudgetMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	b := metrics.New(reg).Budget
	a := provider.Account{Platform: "p", Key: "acct", Region: "r"}
	at := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for i := range 5 {
		b.Spent(provider.Spend{Account: a, Access: provider.Read, Limit: 1, At: at.Add(time.Duration(i) * time.Second)})
	}
	b.Spent(provider.Spend{Account: a, Access: provider.Read, Waited: 2 * time.Second, Limit: 1, At: at.Add(metrics.UseWindow)})
	l := []string{"p", "p/acct/r", "read"}
	if got := testutil.ToFloat64(b.Charged.WithLabelValues(l...)); got != 6 {
		t.Fatalf("kpool_budget_requests_total %v, want 6", got)
	}
	if w, s := testutil.ToFloat64(b.Waits.WithLabelValues(l...)), testutil.ToFloat64(b.WaitSeconds.WithLabelValues(l...)); w != 1 || s != 2 {
		t.Fatalf("waits %v for %vs, want 1 for 2s", w, s)
	}
	if got := testutil.ToFloat64(b.Use.WithLabelValues(l...)); got != 0.5 {
		t.Fatalf("use ratio %v after 5 requests in a window of 10 at 1/s, want 0.5", got)
	}
	if n, err := testutil.GatherAndCount(reg, "kpool_budget_requests_total", "kpool_budget_waits_total", "kpool_budget_wait_seconds_total", "kpool_budget_use_ratio"); err != nil || n != 4 {
		t.Fatalf("%d budget series gathered (%v), want 4", n, err)
	}
}

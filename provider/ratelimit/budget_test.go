package ratelimit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/time/rate"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/provider/ratelimit"
)

// wireClient is an HTTP client over the wire of a credential that may be
// sent to url, of the catalog's first platform.
func wireClient(t *testing.T, srv *httptest.Server) *http.Client {
	t.Helper()
	p := catalog.Profiles()[0]
	set, err := provider.ParseCredentials([]byte(`
credentials:
  team:
    type: `+string(p.Type())+`
    kind: default
    scopes: ["*"]
    endpoints: [`+srv.URL+`]
`), catalog.Profiles())
	if err != nil {
		t.Fatal(err)
	}
	cred, _ := set.Credential("team")
	return provider.Client(cred, provider.Wire(cred, srv.Client().Transport))
}

// server is an API on loopback that counts the requests it answers.
func server(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n.Add(1) }))
	t.Cleanup(srv.Close)
	return srv, &n
}

func send(ctx context.Context, c *http.Client, method, url string) error {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err == nil {
		_ = resp.Body.Close()
	}
	return err
}

// waitFor polls cond until it holds, failing after a deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not reached: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestWireCharges: every request the wire sends is charged to the budget in
// its context: reads past the budget wait on its clock, never reaching the
// server early, while a write goes (its own bucket); two clusters of one
// account share a budget, another account's is its own; the meters count
// what was sent; observers hear each charge.
func TestWireCharges(t *testing.T) {
	srv, served := server(t)
	client := wireClient(t, srv)
	clock := clocktesting.NewFakeClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	var spent atomic.Int64
	budgets := ratelimit.NewBudgets(clock, nil, func(provider.Spend) { spent.Add(1) })
	q := provider.Quota{Reads: 1, ReadBurst: 2, Writes: 1, WriteBurst: 1}
	acct := provider.Account{Platform: "p", Key: "acct-1", Region: "r"}
	first, second := budgets.For(acct, q), budgets.For(acct, q) // two clusters of one account
	if first != second {
		t.Fatal("two clusters of one account got two budgets")
	}
	other := budgets.For(provider.Account{Platform: "p", Key: "acct-2", Region: "r"}, q)

	ctx, meter := provider.WithMeter(provider.WithGate(context.Background(), first))
	for range 2 {
		if err := send(ctx, client, http.MethodGet, srv.URL); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() {
		sctx := provider.WithGate(context.Background(), second)
		done <- send(sctx, client, http.MethodGet, srv.URL)
	}()
	waitFor(t, "the third read waiting on the clock", clock.HasWaiters)
	if n := served.Load(); n != 2 {
		t.Fatalf("%d requests reached the server past a budget of 2 reads", n)
	}
	if err := send(ctx, client, http.MethodPost, srv.URL); err != nil {
		t.Fatalf("a write while reads wait: %v", err)
	}
	octx := provider.WithGate(context.Background(), other)
	if err := send(octx, client, http.MethodGet, srv.URL); err != nil {
		t.Fatalf("another account's read: %v", err)
	}
	if n := served.Load(); n != 4 {
		t.Fatalf("%d requests served, want the 2 reads, the write and the other account's read", n)
	}
	clock.Step(time.Second)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if served.Load() != 5 || meter.Reads() != 2 || meter.Writes() != 1 || spent.Load() != 5 {
		t.Fatalf("served %d, metered %d reads %d writes, observed %d", served.Load(), meter.Reads(), meter.Writes(), spent.Load())
	}
}

// TestCanceledWaitSendsNothing: a request whose context ends while it
// waits for its budget fails with the context's error, unsent.
func TestCanceledWaitSendsNothing(t *testing.T) {
	srv, served := server(t)
	client := wireClient(t, srv)
	clock := clocktesting.NewFakeClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	b := ratelimit.NewBudgets(clock, nil, nil).For(provider.Account{Platform: "p", Key: "k"}, provider.Quota{Reads: 1, ReadBurst: 1, Writes: 1, WriteBurst: 1})
	ctx, cancel := context.WithCancel(provider.WithGate(context.Background(), b))
	if err := send(ctx, client, http.MethodGet, srv.URL); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- send(ctx, client, http.MethodGet, srv.URL) }()
	waitFor(t, "the read waiting", clock.HasWaiters)
	cancel()
	if err := <-done; err == nil || served.Load() != 1 {
		t.Fatalf("canceled wait: %v, %d served", err, served.Load())
	}
}

// TestWaitersServedByClass: with a bucket empty, a write that came last
// goes first, then a change's read, then a drift pass's read that came
// first; within a class, in order of arrival.
func TestWaitersServedByClass(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := clocktesting.NewFakeClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
		b := ratelimit.NewBucket(1, 1, clock)
		if _, err := b.Take(context.Background(), 0); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var order []string
		arrive := func(name string, a provider.Access, p provider.Priority) {
			go func() {
				if _, err := b.Take(context.Background(), ratelimit.Class(a, p)); err != nil {
					t.Error(err)
				}
				mu.Lock()
				order = append(order, name)
				mu.Unlock()
			}()
			synctest.Wait() // waiting, in this order
		}
		arrive("drift-1", provider.Read, provider.Drift)
		arrive("drift-2", provider.Read, provider.Drift)
		arrive("change", provider.Read, provider.Change)
		arrive("write", provider.Write, provider.Change)
		for range 4 {
			clock.Step(time.Second)
			synctest.Wait()
		}
		want := []string{"write", "change", "drift-1", "drift-2"}
		mu.Lock()
		defer mu.Unlock()
		if len(order) != len(want) {
			t.Fatalf("served %v, want %v", order, want)
		}
		for i := range want {
			if order[i] != want[i] {
				t.Fatalf("served %v, want %v", order, want)
			}
		}
	})
}

// TestDriftReadsWaitBehindChange: through the contexts the controllers
// give (provider.WithPriority), a change's read overtakes a drift pass's
// read waiting for the account's budget.
func TestDriftReadsWaitBehindChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := clocktesting.NewFakeClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
		b := ratelimit.NewBudgets(clock, nil, nil).For(provider.Account{Platform: "p", Key: "k"}, provider.Quota{Reads: 1, ReadBurst: 1, Writes: 1, WriteBurst: 1})
		base := provider.WithGate(context.Background(), b)
		if err := provider.Charge(base, provider.Read); err != nil {
			t.Fatal(err)
		}
		drift, change := make(chan error, 1), make(chan error, 1)
		go func() { drift <- provider.Charge(provider.WithPriority(base, provider.Drift), provider.Read) }()
		synctest.Wait()
		go func() { change <- provider.Charge(provider.WithPriority(base, provider.Change), provider.Read) }()
		synctest.Wait()
		clock.Step(time.Second)
		synctest.Wait()
		select {
		case <-change:
		default:
			t.Fatal("the change's read did not go first")
		}
		select {
		case <-drift:
			t.Fatal("the drift read went with the change's token")
		default:
		}
		clock.Step(time.Second)
		if err := <-drift; err != nil {
			t.Fatal(err)
		}
	})
}

// TestOverride: an operator's override replaces the fields it sets.
func TestOverride(t *testing.T) {
	got := ratelimit.NewBudgets(nil, map[string]provider.Quota{"p": {Reads: 20, Writes: 5}}, nil).
		For(provider.Account{Platform: "p", Key: "k"}, provider.Quota{Reads: 10, ReadBurst: 50, Writes: 2, WriteBurst: 20}).Quota
	if want := (provider.Quota{Reads: 20, ReadBurst: 50, Writes: 5, WriteBurst: 20}); got != want {
		t.Fatalf("quota %+v, want %+v", got, want)
	}
}

// sending is a driver whose list sends three requests, as an EKS list
// sends a describe per node group.
type sending struct{ *fake.Driver }

func (d sending) NodePoolList(ctx context.Context, c *kpool.Cluster) ([]provider.Pool, error) {
	for range 3 {
		if err := provider.Charge(ctx, provider.Read); err != nil {
			return nil, err
		}
	}
	return d.Driver.NodePoolList(ctx, c)
}

// TestRequestsInsideACallCount: each request a call sends past its first
// takes a token of the provider's rate: a list of three requests spends a
// burst of three, and the next list waits for the clock.
func TestRequestsInsideACallCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := clocktesting.NewFakeClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
		f := fake.New(fake.Options{Clock: clock})
		d := ratelimit.Decorate(sending{f}, rate.NewLimiter(1, 3), clock)
		if err, ok := returned(list(context.Background(), d)); !ok || err != nil {
			t.Fatalf("first list: %v, %v", ok, err)
		}
		done := list(context.Background(), d)
		clock.Step(2 * time.Second)
		if _, ok := returned(done); ok {
			t.Fatal("a second list of three requests went with two tokens")
		}
		clock.Step(time.Second)
		if err, ok := returned(done); !ok || err != nil || len(f.Calls()) != 2 {
			t.Fatalf("after 3s: %v, %v, %d calls", ok, err, len(f.Calls()))
		}
	})
}

// TestThrottlingHoldsItsAccount: a Throttled answer to a call charged to
// an account holds that account's next call until its Retry-After and
// halves its budget, while another account's call goes and the provider's
// rate stays.
func TestThrottlingHoldsItsAccount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := clocktesting.NewFakeClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
		f := fake.New(fake.Options{Clock: clock})
		d := ratelimit.Decorate(f, rate.NewLimiter(100, 10), clock)
		budgets := ratelimit.NewBudgets(clock, nil, nil)
		q := provider.Quota{Reads: 10, ReadBurst: 10, Writes: 1, WriteBurst: 1}
		a := budgets.For(provider.Account{Platform: "p", Key: "a"}, q)
		b := budgets.For(provider.Account{Platform: "p", Key: "b"}, q)
		ctxA, ctxB := provider.WithGate(context.Background(), a), provider.WithGate(context.Background(), b)
		f.FailNext(fake.List, 1, &provider.Error{Kind: provider.KindThrottled, Provider: f.Capabilities().Provider, Reason: "slow down", RetryAfter: 3 * time.Second})
		if err, ok := returned(list(ctxA, d)); !ok || !provider.IsThrottled(err) {
			t.Fatalf("first call: %v, %v; want throttled", err, ok)
		}
		if a.ReadLimit() != 5 || b.ReadLimit() != 10 || d.(interface{ Limit() rate.Limit }).Limit() != 100 {
			t.Fatalf("read limits %v and %v, provider %v; want 5, 10 and 100", a.ReadLimit(), b.ReadLimit(), d.(interface{ Limit() rate.Limit }).Limit())
		}
		held := list(ctxA, d)
		if err, ok := returned(list(ctxB, d)); !ok || err != nil {
			t.Fatalf("another account's call: %v, %v", ok, err)
		}
		clock.Step(2 * time.Second)
		if _, ok := returned(held); ok {
			t.Fatal("the throttled account's call went before its Retry-After")
		}
		clock.Step(time.Second)
		if err, ok := returned(held); !ok || err != nil {
			t.Fatalf("after the Retry-After: %v, %v", ok, err)
		}
	})
}

// TestShareDividesQuota: with n controller processes each budget allows
// its quota over n, to budgets made before and after the share changes,
// and back when the others go.
func TestShareDividesQuota(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	bs := ratelimit.NewBudgets(clk, nil, nil)
	q := provider.Quota{Reads: 12, ReadBurst: 60, Writes: 6, WriteBurst: 30}
	before := bs.For(provider.Account{Platform: "p", Key: "a"}, q)
	bs.Share(3)
	after := bs.For(provider.Account{Platform: "p", Key: "b"}, q)
	for _, b := range []*ratelimit.Budget{before, after} {
		if b.ReadLimit() != 4 || b.WriteLimit() != 2 {
			t.Errorf("%s: limits %v/%v with 3 processes, want 4/2", b.Account.Key, b.ReadLimit(), b.WriteLimit())
		}
	}
	bs.Share(1)
	if before.ReadLimit() != 12 || after.WriteLimit() != 6 {
		t.Errorf("alone again: %v reads, %v writes, want 12 and 6", before.ReadLimit(), after.WriteLimit())
	}
}

// TestShareWhileAnswering: the share changes (a process joins or leaves)
// while calls are answered; under -race this fails on an unguarded
// field, as the configured rate once was.
func TestShareWhileAnswering(t *testing.T) {
	bs := ratelimit.NewBudgets(clocktesting.NewFakeClock(time.Unix(0, 0)), nil, nil)
	b := bs.For(provider.Account{Platform: "p", Key: "a"}, provider.Quota{Reads: 12, ReadBurst: 60, Writes: 6, WriteBurst: 30})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 200 {
			bs.Share(1 + i%3)
		}
	}()
	for range 200 {
		b.Answered(provider.Read, nil)
		b.Answered(provider.Write, nil)
	}
	wg.Wait()
	if got := b.ReadLimit(); got > 12 {
		t.Errorf("read limit %v above the quota", got)
	}
}

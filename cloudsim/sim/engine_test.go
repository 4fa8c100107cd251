package sim_test

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/cloudsim/sim"
)

var start = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

// served is a toy emulator on a loopback server.
type served struct {
	*toy
	clock *sim.ManualClock
	srv   *httptest.Server
}

func serveToy(t *testing.T, o sim.Options) *served {
	t.Helper()
	clock := sim.NewManualClock(start)
	o.Clock = clock
	s := &served{toy: newToy(o), clock: clock}
	s.srv = httptest.NewServer(s.toy)
	t.Cleanup(s.srv.Close)
	return s
}

// add adds a pool as the engine's handler would, under its lock.
func (s *served) add(p *toyPool) { s.Do(func(time.Time) { s.pools[p.name] = p }) }

// answer is a response read whole; err is set for a dropped connection.
type answer struct {
	status int
	header http.Header
	body   string
	err    error
}

func (s *served) do(ctx context.Context, method, target string, body io.Reader) answer {
	req, err := http.NewRequestWithContext(ctx, method, s.srv.URL+target, body)
	if err != nil {
		return answer{err: err}
	}
	req.Header.Set("Authorization", "Bearer t")
	resp, err := s.srv.Client().Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: string(b), err: err}
}

func (s *served) send(method, target string) answer {
	return s.do(context.Background(), method, target, nil)
}

// lastCall is the newest entry of the call log.
func (s *served) lastCall(t *testing.T) sim.Call {
	t.Helper()
	calls := s.Calls()
	if len(calls) == 0 {
		t.Fatal("no call logged")
	}
	return calls[len(calls)-1]
}

// view reads a pool's nodes and state through the protocol.
func (s *served) view(t *testing.T, name string) (nodes int, state string) {
	t.Helper()
	a := s.send(http.MethodGet, "/pools/"+name)
	var v struct {
		Nodes int
		State string
	}
	if a.err != nil || a.status != http.StatusOK || json.Unmarshal([]byte(a.body), &v) != nil {
		t.Fatalf("GET %s: %d %s %v", name, a.status, a.body, a.err)
	}
	return v.Nodes, v.State
}

// Beyond the rate limit Throttle refuses, with Retry-After in whole
// seconds until the next token; the bucket refills on the engine's clock.
func TestThrottle(t *testing.T) {
	type step struct {
		advance    time.Duration
		status     int
		retryAfter string
	}
	for _, tc := range []struct {
		name  string
		rate  float64
		burst int
		steps []step
	}{
		{"burst then refill", 1, 2, []step{{0, 200, ""}, {0, 200, ""}, {0, 429, "1"}, {time.Second, 200, ""}, {0, 429, "1"}}},
		{"burst defaults to the rate", 2, 0, []step{{0, 200, ""}, {0, 200, ""}, {0, 429, "1"}}},
		{"slow rate", 0.001, 1, []step{{0, 200, ""}, {0, 429, "1000"}, {999 * time.Second, 429, "1"}, {time.Second, 200, ""}}},
		{"half a token", 0.5, 1, []step{{0, 200, ""}, {time.Second, 429, "1"}, {time.Second, 200, ""}}},
		{"unlimited", 0, 0, []step{{0, 200, ""}, {0, 200, ""}, {0, 200, ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := serveToy(t, sim.Options{RateLimit: tc.rate, Burst: tc.burst})
			s.add(&toyPool{name: "p", state: "Ready"})
			for i, st := range tc.steps {
				s.clock.Advance(st.advance)
				a := s.send(http.MethodGet, "/pools/p")
				if a.status != st.status || a.header.Get("Retry-After") != st.retryAfter {
					t.Fatalf("request %d: %d Retry-After %q, want %d %q", i, a.status, a.header.Get("Retry-After"), st.status, st.retryAfter)
				}
			}
		})
	}
	// SetRateLimit changes the limit and fills the bucket.
	s := serveToy(t, sim.Options{RateLimit: 0.001, Burst: 1})
	s.add(&toyPool{name: "p"})
	s.send(http.MethodGet, "/pools/p")
	if a := s.send(http.MethodGet, "/pools/p"); a.status != http.StatusTooManyRequests {
		t.Fatalf("throttled: %d", a.status)
	}
	s.SetRateLimit(0, 0)
	if a := s.send(http.MethodGet, "/pools/p"); a.status != http.StatusOK {
		t.Fatalf("after the limit was lifted: %d", a.status)
	}
}

// The fault dice: the faulted fraction is near the rate and the sequence
// is the seed's; reads never get FaultFail; a dropped connection is a
// client error logged with status 0; the call log names each fault.
func TestFaults(t *testing.T) {
	run := func(seed int64, method string, n int) map[string]int {
		// Operations take no time, so each write's ends at the next request.
		s := serveToy(t, sim.Options{FaultRate: 0.3, Seed: seed})
		s.add(&toyPool{name: "p", nodes: 1, state: "Ready"})
		for i := 0; i < n; i++ {
			a := s.send(method, "/pools/p?nodes=1")
			c := s.lastCall(t) // the client may have retried a dropped request
			dropped := a.err != nil
			if dropped != (c.Fault == sim.FaultDrop) || dropped != (c.Status == 0) || (!dropped && c.Status != a.status) ||
				(c.Fault == sim.Fault500) != (a.status == 500) || (c.Fault == sim.Fault503) != (a.status == 503) {
				t.Fatalf("call %+v, answer %d %v", c, a.status, a.err)
			}
		}
		faults := map[string]int{}
		for _, c := range s.Calls() {
			faults[c.Fault]++
		}
		return faults
	}
	reads := run(7, http.MethodGet, 600)
	total := 0
	for _, n := range reads {
		total += n
	}
	frac := 1 - float64(reads[""])/float64(total)
	if math.Abs(frac-0.3) > 0.05 || reads[sim.FaultFail] != 0 || reads[sim.Fault500] == 0 || reads[sim.Fault503] == 0 || reads[sim.FaultDrop] == 0 {
		t.Fatalf("reads: %v (%.3f faulted)", reads, frac)
	}
	if again := run(7, http.MethodGet, 600); again[sim.Fault500] != reads[sim.Fault500] || again[sim.FaultDrop] != reads[sim.FaultDrop] {
		t.Fatalf("seed 7 gave %v, then %v", reads, again)
	}
	if writes := run(7, http.MethodPut, 200); writes[sim.FaultFail] == 0 {
		t.Fatalf("writes never got an operation that fails: %v", writes)
	}
}

// acceptFaulted sends a write with every request faulted until one is
// accepted: the operation it starts will fail.
func acceptFaulted(t *testing.T, s *served, target string) answer {
	t.Helper()
	s.SetFaultRate(1)
	defer s.SetFaultRate(0)
	for i := 0; i < 100; i++ {
		if a := s.send(http.MethodPut, target); a.err == nil && a.status < 500 {
			return a
		}
	}
	t.Fatal("no write accepted in 100 attempts")
	return answer{}
}

// A request made to fail starts one operation that ends Failed with its
// nodes half way; one that starts none logs no fault.
func TestFailedOperation(t *testing.T) {
	for _, tc := range []struct{ from, to, halfway int }{
		{0, 4, 2}, {0, 3, 1}, {5, 2, 4}, {5, 0, 3}, {2, 2, 2},
	} {
		s := serveToy(t, sim.Options{OperationTime: time.Second, NodeTime: time.Second})
		s.add(&toyPool{name: "p", nodes: tc.from, state: "Ready"})
		if a := acceptFaulted(t, s, "/pools/p?nodes="+strconv.Itoa(tc.to)); a.status != http.StatusOK {
			t.Fatalf("%d to %d: %d %s", tc.from, tc.to, a.status, a.body)
		}
		if f := s.lastCall(t).Fault; f != sim.FaultFail {
			t.Fatalf("%d to %d: accepted with fault %q", tc.from, tc.to, f)
		}
		s.clock.Advance(time.Hour)
		if nodes, state := s.view(t, "p"); nodes != tc.halfway || state != "Failed" {
			t.Fatalf("%d to %d: ended %s at %d nodes, want Failed at %d", tc.from, tc.to, state, nodes, tc.halfway)
		}
	}
	s := serveToy(t, sim.Options{})
	a := acceptFaulted(t, s, "/pools/p?nodes=-1")
	if c := s.lastCall(t); a.status != http.StatusBadRequest || c.Fault != "" {
		t.Fatalf("a refused write: %d, fault %q", a.status, c.Fault)
	}
}

// FailNextOperations fails the next operations started, no others, with
// no fault rate: reads and a refused write go through untouched and do
// not use one up.
func TestFailNextOperations(t *testing.T) {
	s := serveToy(t, sim.Options{OperationTime: time.Second})
	s.add(&toyPool{name: "p", nodes: 2, state: "Ready"})
	s.FailNextOperations(1)
	for _, step := range []struct {
		method, target string
		status         int
		fault, state   string
	}{
		{http.MethodGet, "/pools/p", http.StatusOK, "", "Ready"},
		{http.MethodPut, "/pools/p?nodes=-1", http.StatusBadRequest, "", "Ready"},
		{http.MethodPut, "/pools/p?nodes=4", http.StatusOK, sim.FaultFail, "Failed"},
		{http.MethodPut, "/pools/p?nodes=4", http.StatusOK, "", "Ready"},
	} {
		a := s.send(step.method, step.target)
		if c := s.lastCall(t); a.status != step.status || c.Fault != step.fault {
			t.Fatalf("%s %s: %d with fault %q, want %d with %q", step.method, step.target, a.status, c.Fault, step.status, step.fault)
		}
		s.clock.Advance(time.Hour)
		if _, state := s.view(t, "p"); state != step.state {
			t.Fatalf("%s %s: pool %s, want %s", step.method, step.target, state, step.state)
		}
	}
}

// Latency holds each answer on the engine's clock: nothing is answered
// until the clock has moved that far, and the call log says so.
func TestLatency(t *testing.T) {
	s := serveToy(t, sim.Options{Latency: 250 * time.Millisecond})
	s.add(&toyPool{name: "p", state: "Ready"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got := make(chan answer, 1)
	go func() { got <- s.do(ctx, http.MethodGet, "/pools/p", nil) }()
	if err := s.clock.WaitSleepers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	s.clock.Advance(249 * time.Millisecond)
	select {
	case a := <-got:
		t.Fatalf("answered %d before the latency passed", a.status)
	default:
	}
	if len(s.Calls()) != 0 {
		t.Fatal("a call was handled before the latency passed")
	}
	s.clock.Advance(time.Millisecond)
	if a := <-got; a.status != http.StatusOK {
		t.Fatalf("after the latency: %d %v", a.status, a.err)
	}
	c := s.lastCall(t)
	if c.Latency != 250*time.Millisecond || !c.Time.Equal(start.Add(250*time.Millisecond)) {
		t.Fatalf("call %+v", c)
	}
	s.SetLatency(0)
	if a := s.send(http.MethodGet, "/pools/p"); a.status != http.StatusOK || s.lastCall(t).Latency != 0 {
		t.Fatalf("without latency: %d, %+v", a.status, s.lastCall(t))
	}
}

// Operations move their nodes one every NodeTime and end after
// OperationTime plus NodeTime per node; Done applies them, once.
func TestOperations(t *testing.T) {
	s := serveToy(t, sim.Options{OperationTime: 10 * time.Second, NodeTime: 5 * time.Second})
	s.send(http.MethodPut, "/pools/up?nodes=3")    // 0 -> 3: ends at 25 s
	s.send(http.MethodPut, "/pools/empty?nodes=0") // no nodes: ends at 10 s
	for _, step := range []struct {
		at         time.Duration
		up         int
		upState    string
		emptyState string
	}{
		{0, 0, "Creating", "Creating"},
		{4 * time.Second, 0, "Creating", "Creating"},
		{5 * time.Second, 1, "Creating", "Creating"},
		{10 * time.Second, 2, "Creating", "Ready"},
		{24 * time.Second, 3, "Creating", "Ready"},
		{25 * time.Second, 3, "Ready", "Ready"},
	} {
		s.clock.Set(start.Add(step.at))
		nodes, state := s.view(t, "up")
		_, empty := s.view(t, "empty")
		if nodes != step.up || state != step.upState || empty != step.emptyState {
			t.Fatalf("at %s: up %s with %d nodes, empty %s; want %s with %d, %s", step.at, state, nodes, empty, step.upState, step.up, step.emptyState)
		}
	}
	// Scaling down, then deleting: Done removes the pool.
	s.send(http.MethodPut, "/pools/up?nodes=1") // 3 -> 1: 20 s
	s.clock.Advance(10 * time.Second)
	if nodes, state := s.view(t, "up"); nodes != 1 || state != "Scaling" {
		t.Fatalf("scaling down after 10 s: %s with %d", state, nodes)
	}
	if a := s.send(http.MethodDelete, "/pools/up"); a.status != http.StatusConflict {
		t.Fatalf("a delete during an operation: %d", a.status)
	}
	s.clock.Advance(10 * time.Second)
	if a := s.send(http.MethodDelete, "/pools/up"); a.status != http.StatusAccepted {
		t.Fatalf("delete: %d", a.status)
	}
	s.clock.Advance(15 * time.Second)
	if a := s.send(http.MethodGet, "/pools/up"); a.status != http.StatusNotFound {
		t.Fatalf("after the delete: %d %s", a.status, a.body)
	}
}

// The call log records each request; MaxCalls bounds it by dropping the
// oldest half; a body over MaxBody is refused.
func TestCallLog(t *testing.T) {
	s := serveToy(t, sim.Options{MaxCalls: 4})
	for i := 0; i < 9; i++ {
		s.send(http.MethodPut, "/pools/p"+strconv.Itoa(i)+"?nodes=1")
		if n := len(s.Calls()); n > 4 {
			t.Fatalf("%d calls logged, MaxCalls 4", n)
		}
	}
	c := s.lastCall(t)
	if c.Method != http.MethodPut || c.Path != "/pools/p8" || c.Query != "nodes=1" || c.Status != http.StatusCreated || !c.Created || !c.Time.Equal(start) {
		t.Fatalf("last call %+v", c)
	}
	big := strings.NewReader(strings.Repeat("x", sim.MaxBody+1))
	if a := s.do(context.Background(), http.MethodPut, "/pools/big?nodes=1", big); a.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body over MaxBody: %d", a.status)
	}
}

// NewID makes UUIDs determined by the seed.
func TestNewID(t *testing.T) {
	a, b, c := sim.New(sim.Options{Seed: 1}, sim.Protocol{}), sim.New(sim.Options{Seed: 1}, sim.Protocol{}), sim.New(sim.Options{Seed: 2}, sim.Protocol{})
	for i := 0; i < 5; i++ {
		x, y, z := a.NewID(), b.NewID(), c.NewID()
		if x != y || x == z || len(x) != 36 || x[14] != '4' {
			t.Fatalf("ids %s %s %s", x, y, z)
		}
	}
}

// TestNodesReady: a cloud that reports nodes once built sees the fixed
// time first, then one node every NodeTime, the last at End.
func TestNodesReady(t *testing.T) {
	var grow, shrink *sim.Operation
	e := sim.New(sim.Options{Clock: sim.NewManualClock(start), OperationTime: 10 * time.Second, NodeTime: 5 * time.Second},
		sim.Protocol{Routes: func(r *sim.Request) *sim.Reply {
			grow = r.Start("Creating", 0, 3, 0)  // ends at 25 s
			shrink = r.Start("Scaling", 4, 2, 0) // ends at 20 s
			return &sim.Reply{Status: http.StatusAccepted, Header: http.Header{}}
		}})
	e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPut, "/pools", nil))
	for _, step := range []struct {
		at            time.Duration
		grown, shrunk int
	}{
		{0, 0, 4}, {9 * time.Second, 0, 4}, {10 * time.Second, 0, 4}, {15 * time.Second, 1, 3},
		{20 * time.Second, 2, 2}, {24 * time.Second, 2, 2}, {25 * time.Second, 3, 2},
	} {
		now := start.Add(step.at)
		if g, s := grow.NodesReady(now), shrink.NodesReady(now); g != step.grown || s != step.shrunk {
			t.Errorf("at %v: grown %d, shrunk %d; want %d, %d", step.at, g, s, step.grown, step.shrunk)
		}
	}
}

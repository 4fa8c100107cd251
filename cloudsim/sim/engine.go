package sim

import (
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Options configure an Engine.
type Options struct {
	// Clock is the engine's time; nil is the wall clock.
	Clock Clock
	// An operation takes OperationTime plus NodeTime for each node it adds
	// or removes (and each extra node the emulator counts, such as the
	// nodes an upgrade replaces); its nodes move one every NodeTime.
	OperationTime, NodeTime time.Duration
	// Latency holds every answer this long on the clock before the
	// request is handled.
	Latency time.Duration
	// RateLimit is the requests per second allowed (a token bucket of
	// Burst tokens refilled on the clock); beyond it Request.Throttle
	// refuses. 0 is unlimited; Burst 0 is max(1, RateLimit).
	RateLimit float64
	Burst     int
	// FaultRate (0..1) is the fraction of requests Request.Fault fails.
	// Seed makes the choice, and the ids NewID makes, deterministic.
	FaultRate float64
	Seed      int64
	// MaxCalls bounds the call log: past it the oldest half is dropped.
	// 0 keeps every call (tests); a long-running emulator should set it.
	MaxCalls int
}

// Handler answers one request under the engine's lock.
type Handler func(*Request) *Reply

// Engine serves a Protocol with time, latency, rate limits, faults,
// operations and a call log. It implements http.Handler.
type Engine struct {
	protocol Protocol
	clock    Clock
	opTime   time.Duration
	nodeTime time.Duration
	ids      ids

	mu       sync.Mutex
	latency  time.Duration
	limit    limiter
	faults   dice
	ops      operations
	calls    []Call
	maxCalls int
	counted  callCount
	capacity Capacity
}

// New returns an engine that answers requests as p says.
func New(o Options, p Protocol) *Engine {
	if p.Codec == nil {
		p.Codec = plainCodec{}
	}
	e := &Engine{
		protocol: p,
		clock:    o.Clock,
		opTime:   max(o.OperationTime, 0),
		nodeTime: max(o.NodeTime, 0),
		ids:      ids{rnd: rand.New(rand.NewSource(o.Seed ^ 0x6b706f6f6c))},
		latency:  max(o.Latency, 0),
		faults:   dice{rnd: rand.New(rand.NewSource(o.Seed))},
		ops:      operations{byID: map[string]*Operation{}},
		maxCalls: max(o.MaxCalls, 0),
	}
	if e.clock == nil {
		e.clock = RealClock{}
	}
	e.limit.set(o.RateLimit, o.Burst)
	e.faults.setRate(o.FaultRate)
	return e
}

// Call is one request the engine answered (or dropped).
type Call struct {
	// Time is when the request was handled, on the engine's clock (after
	// its latency).
	Time   time.Time
	Method string
	Path   string
	Query  string // raw query
	// Status is the HTTP status answered; 0 for a dropped connection.
	Status int
	// Created is true for a request that created a resource.
	Created bool
	// Resource is the path of the resource a request created: Reply's
	// Resource, or the request's path (a PUT to the resource itself).
	Resource string
	// Fault is the fault injected: "" (none), Fault500, Fault503,
	// FaultDrop, or FaultFail (an accepted operation that will end Failed).
	Fault string
	// Latency is how long the request was held before it was handled.
	Latency time.Duration
	// Operation is the cloud operation the request was (see
	// Request.SetOperation); "" for one no route took.
	Operation string
}

// NewID returns a random-looking UUID, determined by the seed and the
// order of calls. It is safe for concurrent use.
func (e *Engine) NewID() string { return e.ids.next() }

// Do runs fn under the engine's lock after finishing the operations whose
// time has come, as a request would: for an emulator's own methods (add a
// resource, show or change it behind the client's back).
func (e *Engine) Do(fn func(now time.Time)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clock.Now()
	e.ops.advance(now)
	fn(now)
}

// Calls returns a copy of the call log, oldest first.
func (e *Engine) Calls() []Call {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Call(nil), e.calls...)
}

// SetFaultRate changes the fault rate (0..1).
func (e *Engine) SetFaultRate(rate float64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults.setRate(rate)
}

// FailNextOperations makes the next n operations the emulator starts end
// Failed, as FaultFail's do, whatever the fault rate: a failure a test can
// count on, where the rate's are random (and fail reads too).
func (e *Engine) FailNextOperations(n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults.failNext = max(n, 0)
}

// SetRateLimit changes the rate limit (requests per second, 0 for none)
// and burst; the bucket starts full.
func (e *Engine) SetRateLimit(perSecond float64, burst int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.limit.set(perSecond, burst)
}

// SetLatency changes how long answers are held.
func (e *Engine) SetLatency(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.latency = max(d, 0)
}

// ServeHTTP holds the request for the latency, then answers it as the
// protocol says under the lock, logs it and writes the reply (or drops
// the connection).
func (e *Engine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if e.admin(w, r) {
		return
	}
	body, berr := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if berr == nil && len(body) > MaxBody {
		body, berr = nil, ErrBodyTooLarge
	}
	e.mu.Lock()
	latency := e.latency
	e.mu.Unlock()
	if latency > 0 {
		if err := e.clock.Sleep(r.Context(), latency); err != nil {
			return // the client left
		}
	}

	e.mu.Lock()
	now := e.clock.Now()
	e.ops.advance(now)
	req := &Request{HTTP: r, Body: body, BodyErr: berr, Now: now, e: e}
	rep := e.protocol.run(req)
	call := Call{Time: now, Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Status: rep.Status,
		Created: rep.Created, Resource: rep.Resource, Latency: latency, Operation: req.operation}
	if call.Created && call.Resource == "" {
		call.Resource = call.Path
	}
	switch {
	case req.fault == FaultFail:
		if req.failStarted {
			call.Fault = FaultFail
		}
	default:
		call.Fault = req.fault
	}
	if rep.drop {
		call.Status = 0
	}
	e.log(call)
	e.mu.Unlock()

	if rep.drop {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler) // HTTP/2 or no hijacking: abort the stream
	}
	for k, v := range rep.Header {
		w.Header()[k] = v
	}
	w.Header().Set("Cache-Control", "no-cache")
	if len(rep.Body) > 0 || rep.Status != http.StatusNoContent {
		w.Header().Set("Content-Length", strconv.Itoa(len(rep.Body)))
	}
	w.WriteHeader(rep.Status)
	if r.Method != http.MethodHead && len(rep.Body) > 0 {
		_, _ = w.Write(rep.Body)
	}
}

// log appends to the call log, halving it past MaxCalls; e.mu is held.
func (e *Engine) log(c Call) {
	e.counted.add(c.Operation)
	e.calls = append(e.calls, c)
	if e.maxCalls > 0 && len(e.calls) > e.maxCalls {
		keep := max(e.maxCalls/2, 1)
		e.calls = append([]Call(nil), e.calls[len(e.calls)-keep:]...)
	}
}

// ids makes the seed-determined UUIDs of NewID.
type ids struct {
	mu  sync.Mutex
	rnd *rand.Rand
}

func (g *ids) next() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var b [16]byte
	for i := range b {
		b[i] = byte(g.rnd.Intn(256))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

package sim

import (
	"fmt"
	"net/http"
	"time"
)

// Reply is an answer built under the engine's lock and written after it.
type Reply struct {
	Status int
	Header http.Header
	Body   []byte
	// Created marks a request that created a resource, for the call log.
	Created bool
	// Resource is the created resource's path, when it is not the
	// request's (a POST to a collection names the resource in its body).
	Resource string
	drop     bool
}

// NewReply returns a reply of status with no body.
func NewReply(status int) *Reply { return &Reply{Status: status, Header: http.Header{}} }

// Drop returns the reply that closes the connection without answering.
func Drop() *Reply { return &Reply{drop: true, Header: http.Header{}} }

// Dropped reports whether the reply closes the connection unanswered.
func (r *Reply) Dropped() bool { return r.drop }

// MaxBody is the largest request body read; Request.BodyErr is
// ErrBodyTooLarge beyond it.
const MaxBody = 4 << 20

// ErrBodyTooLarge is Request.BodyErr for a body over MaxBody.
var ErrBodyTooLarge = fmt.Errorf("the request body is larger than %d bytes", MaxBody)

// Request is a request being handled.
type Request struct {
	HTTP *http.Request
	// Body is the request's body; BodyErr says why it could not be read.
	Body    []byte
	BodyErr error
	// Now is the engine's time for this request: all of it happens at once.
	Now time.Time

	e           *Engine
	operation   string
	fault       string
	rolled      bool
	failStarted bool
}

// throttle takes a token from the rate limit's bucket. When there is none
// the request is refused (429): ok is false and retryAfter is the whole
// seconds (at least 1) until a token is there, for Retry-After.
func (r *Request) throttle() (ok bool, retryAfter int) {
	ok, wait := r.e.limit.take(r.Now)
	if ok {
		return true, 0
	}
	return false, max(1, int((wait+time.Second-1)/time.Second))
}

// RateLimit returns the rate limit in force, for the words of a 429.
func (r *Request) RateLimit() (perSecond float64, burst int) {
	return r.e.limit.perSecond, r.e.limit.burst
}

// roll decides, once per request (later calls return the same), whether
// the request fails and how: "" (it does not), Fault500, Fault503 or
// FaultDrop, which the protocol answers at once (Codec.Fault; Drop for
// FaultDrop), or, for a request that may write (any method but GET, HEAD
// and OPTIONS), FaultFail: the routes serve it as usual and the first
// operation it starts ends Failed.
func (r *Request) roll() string {
	if !r.rolled {
		m := r.HTTP.Method
		r.fault = r.e.faults.roll(m != http.MethodGet && m != http.MethodHead && m != http.MethodOptions)
		r.rolled = true
	}
	return r.fault
}

// Start starts an operation of kind (the emulator's name for it) that
// moves the nodes from from to to. It takes OperationTime plus NodeTime
// for each node moved and each of extra more. When the request's fault is
// FaultFail, the first operation it starts ends Failed with its nodes half
// way. The operation ends at the first request (or Do) at or after End.
func (r *Request) Start(kind string, from, to, extra int) *Operation {
	nodes := abs(to-from) + max(extra, 0)
	o := &Operation{
		ID: r.e.NewID(), Kind: kind, Start: r.Now,
		End:  r.Now.Add(r.e.opTime + time.Duration(nodes)*r.e.nodeTime),
		From: from, To: to, nodeTime: r.e.nodeTime,
	}
	if r.fault == "" && r.e.faults.failNext > 0 {
		// A failure the test asked for (Engine.FailNextOperations).
		r.e.faults.failNext--
		r.fault, r.rolled = FaultFail, true
	}
	if r.fault == FaultFail && !r.failStarted {
		r.failStarted = true
		o.Fails = true
		o.To = from + (to-from)/2
	}
	r.e.ops.add(o)
	return o
}

// Operation returns the operation with this id (compared without case),
// or nil when there is none or it ended long ago.
func (r *Request) Operation(id string) *Operation { return r.e.ops.get(id) }

// NewID returns a new id, as Engine.NewID does.
func (r *Request) NewID() string { return r.e.NewID() }

// BaseURL is the scheme and host the request was sent to, for the URLs
// an answer carries (next pages, operation status).
func (r *Request) BaseURL() string {
	scheme := "https"
	if r.HTTP.TLS == nil {
		scheme = "http"
	}
	return scheme + "://" + r.HTTP.Host
}

// SetOperation names the cloud operation the request is, for the calls an
// emulator counts (AdminPrefix+"calls"): the route that took it, such as
// "GET /v1/projects/{project}/locations/{location}/clusters/{cluster}/nodePools",
// or a Query API's action. The Router names its routes by themselves.
func (r *Request) SetOperation(op string) { r.operation = op }

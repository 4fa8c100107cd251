package sim

import (
	"errors"
	"net/http"
	"strconv"
	"time"
)

// Protocol is one cloud's wire protocol as the engine runs it: what the
// cloud checks of every request and in which order, the words of the
// answers the engine gives in its name, and its routes. For each request
// the engine runs, under its lock:
//
//	Tick, Bypass, Authenticate, the rate limit (Codec.Throttled), Check,
//	the body (Codec.BodyTooLarge, Codec.BadBody), the fault (Codec.Fault,
//	or a dropped connection), Routes, then Finish
//
// and the first step that answers ends the request. An emulator gives its
// routes, its encoders and its rules; the order is written once, here.
type Protocol struct {
	// Tick, when set, runs first for every request, with its time: it
	// brings what time changes of the emulator's state (pools that heal)
	// up to the request.
	Tick func(now time.Time)
	// Bypass, when set, answers the requests of another service the
	// emulator also serves (AKS: Entra ID's token endpoint), to which
	// none of the cloud's checks apply; nil lets a request through.
	Bypass Handler
	// Authenticate checks the request's credentials, the first thing a
	// cloud checks; a reply refuses the request. Nil accepts any request.
	Authenticate Handler
	// Check, when set, runs after the rate limit and before the body
	// checks: what the cloud checks of every request (AKS: api-version).
	Check Handler
	// Codec words the engine's answers in the cloud's error format; nil
	// answers them in plain text.
	Codec Codec
	// NoRetryAfter leaves out the Retry-After the engine otherwise puts on
	// its 429s (the seconds until the next token) and on its injected 503s
	// (1), for a cloud that sends none (EKS: the SDK backs off on its own).
	NoRetryAfter bool
	// Routes answer the requests every check let through.
	Routes Handler
	// Finish, when set, runs on every answer of the pipeline but a dropped
	// connection (not on Bypass's): the ids a cloud puts on every answer.
	Finish func(*Request, *Reply)
}

// Codec words the answers the engine gives on an emulator's behalf in its
// cloud's error format: status, body and headers. The engine adds
// Retry-After (see Protocol.NoRetryAfter).
type Codec interface {
	// Throttled answers a request beyond the rate limit; retryAfter is the
	// whole seconds until a token is there (at least 1). RateLimit gives
	// the limit, for the words.
	Throttled(r *Request, retryAfter int) *Reply
	// BodyTooLarge answers a body larger than MaxBody.
	BodyTooLarge(r *Request) *Reply
	// BadBody answers a body that could not be read.
	BadBody(r *Request, err error) *Reply
	// Fault answers an injected fault, Fault500 or Fault503. (FaultDrop
	// drops the connection; a request with FaultFail is served.)
	Fault(r *Request, kind string) *Reply
}

// run answers req as the protocol says.
func (p *Protocol) run(req *Request) *Reply {
	if p.Tick != nil {
		p.Tick(req.Now)
	}
	if p.Bypass != nil {
		if rep := p.Bypass(req); rep != nil {
			return rep
		}
	}
	rep := p.check(req)
	if rep == nil {
		rep = p.Routes(req)
	}
	if p.Finish != nil && !rep.Dropped() {
		p.Finish(req, rep)
	}
	return rep
}

// check runs the checks of every request, in their order; nil lets the
// request through to its route.
func (p *Protocol) check(req *Request) *Reply {
	if p.Authenticate != nil {
		if rep := p.Authenticate(req); rep != nil {
			return rep
		}
	}
	if ok, secs := req.throttle(); !ok {
		return p.retryAfter(p.Codec.Throttled(req, secs), secs)
	}
	if p.Check != nil {
		if rep := p.Check(req); rep != nil {
			return rep
		}
	}
	if errors.Is(req.BodyErr, ErrBodyTooLarge) {
		return p.Codec.BodyTooLarge(req)
	}
	if req.BodyErr != nil {
		return p.Codec.BadBody(req, req.BodyErr)
	}
	switch f := req.roll(); f {
	case Fault500:
		return p.Codec.Fault(req, f)
	case Fault503:
		return p.retryAfter(p.Codec.Fault(req, f), 1)
	case FaultDrop:
		return Drop()
	}
	return nil
}

// retryAfter puts Retry-After on rep, unless the cloud sends none.
func (p *Protocol) retryAfter(rep *Reply, secs int) *Reply {
	if !p.NoRetryAfter {
		rep.Header.Set("Retry-After", strconv.Itoa(secs))
	}
	return rep
}

// plainCodec is the Codec of a protocol that gives none: the status's
// text.
type plainCodec struct{}

func (plainCodec) Throttled(*Request, int) *Reply { return Text(http.StatusTooManyRequests) }
func (plainCodec) BodyTooLarge(*Request) *Reply   { return Text(http.StatusRequestEntityTooLarge) }
func (plainCodec) BadBody(*Request, error) *Reply { return Text(http.StatusBadRequest) }

func (plainCodec) Fault(_ *Request, kind string) *Reply {
	if kind == Fault503 {
		return Text(http.StatusServiceUnavailable)
	}
	return Text(http.StatusInternalServerError)
}

// Text returns a reply of status whose body is the status's text.
func Text(status int) *Reply {
	rep := NewReply(status)
	rep.Body = []byte(http.StatusText(status) + "\n")
	rep.Header.Set("Content-Type", "text/plain; charset=utf-8")
	return rep
}

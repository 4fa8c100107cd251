package provider

import (
	"context"
	"io"
	"net/http"
	"time"
)

// Guard is a driver's HTTP client as an SDK takes one (Do: azcore's
// policy.Transporter, the AWS and OCI SDKs' HTTP clients): Client over
// Wire, so that a request to an origin its credential may not go to fails
// at the wire (whatever sent it there: an endpoint stored around the API's
// checks, an SDK's resolved endpoint, an operation URL) and no redirect is
// followed; each try is bounded by TryTimeout (0: none), and a Detached
// call by its caller's context. A refused request answers no response
// and a *RefusedHostError.
type Guard struct {
	TryTimeout time.Duration
	client     *http.Client
}

// NewGuard returns the Guard of cred's API requests, sending over
// transport (nil: http.DefaultTransport).
func NewGuard(cred *Credential, try time.Duration, transport http.RoundTripper) *Guard {
	return &Guard{TryTimeout: try, client: Client(cred, Wire(cred, transport))}
}

// NewTokenGuard returns the Guard of cred's token requests, which go to
// authority only (TokenWire), sending over transport; r (nil: none)
// records what it refuses.
func NewTokenGuard(cred *Credential, authority string, transport http.RoundTripper, r *Refusals) *Guard {
	return &Guard{client: TokenClient(cred, authority, transport, r)}
}

// Do sends req as the type says: an SDK's transport.
func (g *Guard) Do(req *http.Request) (*http.Response, error) {
	if caller, ok := req.Context().Value(callerKey{}).(context.Context); ok {
		// A Detached call: the caller's context bounds the request.
		if err := caller.Err(); err != nil {
			return nil, &CallerDoneError{err}
		}
		req = req.WithContext(caller)
		resp, err := g.do(req)
		if err != nil && caller.Err() != nil {
			return nil, &CallerDoneError{caller.Err()}
		}
		return resp, err
	}
	return g.do(req)
}

func (g *Guard) do(req *http.Request) (*http.Response, error) {
	if g.TryTimeout <= 0 {
		return send(g.client, req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), g.TryTimeout)
	resp, err := send(g.client, req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = cancelOnClose{resp.Body, cancel}
	return resp, nil
}

// send is c.Do with no response beside an error: http.Client returns a
// refused redirect's answer (its body closed) with the error, which an
// SDK might read.
func send(c *http.Client, req *http.Request) (*http.Response, error) {
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// cancelOnClose ends a try's context once its body is read and closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// callerKey holds, in a detached context, the caller's own.
type callerKey struct{}

// Detached is ctx without its cancellation or deadline, carrying ctx for a
// Guard to bound the HTTP request with. An SDK whose retry loop returns on
// its context's end while its goroutine still writes the result (the OCI
// SDK's common.Retry) is given this, so it always waits for its own
// goroutine; the request itself still ends with the caller's context.
func Detached(ctx context.Context) context.Context {
	return context.WithValue(context.WithoutCancel(ctx), callerKey{}, ctx)
}

// CallerDoneError is a request cut short because its caller's context
// ended: never retried.
type CallerDoneError struct{ Err error }

func (e *CallerDoneError) Error() string { return "the caller stopped waiting: " + e.Err.Error() }
func (e *CallerDoneError) Unwrap() error { return e.Err }

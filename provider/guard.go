package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/kpool/kpool"
)

// RefusedHostError is a request a credential may not be sent with: it
// fails before the wire, its signature or key unsent, and is never
// retried. Drivers answer it as a validation error on spec.endpoint.
type RefusedHostError struct{ Credential, Host string }

func (e *RefusedHostError) Error() string {
	return fmt.Sprintf("credential %q may not be sent to %s: the operator has not allowed that endpoint for it", e.Credential, e.Host)
}

// IsRefusedHost reports whether err is a RefusedHostError.
func IsRefusedHost(err error) bool {
	var rh *RefusedHostError
	return errors.As(err, &rh)
}

// CheckOrigin returns a *RefusedHostError unless cred may be sent to u's
// origin.
func CheckOrigin(cred *Credential, u *url.URL) error {
	host := u.Scheme + "://" + u.Host
	if o, err := kpool.Origin(host); err != nil || !cred.AllowsOrigin(o) {
		return &RefusedHostError{Credential: cred.Name, Host: host}
	}
	return nil
}

// Guard is a driver's HTTP client as an SDK takes one (Do): the last step
// before the wire. A request to an origin its credential may not go to
// fails there (whatever sent it there: an endpoint stored around the API's
// checks, an SDK's resolved endpoint); each try is bounded by TryTimeout
// (0: none); redirects are not followed, since one would carry a signed
// request to another host.
type Guard struct {
	Credential *Credential
	TryTimeout time.Duration
	client     *http.Client
}

// NewGuard returns a Guard sending over transport (nil: the default).
func NewGuard(cred *Credential, try time.Duration, transport http.RoundTripper) *Guard {
	return &Guard{Credential: cred, TryTimeout: try, client: NoRedirectClient(transport)}
}

// NoRedirectClient is an HTTP client over transport that follows no
// redirect.
func NoRedirectClient(transport http.RoundTripper) *http.Client {
	return &http.Client{Transport: transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (g *Guard) Do(req *http.Request) (*http.Response, error) {
	if err := CheckOrigin(g.Credential, req.URL); err != nil {
		return nil, err
	}
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
		return g.client.Do(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), g.TryTimeout)
	resp, err := g.client.Do(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = cancelOnClose{resp.Body, cancel}
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

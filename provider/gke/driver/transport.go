package driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// Retry is how the driver times out and retries one HTTP request.
type Retry struct {
	// TryTimeout bounds each try: a tarpit cannot hold a call for ever.
	TryTimeout time.Duration
	// Retries is how many times a failure a retry may cure (500, 502,
	// 503, 504, 408, a dropped connection, a try timed out) is tried
	// again, Delay apart. 429 never is: throttling goes back to kpool's
	// controllers, which honour its delay without holding a worker.
	Retries int
	Delay   time.Duration
}

// DefaultRetry is two quick retries of 30 s tries.
func DefaultRetry() Retry {
	return Retry{TryTimeout: 30 * time.Second, Retries: 2, Delay: 100 * time.Millisecond}
}

// refusedHost is the error of a request the guard did not send.
type refusedHost struct{ cred, origin string }

func (e *refusedHost) Error() string {
	return fmt.Sprintf("credential %q may not be sent to %s: the operator has not allowed that endpoint for it", e.cred, e.origin)
}

// guard is the transport under the OAuth2 one: it sees every request with
// its bearer token set, and sends it only to an origin the credential
// allows; then it applies the retry policy.
type guard struct {
	cred  *provider.Credential
	base  http.RoundTripper
	retry Retry
}

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	origin, err := kpool.Origin(req.URL.Scheme + "://" + req.URL.Host)
	if err != nil || !g.cred.AllowsOrigin(origin) {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, &refusedHost{cred: g.cred.Name, origin: req.URL.Scheme + "://" + req.URL.Host}
	}
	for try := 0; ; try++ {
		resp, err := g.try(req)
		if try >= g.retry.Retries || !retryable(req, resp, err) || req.Context().Err() != nil {
			return resp, err
		}
		if req.Body != nil && req.GetBody == nil {
			return resp, err // the body cannot be sent again
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
			_ = resp.Body.Close()
		}
		select {
		case <-req.Context().Done():
			return nil, req.Context().Err()
		case <-time.After(g.retry.Delay << try):
		}
	}
}

// try sends the request once, within TryTimeout.
func (g *guard) try(req *http.Request) (*http.Response, error) {
	r := req
	cancel := context.CancelFunc(func() {})
	if g.retry.TryTimeout > 0 {
		var ctx context.Context
		ctx, cancel = context.WithTimeout(req.Context(), g.retry.TryTimeout)
		r = req.Clone(ctx)
	}
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			cancel()
			return nil, err
		}
		r.Body = body
	}
	base := g.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(r)
	if err != nil {
		cancel()
		if errors.Is(err, context.DeadlineExceeded) && req.Context().Err() == nil {
			err = fmt.Errorf("%w: no answer in %v", errTryTimeout, g.retry.TryTimeout)
		}
		return nil, err
	}
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// errTryTimeout is a try that got no answer in time.
var errTryTimeout = errors.New("the GKE API did not answer in time")

// cancelBody ends a try's context once its body is read.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// retryable: a transport failure (not the guard's) or a 408/5xx, never
// 429. A POST (a create, setSize...) is retried only after a 503, which
// says it was not done: after a dropped connection or a 500 it may have
// been, and the controllers, which list first, decide.
func retryable(req *http.Request, resp *http.Response, err error) bool {
	if req.Method == http.MethodPost {
		return err == nil && resp.StatusCode == http.StatusServiceUnavailable
	}
	if err != nil {
		var rh *refusedHost
		return !errors.As(err, &rh)
	}
	switch resp.StatusCode {
	case http.StatusRequestTimeout, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

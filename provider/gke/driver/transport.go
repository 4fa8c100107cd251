package driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/kpool/kpool/provider"
)

// retrier is the transport under the OAuth2 one: it sees every request
// with its bearer token set and applies the driver's retries (a failure a
// retry may cure: 500, 502, 503, 504, 408, a dropped connection, a try
// timed out; never 429), each try sent through base, the wire
// (provider.Wire), which sends it only to an origin the credential allows.
type retrier struct {
	base  http.RoundTripper
	retry provider.Retry
}

func (g *retrier) RoundTrip(req *http.Request) (*http.Response, error) {
	for try := 0; ; try++ {
		resp, err := g.try(req)
		if try+1 >= g.retry.Tries() || !retryable(req, resp, err) || req.Context().Err() != nil {
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
		case <-time.After(g.retry.Backoff(try + 1)):
		}
	}
}

// try sends the request once, within TryTimeout.
func (g *retrier) try(req *http.Request) (*http.Response, error) {
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
	resp, err := g.base.RoundTrip(r)
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
var errTryTimeout = fmt.Errorf("the GKE API did not answer in time: %w", context.DeadlineExceeded)

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

// retryable: a transport failure (not the wire's) or a 408/5xx, never
// 429. A POST (a create, setSize...) is retried only after a 503, which
// says it was not done: after a dropped connection or a 500 it may have
// been, and the controllers, which list first, decide.
func retryable(req *http.Request, resp *http.Response, err error) bool {
	if req.Method == http.MethodPost {
		return err == nil && resp.StatusCode == http.StatusServiceUnavailable
	}
	if err != nil {
		return !provider.IsRefusedHost(err)
	}
	switch resp.StatusCode {
	case http.StatusRequestTimeout, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

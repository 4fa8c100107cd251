package driver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kpool/kpool/provider"
)

// Client is a small typed client of Civo's v2 Kubernetes pools API, on
// net/http: what civogo's pool calls send and read (bearer API key, the
// region as the query parameter region of every call, GET, POST, PUT and
// DELETE alike, as civogo's client adds it, and in the JSON body of POST
// and PUT too, as its pool calls put it there; Civo's {"code","reason"}
// error body), with the driver's retries and per-try timeout.
type Client struct {
	// Endpoint is the API's origin, https://api.civo.com or an emulator's.
	Endpoint string
	// Region is sent with every call; Civo finds the cluster in it, and
	// serves a call without one in the account's default region, where
	// the cluster may not be.
	Region string
	// HTTP sends the requests; nil is a client on http.DefaultTransport
	// that follows no redirect. The driver's is provider.Client over
	// provider.Wire, which sends the key only where its credential allows.
	HTTP *http.Client
	// Retry bounds each call's tries; the zero value tries once, unbounded.
	Retry provider.Retry

	key string
	now func() time.Time
	// kubeServer checks a cluster's Kubernetes API server before anything
	// is sent there (provider.CheckKubeServer with the client's
	// credential); nil refuses every server.
	kubeServer func(server string) error
}

// NewClient returns a client of the API at endpoint for region that sends
// apiKey.
func NewClient(endpoint, apiKey, region string, hc *http.Client) *Client {
	return &Client{Endpoint: strings.TrimSuffix(endpoint, "/"), Region: region, HTTP: hc, key: apiKey, Retry: provider.DefaultRetry()}
}

// Wire shapes of Civo's pools API (civogo's KubernetesPool,
// KubernetesInstance and corev1.Taint).
type (
	// Taint is a Kubernetes taint as Civo carries it.
	Taint struct {
		Key    string `json:"key"`
		Value  string `json:"value,omitempty"`
		Effect string `json:"effect"`
	}
	// Instance is a node of a pool.
	Instance struct {
		ID        string    `json:"id"`
		Hostname  string    `json:"hostname"`
		Size      string    `json:"size"`
		Status    string    `json:"status"`
		PublicIP  string    `json:"public_ip"`
		CreatedAt time.Time `json:"created_at"`
	}
	// Pool is a pool of a cluster. Civo's pool carries no region: the
	// client sets Region to the one it asked in.
	Pool struct {
		ID               string            `json:"id"`
		Count            int               `json:"count"`
		Size             string            `json:"size"`
		InstanceNames    []string          `json:"instance_names"`
		Instances        []Instance        `json:"instances"`
		Labels           map[string]string `json:"labels"`
		Taints           []Taint           `json:"taints"`
		PublicIPNodePool bool              `json:"public_ip_node_pool"`
		Region           string            `json:"-"`
	}
	// PoolConfig is the body of a create (ID, Size, Count and the rest) or
	// an update (what changes: nil members are left as they are).
	PoolConfig struct {
		ID               string            `json:"id,omitempty"`
		Count            *int              `json:"count,omitempty"`
		Size             string            `json:"size,omitempty"`
		Labels           map[string]string `json:"labels,omitempty"`
		Taints           *[]Taint          `json:"taints,omitempty"`
		PublicIPNodePool *bool             `json:"public_ip_node_pool,omitempty"`
		Region           string            `json:"region"`
	}
)

// APIError is an answer of Civo's API other than a success: its HTTP
// status and Civo's error code and reason.
type APIError struct {
	Status int
	Code   string
	Reason string
	// Details are what Civo adds to the reason (civogo appends them:
	// "reason, details"), such as which quota a request would exceed.
	Details string
	// RetryAfter is the answer's Retry-After, when it has one.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	msg := fmt.Sprintf("civo API: %d", e.Status)
	if e.Code != "" {
		msg += " " + e.Code
	}
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	if e.Details != "" {
		msg += ", " + e.Details
	}
	return msg
}

// List returns the cluster's pools.
func (c *Client) List(ctx context.Context, cluster string) ([]Pool, error) {
	var out []Pool
	err := c.do(ctx, http.MethodGet, c.poolsPath(cluster), nil, &out)
	for i := range out {
		out[i].Region = c.Region
	}
	return out, err
}

// Get returns one pool.
func (c *Client) Get(ctx context.Context, cluster, pool string) (*Pool, error) {
	out := Pool{Region: c.Region}
	if err := c.do(ctx, http.MethodGet, c.poolsPath(cluster)+"/"+url.PathEscape(pool), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Create creates a pool; Civo answers before its nodes exist.
func (c *Client) Create(ctx context.Context, cluster string, cfg PoolConfig) error {
	cfg.Region = c.Region
	return c.do(ctx, http.MethodPost, c.poolsPath(cluster), &cfg, nil)
}

// Update changes a pool's count, labels or taints and returns it.
func (c *Client) Update(ctx context.Context, cluster, pool string, cfg PoolConfig) (*Pool, error) {
	cfg.Region = c.Region
	out := Pool{Region: c.Region}
	if err := c.do(ctx, http.MethodPut, c.poolsPath(cluster)+"/"+url.PathEscape(pool), &cfg, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Delete deletes a pool.
func (c *Client) Delete(ctx context.Context, cluster, pool string) error {
	return c.do(ctx, http.MethodDelete, c.poolsPath(cluster)+"/"+url.PathEscape(pool), nil, nil)
}

func (c *Client) poolsPath(cluster string) string {
	return "/v2/kubernetes/clusters/" + url.PathEscape(cluster) + "/pools"
}

// do sends a call, trying again (up to Retry.MaxAttempts) when the answer
// is 500, 502, 503 or 504, the connection failed or a try timed out.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	attempts := c.Retry.Tries()
	var err error
	for try := 1; ; try++ {
		var retry bool
		retry, err = c.try(ctx, method, path, body, out)
		if err == nil || !retry || try >= attempts || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(c.Retry.Backoff(try)):
		}
	}
}

// try sends one request; retry says whether another try may do better.
func (c *Client) try(ctx context.Context, method, path string, body []byte, out any) (retry bool, err error) {
	u, err := url.Parse(c.Endpoint + path)
	if err != nil {
		return false, err
	}
	// The region on every call, as civogo's client sends it (client.go
	// sendRequest: GET, POST, PUT, PATCH and DELETE): Civo reads the query
	// on every route, the body on some only.
	q := u.Query()
	q.Set("region", c.Region)
	u.RawQuery = q.Encode()
	if c.Retry.TryTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Retry.TryTimeout)
		defer cancel()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "kpool-civo-driver")
	req.Header.Set("Authorization", "bearer "+c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = provider.NoRedirectClient(nil)
	}
	resp, err := hc.Do(req)
	if err != nil {
		// A request the wire refused, a redirect included, would be
		// refused again.
		return !provider.IsRefusedHost(err), &transportError{err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return true, &transportError{err: err}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		now := time.Now
		if c.now != nil {
			now = c.now
		}
		e := decodeError(resp, data, now())
		switch resp.StatusCode {
		case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true, e
		}
		return false, e
	}
	if out != nil && len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return false, &transportError{err: fmt.Errorf("decoding Civo's answer to %s %s: %w", method, path, err)}
		}
	}
	return false, nil
}

// decodeError reads an answer other than a success: Civo's
// {"code","reason","details"}, its {"result"} of a refused key, Rails'
// {"status","error"} of a 500, or the first line of a page of text (Civo's
// API reference: "4xx/5xx status may not be JSON").
func decodeError(resp *http.Response, data []byte, now time.Time) *APIError {
	e := &APIError{Status: resp.StatusCode, RetryAfter: retryAfter(resp.Header, now)}
	var eb struct {
		Code    string `json:"code"`
		Reason  string `json:"reason"`
		Details string `json:"details"`
		Result  string `json:"result"`
		Error   string `json:"error"`
	}
	if json.Unmarshal(data, &eb) != nil {
		e.Reason = provider.FirstLine(string(data))
		return e
	}
	e.Code, e.Reason, e.Details = eb.Code, eb.Reason, eb.Details
	for _, r := range []string{eb.Result, eb.Error} {
		if e.Reason == "" {
			e.Reason = r
		}
	}
	return e
}

// transportError is a call that got no (readable) answer.
type transportError struct{ err error }

func (e *transportError) Error() string { return e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

// IsNotFound reports whether err is Civo's 404.
func IsNotFound(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound
}

// poolMissing reports whether err is Civo's answer for a pool that does
// not exist (database_cluster_pool_not_found), and nothing else: a 404 for
// the cluster, the region or a path Civo does not have (a page of text)
// does not say the pool is gone.
func poolMissing(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound && ae.Code == codePoolNotFound
}

package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/audit"
	"github.com/kpool/kpool/placement"
	"github.com/kpool/kpool/service"
)

// Client calls a kpool server. Errors the server returns come back as
// *kpool.Error with the server's code, message, details and fields.
type Client struct {
	BaseURL string // such as http://127.0.0.1:8080
	User    string // sent as X-User-Email (header mode)
	// Token is an API token, sent as Authorization: Bearer.
	Token string
	HTTP  *http.Client
	// OnWarning, when set, receives the text of each Warning header of a
	// successful answer (a field stored but not applied, say).
	OnWarning func(text string)
}

// NewClient returns a client of the server at baseURL acting as user.
func NewClient(baseURL, user string) *Client {
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), User: user, HTTP: &http.Client{Timeout: 30 * time.Second}}
}

// Response is what do returns besides the decoded body.
type Response struct {
	Status int
	Header http.Header
}

// Do sends a request with a JSON body (nil for none) and decodes a JSON
// answer into out (nil to discard it).
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, header http.Header, body, out any) (*Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	u := c.BaseURL + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.User != "" {
		req.Header.Set("X-User-Email", c.User)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("kpool server %s: %w", c.BaseURL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	r := &Response{Status: resp.StatusCode, Header: resp.Header}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") && (resp.StatusCode >= 400 || len(bytes.TrimSpace(data)) > 0) {
		// kpool answers JSON (errors too): this is something else.
		return r, &kpool.Error{Code: kpool.CodeUnavailable, Message: fmt.Sprintf("%s does not answer as a kpool server: check --server (or KPOOL_SERVER)", c.BaseURL),
			Details: fmt.Sprintf("%s %s answered HTTP %d with %s, not kpool's JSON", method, path, resp.StatusCode, orNone(ct))}
	}
	if resp.StatusCode >= 400 {
		var eb ErrorBody
		if json.Unmarshal(data, &eb) != nil || eb.Error.Code == "" {
			return r, &kpool.Error{Code: kpool.CodeInternal, Message: fmt.Sprintf("%s %s: HTTP %d", method, path, resp.StatusCode), Details: strings.TrimSpace(string(data))}
		}
		return r, &kpool.Error{Code: eb.Error.Code, Message: eb.Error.Message, Details: eb.Error.Details, Fields: eb.Error.Fields}
	}
	if c.OnWarning != nil {
		for _, h := range resp.Header.Values("Warning") {
			c.OnWarning(WarningText(h))
		}
	}
	if out != nil && len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return r, fmt.Errorf("%s %s: decoding the answer: %w", method, path, err)
		}
	}
	return r, nil
}

func orNone(ct string) string {
	if ct == "" {
		return "no content type"
	}
	return ct
}

func listQuery(o service.ListOptions) url.Values {
	q := url.Values{}
	if o.Limit != 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Offset != 0 {
		q.Set("offset", strconv.Itoa(o.Offset))
	}
	if o.After != "" {
		q.Set("after", o.After)
	}
	if o.ClusterID != "" {
		q.Set("cluster_id", o.ClusterID)
	}
	if o.Name != "" {
		q.Set("name", o.Name)
	}
	if o.Phase != "" {
		q.Set("status", string(o.Phase))
	}
	if o.Health != "" {
		q.Set("health", string(o.Health))
	}
	return q
}

func method(patch bool) string {
	if patch {
		return http.MethodPatch
	}
	return http.MethodPut
}

// CreateCluster registers a cluster.
func (c *Client) CreateCluster(ctx context.Context, b ClusterBody) (*kpool.Cluster, error) {
	var out kpool.Cluster
	_, err := c.Do(ctx, http.MethodPost, "/api/v1/clusters", nil, nil, b, &out)
	return &out, err
}

// Clusters lists clusters.
func (c *Client) Clusters(ctx context.Context, o service.ListOptions) (*ClusterList, error) {
	var out ClusterList
	_, err := c.Do(ctx, http.MethodGet, "/api/v1/clusters", listQuery(o), nil, nil, &out)
	return &out, err
}

// Cluster gets one cluster.
func (c *Client) Cluster(ctx context.Context, id string) (*kpool.Cluster, error) {
	var out kpool.Cluster
	_, err := c.Do(ctx, http.MethodGet, "/api/v1/clusters/"+url.PathEscape(id), nil, nil, nil, &out)
	return &out, err
}

// UpdateCluster PUTs (or, with patch, PATCHes) a cluster.
func (c *Client) UpdateCluster(ctx context.Context, id string, b ClusterBody, patch bool) (*kpool.Cluster, error) {
	var out kpool.Cluster
	_, err := c.Do(ctx, method(patch), "/api/v1/clusters/"+url.PathEscape(id), nil, nil, b, &out)
	return &out, err
}

// DeleteCluster deletes a cluster; gone is false while it is Deleting.
func (c *Client) DeleteCluster(ctx context.Context, id string, force bool) (cl *kpool.Cluster, gone bool, err error) {
	var q url.Values
	if force {
		q = url.Values{"force": {"true"}}
	}
	var out kpool.Cluster
	r, err := c.Do(ctx, http.MethodDelete, "/api/v1/clusters/"+url.PathEscape(id), q, nil, nil, &out)
	if err != nil {
		return nil, false, err
	}
	if r.Status == http.StatusNoContent {
		return nil, true, nil
	}
	return &out, false, nil
}

// Events reads a page of the audit trail, newest first.
func (c *Client) Events(ctx context.Context, eq audit.Query) (*EventList, error) {
	q := url.Values{}
	for k, v := range map[string]string{"cluster_id": eq.ClusterID, "nodepool_id": eq.NodePoolID, "type": eq.Type, "actor": eq.Actor, "after": eq.After} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if eq.Limit > 0 {
		q.Set("limit", strconv.Itoa(eq.Limit))
	}
	var out EventList
	_, err := c.Do(ctx, http.MethodGet, "/api/v1/events", q, nil, nil, &out)
	return &out, err
}

// CreateNodePool creates a pool (b.ClusterID names the cluster).
func (c *Client) CreateNodePool(ctx context.Context, b NodePoolBody) (*kpool.NodePool, error) {
	var out kpool.NodePool
	_, err := c.Do(ctx, http.MethodPost, "/api/v1/nodepools", nil, nil, b, &out)
	return &out, err
}

// NodePools lists pools.
func (c *Client) NodePools(ctx context.Context, o service.ListOptions) (*NodePoolList, error) {
	var out NodePoolList
	_, err := c.Do(ctx, http.MethodGet, "/api/v1/nodepools", listQuery(o), nil, nil, &out)
	return &out, err
}

// NodePool gets one pool.
func (c *Client) NodePool(ctx context.Context, id string) (*kpool.NodePool, error) {
	var out kpool.NodePool
	_, err := c.Do(ctx, http.MethodGet, "/api/v1/nodepools/"+url.PathEscape(id), nil, nil, nil, &out)
	return &out, err
}

// UpdateNodePool PUTs (or, with patch, PATCHes) a pool.
func (c *Client) UpdateNodePool(ctx context.Context, id string, b NodePoolBody, patch bool) (*kpool.NodePool, error) {
	var out kpool.NodePool
	_, err := c.Do(ctx, method(patch), "/api/v1/nodepools/"+url.PathEscape(id), nil, nil, b, &out)
	return &out, err
}

// DeleteNodePool deletes a pool; gone is false while it is Deleting.
func (c *Client) DeleteNodePool(ctx context.Context, id string) (p *kpool.NodePool, gone bool, err error) {
	return c.deleteNodePool(ctx, id, nil)
}

// ForceDeleteNodePool removes a pool's record at once, leaving the pool at
// its provider as it is (admins only).
func (c *Client) ForceDeleteNodePool(ctx context.Context, id string) error {
	_, _, err := c.deleteNodePool(ctx, id, url.Values{"force": {"true"}})
	return err
}

func (c *Client) deleteNodePool(ctx context.Context, id string, q url.Values) (p *kpool.NodePool, gone bool, err error) {
	var out kpool.NodePool
	r, err := c.Do(ctx, http.MethodDelete, "/api/v1/nodepools/"+url.PathEscape(id), q, nil, nil, &out)
	if err != nil {
		return nil, false, err
	}
	if r.Status == http.StatusNoContent {
		return nil, true, nil
	}
	return &out, false, nil
}

// NodePoolStatus gets a pool's aggregated status and controller reports.
func (c *Client) NodePoolStatus(ctx context.Context, id string) (*service.StatusDocument, error) {
	var out service.StatusDocument
	_, err := c.Do(ctx, http.MethodGet, "/api/v1/nodepools/"+url.PathEscape(id)+"/status", nil, nil, nil, &out)
	return &out, err
}

// ReportNodePoolStatus sends a controller's report on a pool.
func (c *Client) ReportNodePoolStatus(ctx context.Context, id string, r StatusReport) (*service.StatusDocument, error) {
	var out service.StatusDocument
	_, err := c.Do(ctx, http.MethodPut, "/api/v1/nodepools/"+url.PathEscape(id)+"/status", nil, nil, r, &out)
	return &out, err
}

// DryRunNodePool sends a PUT (or PATCH) of a pool with dry_run=true: the
// plan and the resulting pool, with nothing stored.
func (c *Client) DryRunNodePool(ctx context.Context, id string, b NodePoolBody, patch bool) (*DryRun, error) {
	var out DryRun
	_, err := c.Do(ctx, method(patch), "/api/v1/nodepools/"+url.PathEscape(id), url.Values{"dry_run": {"true"}}, nil, b, &out)
	return &out, err
}

// Place places manifests on the pools of a cluster (see PlacementRequest).
func (c *Client) Place(ctx context.Context, clusterID string, b PlacementRequest) (*placement.Result, error) {
	var out placement.Result
	_, err := c.Do(ctx, http.MethodPost, "/api/v1/clusters/"+url.PathEscape(clusterID)+"/placements", nil, nil, b, &out)
	return &out, err
}

// WarningText returns the text of a Warning header (`299 kpool "text"`), or
// the header as it is when it is not in that form.
func WarningText(h string) string {
	_, rest, ok := strings.Cut(h, " ")
	if !ok {
		return h
	}
	_, quoted, ok := strings.Cut(rest, " ")
	if !ok {
		return h
	}
	if text, err := strconv.Unquote(quoted); err == nil {
		return text
	}
	return h
}

// Change is one write the server's live feed reports: which object, in
// which cluster ("resync": anything may have changed).
type Change struct {
	Type      string `json:"type"`
	ObjectID  string `json:"object_id"`
	ClusterID string `json:"cluster_id"`
}

// Watch follows the server's live feed (server-sent events at /live, what
// the dashboard uses) and calls fn with each batch of changes the caller
// may read, until ctx ends or fn returns an error. opened, when set, runs
// once the stream is open, before any change is read: a snapshot taken
// there misses no change made after it.
func (c *Client) Watch(ctx context.Context, opened func() error, fn func([]Change) error) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.BaseURL+"/live", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	if c.User != "" {
		req.Header.Set("X-User-Email", c.User)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	// A stream outlives the client's timeout of one request.
	hc := *c.HTTP
	hc.Timeout = 0
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return &kpool.Error{Code: kpool.CodeUnavailable, Message: "The server has no live feed to watch",
			Details: fmt.Sprintf("GET /live answered %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))}
	}
	if opened != nil {
		if err := opened(); err != nil {
			return err
		}
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var cs []Change
		if json.Unmarshal([]byte(data), &cs) != nil {
			continue
		}
		if err := fn(cs); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return sc.Err()
}

// DryRunCreateNodePool sends a create with dry_run=true: the plan and the
// pool as it would be created (defaults filled in), with nothing stored.
func (c *Client) DryRunCreateNodePool(ctx context.Context, b NodePoolBody) (*DryRun, error) {
	var out DryRun
	_, err := c.Do(ctx, http.MethodPost, "/api/v1/nodepools", url.Values{"dry_run": {"true"}}, nil, b, &out)
	return &out, err
}

// DryRunDeleteNodePool sends a delete with dry_run=true: whether the pool
// would be gone at once (Gone) or wait for its controllers, with nothing
// changed.
func (c *Client) DryRunDeleteNodePool(ctx context.Context, id string) (*DryRun, error) {
	var out DryRun
	_, err := c.Do(ctx, http.MethodDelete, "/api/v1/nodepools/"+url.PathEscape(id), url.Values{"dry_run": {"true"}}, nil, nil, &out)
	return &out, err
}

// Version gets the server's version (GET /version, no authentication).
func (c *Client) Version(ctx context.Context) (*Version, error) {
	var out Version
	_, err := c.Do(ctx, http.MethodGet, "/version", nil, nil, nil, &out)
	return &out, err
}

// CreateZonalNodePools creates a zonal logical pool: one member per zone
// of the body's spec.zones, in one transaction.
func (c *Client) CreateZonalNodePools(ctx context.Context, b NodePoolBody) (*NodePoolList, error) {
	var out NodePoolList
	if b.ClusterID == nil {
		return nil, kpool.Invalid("cluster_id", "required")
	}
	cluster := *b.ClusterID
	b.ClusterID = nil
	_, err := c.Do(ctx, http.MethodPost, "/api/v1/clusters/"+url.PathEscape(cluster)+"/zonal-nodepools", nil, nil, b, &out)
	return &out, err
}

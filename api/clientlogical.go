package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
)

// CreateLogicalPool creates a logical pool in cluster clusterID; its
// status's members are the preferred layout it makes.
func (c *Client) CreateLogicalPool(ctx context.Context, clusterID string, b LogicalPoolBody) (*kpool.LogicalPool, error) {
	var out kpool.LogicalPool
	_, err := c.Do(ctx, http.MethodPost, "/api/v1/clusters/"+url.PathEscape(clusterID)+"/logicalpools", nil, nil, b, &out)
	return &out, err
}

// DryRunCreateLogicalPool sends a create with dry_run=true: the logical
// pool as it would be, with the members it would make, nothing stored.
func (c *Client) DryRunCreateLogicalPool(ctx context.Context, clusterID string, b LogicalPoolBody) (*LogicalPoolDryRun, error) {
	var out LogicalPoolDryRun
	_, err := c.Do(ctx, http.MethodPost, "/api/v1/clusters/"+url.PathEscape(clusterID)+"/logicalpools",
		url.Values{"dry_run": {"true"}}, nil, b, &out)
	return &out, err
}

// LogicalPools lists a cluster's logical pools (o's paging, name and
// labels).
func (c *Client) LogicalPools(ctx context.Context, clusterID string, o service.ListOptions) (*LogicalPoolList, error) {
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
	if o.Name != "" {
		q.Set("name", o.Name)
	}
	if len(o.Labels) > 0 {
		q.Set("label_selector", o.Labels.String())
	}
	var out LogicalPoolList
	_, err := c.Do(ctx, http.MethodGet, "/api/v1/clusters/"+url.PathEscape(clusterID)+"/logicalpools", q, nil, nil, &out)
	return &out, err
}

// LogicalPool gets a cluster's logical pool by name.
func (c *Client) LogicalPool(ctx context.Context, clusterID, name string) (*kpool.LogicalPool, error) {
	var out kpool.LogicalPool
	_, err := c.Do(ctx, http.MethodGet, logicalPoolPath(clusterID, name), nil, nil, nil, &out)
	return &out, err
}

// UpdateLogicalPool PUTs (or, with patch, merge-PATCHes) a logical pool;
// b.ResourceVersion, when set, must be the stored one.
func (c *Client) UpdateLogicalPool(ctx context.Context, clusterID, name string, b LogicalPoolBody, patch bool) (*kpool.LogicalPool, error) {
	var out kpool.LogicalPool
	_, err := c.Do(ctx, method(patch), logicalPoolPath(clusterID, name), nil, nil, b, &out)
	return &out, err
}

// DryRunUpdateLogicalPool sends a PUT (or PATCH) with dry_run=true: the
// logical pool as it would be, nothing stored.
func (c *Client) DryRunUpdateLogicalPool(ctx context.Context, clusterID, name string, b LogicalPoolBody, patch bool) (*LogicalPoolDryRun, error) {
	var out LogicalPoolDryRun
	_, err := c.Do(ctx, method(patch), logicalPoolPath(clusterID, name), url.Values{"dry_run": {"true"}}, nil, b, &out)
	return &out, err
}

// DeleteLogicalPool deletes a logical pool and the members it made (then
// Deleting); gone is true on the server's 204, false (and lp the logical
// pool) on a 202.
func (c *Client) DeleteLogicalPool(ctx context.Context, clusterID, name string) (lp *kpool.LogicalPool, gone bool, err error) {
	var out kpool.LogicalPool
	r, err := c.Do(ctx, http.MethodDelete, logicalPoolPath(clusterID, name), nil, nil, nil, &out)
	if err != nil {
		return nil, false, err
	}
	if r.Status == http.StatusNoContent {
		return nil, true, nil
	}
	return &out, false, nil
}

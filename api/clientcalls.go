package api

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/kpool/kpool/audit"
	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/placement"
)

// listQuery is a list's options as the query parameters the server reads.
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
	if len(o.Labels) > 0 {
		q.Set("label_selector", o.Labels.String())
	}
	return q
}

// method is the HTTP method of an update: PATCH with patch, else PUT.
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

// ClusterFacts returns what kpool learnt of a cluster's provider; nil
// (and no error) while it has learnt nothing.
func (c *Client) ClusterFacts(ctx context.Context, id string) (*kpool.ClusterFacts, error) {
	var out kpool.ClusterFacts
	_, err := c.Do(ctx, http.MethodGet, "/api/v1/clusters/"+url.PathEscape(id)+"/facts", nil, nil, nil, &out)
	var e *kpool.Error
	if errors.As(err, &e) && e.Code == kpool.CodeNotFound && e.Message == "Cluster facts not found" {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
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

// deleteNodePool sends a pool's DELETE with query q; gone is true on a 204.
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

// Place places manifests on the pools of a cluster (see PlacementRequest).
func (c *Client) Place(ctx context.Context, clusterID string, b PlacementRequest) (*placement.Result, error) {
	var out placement.Result
	_, err := c.Do(ctx, http.MethodPost, "/api/v1/clusters/"+url.PathEscape(clusterID)+"/placements", nil, nil, b, &out)
	return &out, err
}

// Version gets the server's version (GET /version, no authentication).
func (c *Client) Version(ctx context.Context) (*Version, error) {
	var out Version
	_, err := c.Do(ctx, http.MethodGet, "/version", nil, nil, nil, &out)
	return &out, err
}

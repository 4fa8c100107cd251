package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/kpool/kpool"
)

// ClusterNodes lists a cluster's Kubernetes nodes.
func (c *Client) ClusterNodes(ctx context.Context, clusterID string) ([]kpool.Node, error) {
	var out NodeList
	_, err := c.Do(ctx, http.MethodGet, "/api/v1/clusters/"+url.PathEscape(clusterID)+"/nodes", nil, nil, nil, &out)
	return out.Items, err
}

// PoolNodes lists the Kubernetes nodes of a pool of a cluster.
func (c *Client) PoolNodes(ctx context.Context, clusterID, poolID string) ([]kpool.Node, error) {
	var out NodeList
	path := "/api/v1/clusters/" + url.PathEscape(clusterID) + "/nodepools/" + url.PathEscape(poolID) + "/nodes"
	_, err := c.Do(ctx, http.MethodGet, path, nil, nil, nil, &out)
	return out.Items, err
}

// Kubeconfig returns the kubeconfig (YAML) of kpool's read-only proxy to a
// cluster; kctx, when set, is the kpool context its credential plugin uses.
func (c *Client) Kubeconfig(ctx context.Context, clusterID, kctx string) ([]byte, error) {
	u := c.BaseURL + "/api/v1/clusters/" + url.PathEscape(clusterID) + "/kubeconfig"
	if kctx != "" {
		u += "?" + url.Values{"context": {kctx}}.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/yaml, application/json")
	c.authorize(req)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("kpool server %s: %w", c.BaseURL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusOK && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/yaml") {
		return data, nil
	}
	var eb ErrorBody
	if json.Unmarshal(data, &eb) != nil || eb.Error.Code == "" {
		return nil, &kpool.Error{Code: kpool.CodeUnavailable, Message: fmt.Sprintf("%s does not answer as a kpool server: check --server (or KPOOL_SERVER)", c.BaseURL),
			Details: fmt.Sprintf("GET %s answered HTTP %d with %s", req.URL.Path, resp.StatusCode, orNone(resp.Header.Get("Content-Type")))}
	}
	return nil, &kpool.Error{Code: eb.Error.Code, Message: eb.Error.Message, Details: eb.Error.Details, Fields: eb.Error.Fields}
}

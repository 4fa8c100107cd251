package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// client calls kpool's API as the benchmark user.
type client struct {
	base string
	http *http.Client
}

// newClient returns a client whose transport keeps up to conns connections
// to the server open, so that the preloader's workers reuse them.
func newClient(base string, conns int) *client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = conns
	t.MaxIdleConnsPerHost = conns
	return &client{base: base, http: &http.Client{Transport: t, Timeout: 5 * time.Minute}}
}

// do sends body (JSON) and decodes a 2xx answer into out; any other status
// is an error carrying the server's message.
func (c *client) do(ctx context.Context, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("X-User-Email", user)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(b))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}

// createCluster registers a GCP cluster named name and returns its id.
func (c *client) createCluster(ctx context.Context, name string) (string, error) {
	body := map[string]any{"name": name, "spec": map[string]any{"platform": map[string]any{
		"type": "gcp", "gcp": map[string]any{"projectId": "acme-prod", "location": "us-central1", "clusterName": name}}}}
	var out struct{ ID string }
	err := c.do(ctx, "POST", "/api/v1/clusters", body, &out)
	return out.ID, err
}

// createPool creates a three-node n1-standard-4 pool and returns its id.
func (c *client) createPool(ctx context.Context, clusterID, name string) (string, error) {
	body := map[string]any{"name": name, "cluster_id": clusterID, "spec": map[string]any{
		"platform": map[string]any{"type": "gcp", "gcp": map[string]any{"machineType": "n1-standard-4"}}, "nodeCount": 3}}
	var out struct{ ID string }
	err := c.do(ctx, "POST", "/api/v1/nodepools", body, &out)
	return out.ID, err
}

// generation is the pool's current generation.
func (c *client) generation(ctx context.Context, poolID string) (int64, error) {
	var out struct{ Generation int64 }
	err := c.do(ctx, "GET", "/api/v1/nodepools/"+poolID, nil, &out)
	return out.Generation, err
}

// page is the part of a list answer the benchmark reads.
type page struct {
	NodePools []struct{ ID, Name string } `json:"nodepools"`
	Total     int                         `json:"total"`
	Next      string                      `json:"next"`
}

// listPath is the path of a page of the cluster's pools.
func listPath(clusterID string, limit int, after string, offset int) string {
	q := url.Values{"cluster_id": {clusterID}, "limit": {fmt.Sprint(limit)}}
	if after != "" {
		q.Set("after", after)
	}
	if offset > 0 {
		q.Set("offset", fmt.Sprint(offset))
	}
	return "/api/v1/nodepools?" + q.Encode()
}

// poolCount is the number of pools in the cluster, as a list's total says.
func (c *client) poolCount(ctx context.Context, clusterID string) (int, error) {
	var p page
	err := c.do(ctx, "GET", listPath(clusterID, 1, "", 0), nil, &p)
	return p.Total, err
}

// pageSize is the limit of every list the workloads read.
const pageSize = 50

// followNext reads pages pages of the cluster from the first, each time
// passing the previous page's next as after, and returns the last next: the
// cursor after position pages×pageSize.
func (c *client) followNext(ctx context.Context, clusterID string, pages int) (string, error) {
	after := ""
	for i := range pages {
		var p page
		if err := c.do(ctx, "GET", listPath(clusterID, pageSize, after, 0), nil, &p); err != nil {
			return "", err
		}
		if p.Next == "" {
			return "", fmt.Errorf("page %d of cluster %s has no next (total %d)", i+1, clusterID, p.Total)
		}
		after = p.Next
	}
	return after, nil
}

// keysetMatchesOffset reports whether the page after the cursor starts with
// the same pool as the page at offset: a check that a cursor made for a
// position is at that position.
func (c *client) keysetMatchesOffset(ctx context.Context, clusterID, after string, offset int) (bool, error) {
	var k, o page
	if err := c.do(ctx, "GET", listPath(clusterID, pageSize, after, 0), nil, &k); err != nil {
		return false, err
	}
	if err := c.do(ctx, "GET", listPath(clusterID, pageSize, "", offset), nil, &o); err != nil {
		return false, err
	}
	return len(k.NodePools) > 0 && len(o.NodePools) > 0 && k.NodePools[0].ID == o.NodePools[0].ID, nil
}

// preload creates n pools named prefix-000001… in the cluster through the
// API with workers concurrent requests and returns the rate in pools/s.
// Progress is printed about every 10 seconds.
func preload(ctx context.Context, c *client, clusterID, prefix string, n, workers int) (float64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next, done atomic.Int64
	var once sync.Once
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(n) || ctx.Err() != nil {
					return
				}
				if _, err := c.createPool(ctx, clusterID, fmt.Sprintf("%s-%06d", prefix, i)); err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
				done.Add(1)
			}
		}()
	}
	stopTicker := make(chan struct{})
	go func() {
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				d := done.Load()
				progress("preload %s: %d of %d pools, %.0f pools/s", prefix, d, n, float64(d)/time.Since(start).Seconds())
			case <-stopTicker:
				return
			}
		}
	}()
	wg.Wait()
	close(stopTicker)
	if firstErr != nil {
		return 0, fmt.Errorf("preload %s after %d pools: %w", prefix, done.Load(), firstErr)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

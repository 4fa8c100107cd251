package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/kpool/kpool"
)

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
	c.authorize(req)
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

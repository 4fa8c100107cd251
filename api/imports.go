package api

import (
	"context"
	"net/http"
	"net/url"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
)

// ImportBody is the body of POST /clusters/{id}/imports: a pool the
// controllers found at the provider, to record in observe mode.
type ImportBody = service.PoolImport

// importPool records one pool at the provider as a kpool pool in observe
// mode (201, with the pool). An unmarked pool may be imported by whoever
// may change the cluster's pools; another kpool's only by an admin, with
// force (409 naming its owner's mark otherwise).
func (s *Server) importPool(w http.ResponseWriter, r *http.Request) {
	var b ImportBody
	_, ok := s.decode(w, r, &b)
	if !ok {
		return
	}
	p, err := s.svc.ImportProviderPool(r.Context(), r.PathValue("id"), b)
	if err == nil {
		w.Header().Set("Location", "/api/v1/nodepools/"+p.ID)
	}
	s.written(w, r, false, http.StatusCreated, p, nil, false, err)
}

// ImportNodePool imports one pool the controllers found at a cluster's
// provider as an observe-mode pool (POST /clusters/{id}/imports).
func (c *Client) ImportNodePool(ctx context.Context, clusterID string, b ImportBody) (*kpool.NodePool, error) {
	var out kpool.NodePool
	_, err := c.Do(ctx, http.MethodPost, "/api/v1/clusters/"+url.PathEscape(clusterID)+"/imports", nil, nil, b, &out)
	return &out, err
}

package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/kpool/kpool"
)

// rollbackNodePool answers POST /nodepools/{id}/rollback: the pool's
// running replacement is to be undone (service.RollbackNodePool). 200 with
// the pool (its status.replacement carries rollbackRequestedAt); 409 when
// no replacement runs, or when it is deleting the old pool already. The
// request takes no body. If-Match, when sent, must be the pool's resource
// version: a rollback asked of a replacement someone has since replaced is
// a 409, as every pool write's.
func (s *Server) rollbackNodePool(w http.ResponseWriter, r *http.Request) {
	rv, err := writeQueryNone(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	id := r.PathValue("id")
	if rv != "" {
		p, err := s.svc.NodePool(r.Context(), id)
		if err == nil && p.ResourceVersion != rv {
			err = &kpool.Error{Code: kpool.CodeConflict, Message: fmt.Sprintf("NodePool '%s' has been modified", p.Name),
				Details: fmt.Sprintf("resource_version %q is not the current one (%q): read the nodepool again and retry", rv, p.ResourceVersion)}
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	p, err := s.svc.RollbackNodePool(r.Context(), id)
	s.send(w, r, http.StatusOK, p, err)
}

// writeQueryNone checks a body-less write's query (it takes no parameter)
// and returns its If-Match resource version, if any.
func writeQueryNone(r *http.Request) (string, error) {
	if _, err := query(r); err != nil {
		return "", err
	}
	return resourceVersion(r, "")
}

// RollbackNodePool asks for the pool's running replacement to be undone
// (POST /nodepools/{id}/rollback): the successor is drained and removed
// and the old pool kept. CONFLICT when no replacement runs.
func (c *Client) RollbackNodePool(ctx context.Context, id string) (*kpool.NodePool, error) {
	var out kpool.NodePool
	_, err := c.Do(ctx, http.MethodPost, "/api/v1/nodepools/"+url.PathEscape(id)+"/rollback", nil, nil, nil, &out)
	return &out, err
}

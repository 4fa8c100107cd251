package api

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
)

// LogicalPoolBody is the body of POST, PUT and PATCH on logical pools.
type LogicalPoolBody struct {
	Name            *string         `json:"name,omitempty"`
	ClusterID       *string         `json:"cluster_id,omitempty"`
	Spec            json.RawMessage `json:"spec,omitempty"`
	ResourceVersion string          `json:"resource_version,omitempty"`
	// ID is the server's; a GET's output sent back may carry it.
	ID string `json:"id,omitempty"`
	readOnly
}

// LogicalPoolList is a page of a cluster's logical pools.
type LogicalPoolList struct {
	LogicalPools []*kpool.LogicalPool `json:"logicalpools"`
	Total        int                  `json:"total"`
	Limit        int                  `json:"limit"`
	Offset       int                  `json:"offset"`
	Next         string               `json:"next,omitempty"`
}

// LogicalPoolDryRun is the answer to a logical pool write with
// dry_run=true: the logical pool as it would be, its status's members the
// layout it would make, with nothing stored.
type LogicalPoolDryRun struct {
	DryRun      bool               `json:"dry_run"`
	LogicalPool *kpool.LogicalPool `json:"logicalpool"`
}

// logicalPoolPath is where a logical pool is read and written: by name,
// within its cluster.
func logicalPoolPath(clusterID, name string) string {
	name = strings.TrimPrefix(name, "logicalpool/") // as -o name prints it
	return "/api/v1/clusters/" + url.PathEscape(clusterID) + "/logicalpools/" + url.PathEscape(name)
}

// listLogicalPools answers GET /clusters/{id}/logicalpools: a page of one
// cluster's logical pools, paged as node pools are, selected by name or by
// their template's labels.
func (s *Server) listLogicalPools(w http.ResponseWriter, r *http.Request) {
	q, err := query(r, "limit", "offset", "after", "name", "label_selector")
	var o service.ListOptions
	if err == nil {
		o, err = listOptions(q)
	}
	var c *kpool.Cluster
	if err == nil {
		// An unknown cluster is a 404, not an empty list.
		c, err = s.svc.Cluster(r.Context(), r.PathValue("id"))
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	o.ClusterID = c.ID
	l, err := s.svc.LogicalPools(r.Context(), o)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	items := l.Items
	if items == nil {
		items = []*kpool.LogicalPool{}
	}
	writeJSON(w, http.StatusOK, LogicalPoolList{LogicalPools: items, Total: l.Total, Limit: l.Limit, Offset: o.Offset, Next: l.Next})
}

// createLogicalPool answers POST /clusters/{id}/logicalpools: 201 with the
// logical pool, its members the preferred layout; with dry_run=true, 200
// with what it would be.
func (s *Server) createLogicalPool(w http.ResponseWriter, r *http.Request) {
	var b LogicalPoolBody
	dry, ok := s.decode(w, r, &b, "dry_run")
	if !ok {
		return
	}
	in := service.LogicalPoolCreate{ClusterID: r.PathValue("id"), Spec: b.Spec, DryRun: dry}
	if b.Name != nil {
		in.Name = *b.Name
	}
	if b.ClusterID != nil && strings.ToLower(*b.ClusterID) != in.ClusterID {
		s.writeError(w, r, kpool.Invalid("cluster_id", "%q does not match the cluster in the path (%s)", *b.ClusterID, in.ClusterID))
		return
	}
	if b.ID != "" {
		s.writeError(w, r, kpool.Invalid("id", "the server gives a logical pool its id: leave it out"))
		return
	}
	lp, err := s.svc.CreateLogicalPool(r.Context(), in)
	if err == nil && !dry {
		w.Header().Set("Location", logicalPoolPath(lp.ClusterID, lp.Name))
	}
	s.logicalWritten(w, r, dry, http.StatusCreated, lp, err)
}

// findLogicalPool reads the logical pool the path names (cluster id and
// name), answering the error itself.
func (s *Server) findLogicalPool(w http.ResponseWriter, r *http.Request) (*kpool.LogicalPool, bool) {
	lp, err := s.svc.FindLogicalPool(r.Context(), r.PathValue("id"), r.PathValue("name"))
	if err != nil {
		s.writeError(w, r, err)
		return nil, false
	}
	return lp, true
}

// getLogicalPool answers one logical pool, its resource version as ETag.
func (s *Server) getLogicalPool(w http.ResponseWriter, r *http.Request) {
	if _, err := query(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	if lp, ok := s.findLogicalPool(w, r); ok {
		s.logicalWritten(w, r, false, http.StatusOK, lp, nil)
	}
}

// updateLogicalPool answers PUT and PATCH on a logical pool: its resource
// version from If-Match or the body, as on node pools.
func (s *Server) updateLogicalPool(w http.ResponseWriter, r *http.Request) {
	var b LogicalPoolBody
	dry, ok := s.decode(w, r, &b, "dry_run")
	if !ok {
		return
	}
	patch := r.Method == http.MethodPatch
	rv, err := resourceVersion(r, b.ResourceVersion)
	if err == nil && b.Name != nil && *b.Name != r.PathValue("name") {
		err = kpool.Invalid("name", "%q does not match the name in the path (%s); the name cannot change", *b.Name, r.PathValue("name"))
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	lp, ok := s.findLogicalPool(w, r)
	if !ok {
		return
	}
	if err := sameID(b.ID, lp.ID); err != nil {
		s.writeError(w, r, err)
		return
	}
	out, err := s.svc.UpdateLogicalPool(r.Context(), lp.ID, service.Update{
		Name: b.Name, ClusterID: b.ClusterID, Spec: spec(b.Spec, patch), Patch: patch, ResourceVersion: rv, DryRun: dry})
	s.logicalWritten(w, r, dry, http.StatusOK, out, err)
}

// deleteLogicalPool answers DELETE on a logical pool: 204, the logical
// pool gone and the members it made Deleting (their controllers drain and
// remove them, as after a pool's DELETE).
func (s *Server) deleteLogicalPool(w http.ResponseWriter, r *http.Request) {
	if _, err := query(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	lp, ok := s.findLogicalPool(w, r)
	if !ok {
		return
	}
	if err := s.svc.DeleteLogicalPool(r.Context(), lp.ID); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// logicalWritten answers a logical pool write or read: the error, a dry
// run's LogicalPoolDryRun (200), or the logical pool with its resource
// version as ETag.
func (s *Server) logicalWritten(w http.ResponseWriter, r *http.Request, dry bool, status int, lp *kpool.LogicalPool, err error) {
	switch {
	case err != nil:
		s.writeError(w, r, err)
	case dry:
		writeJSON(w, http.StatusOK, LogicalPoolDryRun{DryRun: true, LogicalPool: lp})
	default:
		setETag(w, lp.ResourceVersion)
		writeJSON(w, status, lp)
	}
}

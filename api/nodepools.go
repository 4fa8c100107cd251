package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
)

// NodePoolBody is the body of POST, PUT and PATCH on node pools.
type NodePoolBody struct {
	ID              string          `json:"id,omitempty"`
	Name            *string         `json:"name,omitempty"`
	ClusterID       *string         `json:"cluster_id,omitempty"`
	Spec            json.RawMessage `json:"spec,omitempty"`
	ResourceVersion string          `json:"resource_version,omitempty"`
	readOnly
	// ProviderName is set by the server at create; ignored when sent.
	ProviderName json.RawMessage `json:"provider_name,omitempty"`
}

// NodePoolList is a page of node pools.
type NodePoolList struct {
	NodePools []*kpool.NodePool `json:"nodepools"`
	Total     int               `json:"total"`
	Limit     int               `json:"limit"`
	Offset    int               `json:"offset"`
	Next      string            `json:"next,omitempty"`
}

// listNodePools answers GET /nodepools: a page of pools, filtered by
// phase, health, cluster, name or label selector.
func (s *Server) listNodePools(w http.ResponseWriter, r *http.Request) {
	q, err := query(r, "limit", "offset", "after", "status", "health", "cluster_id", "clusterId", "name", "label_selector")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	o, err := listOptions(q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeNodePools(w, r, o)
}

// listClusterNodePools answers GET /clusters/{id}/nodepools: a page of one
// cluster's pools.
func (s *Server) listClusterNodePools(w http.ResponseWriter, r *http.Request) {
	q, err := query(r, "limit", "offset", "after", "status", "health", "name", "label_selector")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	o, err := listOptions(q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// The cluster must be one the caller sees: an unknown cluster is a 404,
	// not an empty list.
	c, err := s.svc.Cluster(r.Context(), r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	o.ClusterID = c.ID
	s.writeNodePools(w, r, o)
}

// writeNodePools answers a page of pools as a NodePoolList, appending each
// pool's own JSON (appendPool) rather than encoding the page anew.
func (s *Server) writeNodePools(w http.ResponseWriter, r *http.Request, o service.ListOptions) {
	l, err := s.svc.RawNodePools(r.Context(), o)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeRaw(w, http.StatusOK, func(b []byte) []byte {
		b = append(b, `{"nodepools":[`...)
		for i, p := range l.Items {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendPool(b, p)
		}
		b = append(b, `],"total":`...)
		b = strconv.AppendInt(b, int64(l.Total), 10)
		b = append(b, `,"limit":`...)
		b = strconv.AppendInt(b, int64(l.Limit), 10)
		b = append(b, `,"offset":`...)
		b = strconv.AppendInt(b, int64(o.Offset), 10)
		if l.Next != "" {
			b = append(b, `,"next":"`...) // base64url: nothing to escape
			b = append(b, l.Next...)
			b = append(b, '"')
		}
		return append(b, '}')
	})
}

// createNodePool answers POST /nodepools and /clusters/{id}/nodepools (the
// path's cluster must agree with the body's): 201 with the pool, the
// plan's warnings as Warning headers.
func (s *Server) createNodePool(w http.ResponseWriter, r *http.Request) {
	var b NodePoolBody
	dry, ok := s.decode(w, r, &b, "dry_run")
	if !ok {
		return
	}
	in := service.NodePoolCreate{ID: b.ID, Spec: b.Spec, DryRun: dry}
	if b.Name != nil {
		in.Name = *b.Name
	}
	if b.ClusterID != nil {
		in.ClusterID = *b.ClusterID
	}
	if path := r.PathValue("id"); path != "" { // a UUID, in lower case: see query
		if in.ClusterID != "" && strings.ToLower(in.ClusterID) != path {
			s.writeError(w, r, kpool.Invalid("cluster_id", "%q does not match the cluster in the path (%s)", in.ClusterID, path))
			return
		}
		in.ClusterID = path
	}
	p, plan, err := s.svc.CreateNodePoolPlan(r.Context(), in)
	if err == nil {
		warn(w, plan.Warnings)
		if !dry {
			w.Header().Set("Location", "/api/v1/nodepools/"+p.ID)
		}
	}
	s.written(w, r, dry, http.StatusCreated, p, &plan, false, err)
}

// createZonalNodePools makes a zonal logical pool: one member per zone,
// in one transaction.
func (s *Server) createZonalNodePools(w http.ResponseWriter, r *http.Request) {
	var b NodePoolBody
	_, ok := s.decode(w, r, &b)
	if !ok {
		return
	}
	in := service.NodePoolCreate{ID: b.ID, Spec: b.Spec, ClusterID: r.PathValue("id")}
	if b.Name != nil {
		in.Name = *b.Name
	}
	if b.ClusterID != nil && strings.ToLower(*b.ClusterID) != in.ClusterID {
		s.writeError(w, r, kpool.Invalid("cluster_id", "%q does not match the cluster in the path (%s)", *b.ClusterID, in.ClusterID))
		return
	}
	ps, err := s.svc.CreateZonalNodePools(r.Context(), in)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, NodePoolList{NodePools: ps, Total: len(ps), Limit: len(ps)})
}

// getNodePool answers one pool, with its resource version as ETag.
func (s *Server) getNodePool(w http.ResponseWriter, r *http.Request) {
	if _, err := query(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	p, err := s.svc.RawNodePool(r.Context(), r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	setETag(w, p.ResourceVersion)
	writeRaw(w, http.StatusOK, func(b []byte) []byte { return appendPool(b, p) })
}

// updateNodePool answers PUT and PATCH on a pool, the plan's warnings as
// Warning headers.
func (s *Server) updateNodePool(w http.ResponseWriter, r *http.Request) {
	var b NodePoolBody
	dry, ok := s.decode(w, r, &b, "dry_run")
	if !ok {
		return
	}
	patch := r.Method == http.MethodPatch
	rv, err := resourceVersion(r, b.ResourceVersion)
	if err == nil {
		err = sameID(b.ID, r.PathValue("id"))
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p, plan, err := s.svc.UpdateNodePoolPlan(r.Context(), r.PathValue("id"), service.Update{
		Name: b.Name, ClusterID: b.ClusterID, Spec: spec(b.Spec, patch), Patch: patch, ResourceVersion: rv, DryRun: dry})
	if err == nil {
		warn(w, plan.Warnings)
	}
	s.written(w, r, dry, http.StatusOK, p, &plan, false, err)
}

// deleteNodePool answers DELETE on a pool: 202 while it is Deleting, 204
// once it is gone; force removes its record at once.
func (s *Server) deleteNodePool(w http.ResponseWriter, r *http.Request) {
	q, dry, err := writeQuery(r, "force", "dry_run")
	var rv string
	var force bool
	if err == nil {
		force, err = boolParam(q, "force")
	}
	if err == nil {
		rv, err = resourceVersion(r, "")
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p, gone, err := s.svc.DeleteNodePool(r.Context(), r.PathValue("id"), service.Delete{ResourceVersion: rv, Force: force, DryRun: dry})
	s.written(w, r, dry, http.StatusAccepted, p, nil, gone, err)
}

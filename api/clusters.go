package api

import (
	"encoding/json"
	"net/http"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
)

// ClusterBody is the body of POST, PUT and PATCH on clusters. Read-only
// fields that a client sends back from a GET are accepted and ignored.
type ClusterBody struct {
	ID              string          `json:"id,omitempty"`
	Name            *string         `json:"name,omitempty"`
	Team            *string         `json:"team,omitempty"`
	Spec            json.RawMessage `json:"spec,omitempty"`
	ResourceVersion string          `json:"resource_version,omitempty"`
	readOnly
}

// ClusterList is a page of clusters.
type ClusterList struct {
	Clusters []*kpool.Cluster `json:"clusters"`
	Total    int              `json:"total"`
	Limit    int              `json:"limit"`
	Offset   int              `json:"offset"`
	Next     string           `json:"next,omitempty"`
}

// listClusters answers GET /clusters: a page of clusters, by limit and
// offset or the after cursor, filtered by name.
func (s *Server) listClusters(w http.ResponseWriter, r *http.Request) {
	q, err := query(r, "limit", "offset", "after", "name")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	o, err := listOptions(q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	l, err := s.svc.Clusters(r.Context(), o)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ClusterList{Clusters: l.Items, Total: l.Total, Limit: l.Limit, Offset: o.Offset, Next: l.Next})
}

// createCluster registers a cluster: 201 with it and its Location, or
// what would be registered in a dry run.
func (s *Server) createCluster(w http.ResponseWriter, r *http.Request) {
	var b ClusterBody
	dry, ok := s.decode(w, r, &b, "dry_run")
	if !ok {
		return
	}
	in := service.ClusterCreate{ID: b.ID, Spec: b.Spec, DryRun: dry}
	if b.Name != nil {
		in.Name = *b.Name
	}
	if b.Team != nil {
		in.Team = *b.Team
	}
	c, err := s.svc.CreateCluster(r.Context(), in)
	if err == nil && !dry {
		w.Header().Set("Location", "/api/v1/clusters/"+c.ID)
	}
	s.written(w, r, dry, http.StatusCreated, c, nil, false, err)
}

// getCluster answers one cluster, with its resource version as ETag.
func (s *Server) getCluster(w http.ResponseWriter, r *http.Request) {
	if _, err := query(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	c, err := s.svc.Cluster(r.Context(), r.PathValue("id"))
	s.send(w, r, http.StatusOK, c, err)
}

// getClusterFacts answers what kpool learnt of a cluster from its
// provider; 404 until it has learnt anything.
func (s *Server) getClusterFacts(w http.ResponseWriter, r *http.Request) {
	if _, err := query(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	f, err := s.svc.ClusterFacts(r.Context(), r.PathValue("id"))
	if err == nil && f == nil {
		err = &kpool.Error{Code: kpool.CodeNotFound, Message: "Cluster facts not found",
			Details: "kpool has not learnt yet what the cluster's provider offers: its controllers learn it once they reach the cluster"}
	}
	s.send(w, r, http.StatusOK, f, err)
}

// updateCluster answers PUT and PATCH on a cluster, the resource version
// from the body or If-Match.
func (s *Server) updateCluster(w http.ResponseWriter, r *http.Request) {
	var b ClusterBody
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
	c, err := s.svc.UpdateCluster(r.Context(), r.PathValue("id"), service.Update{Name: b.Name, Team: b.Team, Spec: spec(b.Spec, patch), Patch: patch, ResourceVersion: rv, DryRun: dry})
	s.written(w, r, dry, http.StatusOK, c, nil, false, err)
}

// deleteCluster answers DELETE on a cluster: 202 while it is Deleting, 204
// once it is gone; force and dry_run are allowed.
func (s *Server) deleteCluster(w http.ResponseWriter, r *http.Request) {
	q, dry, err := writeQuery(r, "force", "dry_run")
	var force bool
	if err == nil {
		force, err = boolParam(q, "force")
	}
	var rv string
	if err == nil {
		rv, err = resourceVersion(r, "")
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	c, gone, err := s.svc.DeleteCluster(r.Context(), r.PathValue("id"), service.Delete{Force: force, ResourceVersion: rv, DryRun: dry})
	s.written(w, r, dry, http.StatusAccepted, c, nil, gone, err)
}

package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/audit"
	"github.com/kpool/kpool/internal/jsondoc"
	"github.com/kpool/kpool/service"
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

// readOnly lists the fields the server owns. They may appear in a request
// (a GET's output sent back) and are ignored.
type readOnly struct {
	Generation        json.RawMessage `json:"generation,omitempty"`
	Status            json.RawMessage `json:"status,omitempty"`
	CreatedAt         json.RawMessage `json:"created_at,omitempty"`
	UpdatedAt         json.RawMessage `json:"updated_at,omitempty"`
	CreatedBy         json.RawMessage `json:"created_by,omitempty"`
	DeletionTimestamp json.RawMessage `json:"deletion_timestamp,omitempty"`
}

// ClusterList is a page of clusters.
type ClusterList struct {
	Clusters []*kpool.Cluster `json:"clusters"`
	Total    int              `json:"total"`
	Limit    int              `json:"limit"`
	Offset   int              `json:"offset"`
	Next     string           `json:"next,omitempty"`
}

// EventList is a page of the audit trail, newest first. It has no total:
// counting a trail of millions would cost more than the page.
type EventList struct {
	Events []kpool.Event `json:"events"`
	Limit  int           `json:"limit"`
	Next   string        `json:"next,omitempty"`
}

// NodePoolList is a page of node pools.
type NodePoolList struct {
	NodePools []*kpool.NodePool `json:"nodepools"`
	Total     int               `json:"total"`
	Limit     int               `json:"limit"`
	Offset    int               `json:"offset"`
	Next      string            `json:"next,omitempty"`
}

// ---- query parameters ----

// query checks that r's query decodes and has only the allowed parameters,
// each once, and that the path's {id}, if any, is an id: a UUID in either
// case, which it puts back in lower case so that the handler finds the
// object. Every fault is in the one error.
func query(r *http.Request, allowed ...string) (url.Values, error) {
	var fe kpool.FieldErrors
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		// What did decode is still checked below.
		fe.Add("query", "the query string does not decode: %v; escape '%%' as %%25 and give parameters as name=value separated by '&'", err)
	}
	if raw := r.PathValue("id"); raw != "" {
		id, err := kpool.RefID("id", raw)
		if err != nil {
			addFields(&fe, err)
		} else {
			r.SetPathValue("id", id)
		}
	}
	for _, k := range sortedKeys(q) {
		ok := false
		for _, a := range allowed {
			ok = ok || k == a
		}
		switch {
		case !ok && len(allowed) == 0:
			fe.Add(k, "unknown query parameter: this endpoint takes none")
		case !ok:
			fe.Add(k, "unknown query parameter: use %s", strings.Join(allowed, ", "))
		case len(q[k]) > 1:
			fe.Add(k, "given %d times: give it once", len(q[k]))
		}
	}
	return q, fe.Err()
}

// lowerID is v in lower case when that makes it a UUID (ids are stored so),
// otherwise v as it is, for the check that follows to quote.
func lowerID(v string) string {
	if l := strings.ToLower(v); kpool.IsUUID(l) {
		return l
	}
	return v
}

// addFields adds a VALIDATION_ERROR's fields to fe.
func addFields(fe *kpool.FieldErrors, err error) {
	var e *kpool.Error
	if errors.As(err, &e) && e.Code == kpool.CodeValidation {
		*fe = append(*fe, e.Fields...)
	}
}

func sortedKeys(q url.Values) []string {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func listOptions(q url.Values) (service.ListOptions, error) {
	var o service.ListOptions
	var fe kpool.FieldErrors
	if v := q.Get("limit"); q.Has("limit") {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > kpool.MaxLimit {
			fe.Add("limit", "must be an integer between 1 and %d, got %q", kpool.MaxLimit, v)
		}
		o.Limit = n
	}
	if v := q.Get("offset"); q.Has("offset") {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			fe.Add("offset", "must be an integer of 0 or more, got %q", v)
		}
		o.Offset = n
	}
	o.After = q.Get("after")
	if q.Has("after") && o.After == "" {
		fe.Add("after", "must be the next cursor of a previous page")
	}
	if v := q.Get("status"); q.Has("status") {
		for _, p := range kpool.Phases {
			if strings.EqualFold(v, string(p)) {
				o.Phase = p
			}
		}
		if o.Phase == "" {
			fe.Add("status", "unknown phase %q: use one of %s", v, join(kpool.Phases))
		}
	}
	if v := q.Get("health"); q.Has("health") {
		for _, h := range kpool.Healths {
			if strings.EqualFold(v, string(h)) {
				o.Health = h
			}
		}
		if o.Health == "" {
			fe.Add("health", "unknown health %q: use one of %s", v, join(kpool.Healths))
		}
	}
	if q.Has("name") {
		o.Name = q.Get("name")
		if o.Name == "" {
			fe.Add("name", "give the name to look for")
		}
	}
	for _, k := range []string{"cluster_id", "clusterId"} {
		if !q.Has(k) {
			continue
		}
		v, err := kpool.RefID(k, q.Get(k))
		switch {
		case err != nil:
			addFields(&fe, err)
		case o.ClusterID != "" && o.ClusterID != v:
			fe.Add(k, "disagrees with the other cluster id given")
		}
		o.ClusterID = v
	}
	return o, fe.Err()
}

func join[T ~string](vs []T) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

// resourceVersion combines the body's resource_version with If-Match.
func resourceVersion(r *http.Request, body string) (string, error) {
	h := strings.TrimSpace(r.Header.Get("If-Match"))
	h = strings.TrimPrefix(h, "W/")
	h = strings.Trim(h, `"`)
	switch {
	case h == "" || h == "*":
		return body, nil
	case body != "" && body != h:
		return "", kpool.Invalid("resource_version", "%q disagrees with If-Match %q", body, h)
	}
	return h, nil
}

// sameID refuses a body whose id names another object than the path: a GET's
// output sent back is fine, one meant for another object is a mistake.
func sameID(body, path string) error {
	if body != "" && body != path {
		return kpool.Invalid("id", "%q does not match the id in the path (%s); the id cannot change", body, path)
	}
	return nil
}

func boolParam(q url.Values, name string) (bool, error) {
	if !q.Has(name) {
		return false, nil
	}
	b, err := strconv.ParseBool(q.Get(name))
	if err != nil {
		return false, kpool.Invalid(name, "must be true or false, got %q", q.Get(name))
	}
	return b, nil
}

// spec returns the spec a PUT or PATCH carries: nil when absent, and for a
// PUT also when null (a PUT changes only what it carries).
func spec(raw json.RawMessage, patch bool) json.RawMessage {
	if len(raw) == 0 || (!patch && strings.TrimSpace(string(raw)) == "null") {
		return nil
	}
	return raw
}

func setETag(w http.ResponseWriter, rv string) {
	w.Header().Set("ETag", strconv.Quote(rv))
}

// send writes v as JSON with status (and a cluster's or pool's resource
// version as its ETag), or err in the error shape.
func (s *Server) send(w http.ResponseWriter, r *http.Request, status int, v any, err error) {
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	switch o := v.(type) {
	case *kpool.Cluster:
		setETag(w, o.ResourceVersion)
	case *kpool.NodePool:
		setETag(w, o.ResourceVersion)
	}
	writeJSON(w, status, v)
}

// ---- clusters ----

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

func (s *Server) createCluster(w http.ResponseWriter, r *http.Request) {
	var b ClusterBody
	r, ok := s.decode(w, r, &b, "dry_run")
	if !ok {
		return
	}
	in := service.ClusterCreate{ID: b.ID, Spec: b.Spec}
	if b.Name != nil {
		in.Name = *b.Name
	}
	if b.Team != nil {
		in.Team = *b.Team
	}
	c, err := s.svc.CreateCluster(r.Context(), in)
	if err == nil && !service.IsDryRun(r.Context()) {
		w.Header().Set("Location", "/api/v1/clusters/"+c.ID)
	}
	s.written(w, r, http.StatusCreated, c, nil, false, err)
}

func (s *Server) getCluster(w http.ResponseWriter, r *http.Request) {
	if _, err := query(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	c, err := s.svc.Cluster(r.Context(), r.PathValue("id"))
	s.send(w, r, http.StatusOK, c, err)
}

func (s *Server) updateCluster(w http.ResponseWriter, r *http.Request) {
	var b ClusterBody
	r, ok := s.decode(w, r, &b, "dry_run")
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
	c, err := s.svc.UpdateCluster(r.Context(), r.PathValue("id"), service.Update{Name: b.Name, Team: b.Team, Spec: spec(b.Spec, patch), Patch: patch, ResourceVersion: rv})
	s.written(w, r, http.StatusOK, c, nil, false, err)
}

func (s *Server) deleteCluster(w http.ResponseWriter, r *http.Request) {
	r, q, err := writeQuery(r, "force", "dry_run")
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
	c, gone, err := s.svc.DeleteCluster(r.Context(), r.PathValue("id"), force, rv)
	s.written(w, r, http.StatusAccepted, c, nil, gone, err)
}

// ---- node pools ----

func (s *Server) listNodePools(w http.ResponseWriter, r *http.Request) {
	q, err := query(r, "limit", "offset", "after", "status", "health", "cluster_id", "clusterId", "name")
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

func (s *Server) listClusterNodePools(w http.ResponseWriter, r *http.Request) {
	q, err := query(r, "limit", "offset", "after", "status", "health", "name")
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

func (s *Server) createNodePool(w http.ResponseWriter, r *http.Request) {
	var b NodePoolBody
	r, ok := s.decode(w, r, &b, "dry_run")
	if !ok {
		return
	}
	in := service.NodePoolCreate{ID: b.ID, Spec: b.Spec}
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
		if !service.IsDryRun(r.Context()) {
			w.Header().Set("Location", "/api/v1/nodepools/"+p.ID)
		}
	}
	s.written(w, r, http.StatusCreated, p, &plan, false, err)
}

// createZonalNodePools makes a zonal logical pool: one member per zone,
// in one transaction.
func (s *Server) createZonalNodePools(w http.ResponseWriter, r *http.Request) {
	var b NodePoolBody
	r, ok := s.decode(w, r, &b)
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

func (s *Server) updateNodePool(w http.ResponseWriter, r *http.Request) {
	var b NodePoolBody
	r, ok := s.decode(w, r, &b, "dry_run")
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
		Name: b.Name, ClusterID: b.ClusterID, Spec: spec(b.Spec, patch), Patch: patch, ResourceVersion: rv})
	if err == nil {
		warn(w, plan.Warnings)
	}
	s.written(w, r, http.StatusOK, p, &plan, false, err)
}

// warn adds a Warning header (RFC 9111 code 299, agent kpool) for each of
// a write's warnings: fields stored but not applied, stale reports.
func warn(w http.ResponseWriter, warnings []string) {
	for _, text := range warnings {
		w.Header().Add("Warning", fmt.Sprintf("299 kpool %q", text))
	}
}

func (s *Server) deleteNodePool(w http.ResponseWriter, r *http.Request) {
	r, q, err := writeQuery(r, "force", "dry_run")
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
	if force {
		p, err := s.svc.ForceDeleteNodePool(r.Context(), r.PathValue("id"), rv)
		s.written(w, r, http.StatusAccepted, p, nil, true, err)
		return
	}
	p, gone, err := s.svc.DeleteNodePool(r.Context(), r.PathValue("id"), rv)
	s.written(w, r, http.StatusAccepted, p, nil, gone, err)
}

func (s *Server) getNodePoolStatus(w http.ResponseWriter, r *http.Request) {
	if _, err := query(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	doc, err := s.svc.NodePoolStatus(r.Context(), r.PathValue("id"))
	s.send(w, r, http.StatusOK, doc, err)
}

// StatusReport is the body a controller PUTs to a pool's status.
type StatusReport struct {
	ControllerName     string            `json:"controller_name"`
	ObservedGeneration int64             `json:"observed_generation"`
	Conditions         []kpool.Condition `json:"conditions"`
	Metadata           json.RawMessage   `json:"metadata"`
}

func (s *Server) putNodePoolStatus(w http.ResponseWriter, r *http.Request) {
	var b StatusReport
	r, ok := s.decode(w, r, &b)
	if !ok {
		return
	}
	doc, err := s.svc.ReportNodePoolStatus(r.Context(), r.PathValue("id"), kpool.ControllerStatus{
		ControllerName: b.ControllerName, ObservedGeneration: b.ObservedGeneration, Conditions: b.Conditions, Metadata: b.Metadata})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if doc.Ignored != "" {
		warn(w, []string{"report ignored: " + doc.Ignored})
	}
	writeJSON(w, http.StatusOK, doc)
}

// decode checks a write's query (see writeQuery) and reads the body
// strictly into v, answering any error itself.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any, allowed ...string) (*http.Request, bool) {
	r, _, err := writeQuery(r, allowed...)
	var body []byte
	if err == nil {
		body, err = readBody(w, r)
	}
	if err == nil {
		var fe kpool.FieldErrors
		if !jsondoc.Decode(body, v, "", fe.Report) {
			err = fe.Err()
		}
	}
	if err != nil {
		s.writeError(w, r, err)
		return r, false
	}
	return r, true
}

// writeQuery checks a write's query parameters (only those allowed, each
// once) and, for an allowed dry_run=true, returns the request with a
// dry-run context.
func writeQuery(r *http.Request, allowed ...string) (*http.Request, url.Values, error) {
	q, err := query(r, allowed...)
	if err != nil {
		return r, nil, err
	}
	dry, err := boolParam(q, "dry_run")
	if err != nil {
		return r, nil, err
	}
	if dry {
		r = r.WithContext(service.WithDryRun(r.Context()))
	}
	return r, q, nil
}

// DryRun is the answer to a write with dry_run=true: what the write would
// have done, with nothing stored.
type DryRun struct {
	DryRun   bool            `json:"dry_run"`
	Plan     *kpool.Plan     `json:"plan,omitempty"`
	NodePool *kpool.NodePool `json:"nodepool,omitempty"`
	Cluster  *kpool.Cluster  `json:"cluster,omitempty"`
	// Gone says that a delete would remove the object at once.
	Gone bool `json:"gone,omitempty"`
	// Refused is the error the write itself would answer with (a 400 for
	// a change that needs a new pool, a 501 for one the provider cannot
	// make): the plan's replace or not_implemented rows say why. The pool
	// is then as it stays.
	Refused *ErrorDetail `json:"refused,omitempty"`
}

// written answers a write: in a dry run, 200 with a DryRun; otherwise 204
// for a delete that removed the object, or status with the object.
func (s *Server) written(w http.ResponseWriter, r *http.Request, status int, v any, plan *kpool.Plan, gone bool, err error) {
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if service.IsDryRun(r.Context()) {
		d := DryRun{DryRun: true, Plan: plan, Gone: gone}
		if plan != nil {
			var e *kpool.Error
			if errors.As(plan.Refusal(), &e) {
				d.Refused = &ErrorDetail{Code: e.Code, Message: e.Message, Details: e.Details, Fields: e.Fields}
			}
		}
		switch o := v.(type) {
		case *kpool.NodePool:
			d.NodePool = o
		case *kpool.Cluster:
			d.Cluster = o
		}
		writeJSON(w, http.StatusOK, d)
		return
	}
	if gone {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	s.send(w, r, status, v, nil)
}

func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) {
	q, err := query(r, "limit", "after", "cluster_id", "nodepool_id", "type", "actor")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	eq := audit.Query{ClusterID: lowerID(q.Get("cluster_id")), NodePoolID: lowerID(q.Get("nodepool_id")), Type: q.Get("type"), Actor: q.Get("actor"), After: q.Get("after")}
	var fe kpool.FieldErrors
	if v := q.Get("limit"); q.Has("limit") {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > kpool.MaxLimit {
			fe.Add("limit", "must be an integer between 1 and %d, got %q", kpool.MaxLimit, v)
		}
		eq.Limit = n
	}
	if q.Has("after") && eq.After == "" {
		fe.Add("after", "must be the next cursor of a previous page")
	}
	if err := fe.Err(); err != nil {
		s.writeError(w, r, err)
		return
	}
	l, err := s.svc.Events(r.Context(), eq)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, EventList{Events: l.Items, Limit: l.Limit, Next: l.Next})
}

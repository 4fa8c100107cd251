package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/kpool/kpool"
)

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

// setETag sets the ETag to a resource version, quoted: what If-Match
// sends back.
func setETag(w http.ResponseWriter, rv string) {
	w.Header().Set("ETag", strconv.Quote(rv))
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
func (s *Server) written(w http.ResponseWriter, r *http.Request, dry bool, status int, v any, plan *kpool.Plan, gone bool, err error) {
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if dry {
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

// warn adds a Warning header (RFC 9111 code 299, agent kpool) for each of
// a write's warnings: fields stored but not applied, stale reports.
func warn(w http.ResponseWriter, warnings []string) {
	for _, text := range warnings {
		w.Header().Add("Warning", fmt.Sprintf("299 kpool %q", text))
	}
}

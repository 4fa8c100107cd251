package api

import (
	"encoding/json"
	"net/http"

	"github.com/kpool/kpool"
)

// getNodePoolStatus answers a pool's aggregated status and its
// controllers' reports.
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

// putNodePoolStatus records a controller's report on a pool; a report the
// service ignores is answered with a Warning saying why.
func (s *Server) putNodePoolStatus(w http.ResponseWriter, r *http.Request) {
	var b StatusReport
	_, ok := s.decode(w, r, &b)
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

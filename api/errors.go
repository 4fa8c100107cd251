package api

import (
	"errors"
	"net/http"

	"github.com/kpool/kpool"
)

// ErrorBody is the JSON shape of every error response.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the inside of an error response.
type ErrorDetail struct {
	Code    string             `json:"code"`
	Message string             `json:"message"`
	Details string             `json:"details"`
	Fields  []kpool.FieldError `json:"fields,omitempty"`
}

// statusClientClosed is what the access log records for a request whose
// client left before the answer (nginx's 499).
const statusClientClosed = 499

// writeError answers with err in the API's error shape. Errors that are not
// kpool errors are internal: logged with the request id, never shown.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var e *kpool.Error
	if !errors.As(err, &e) && r.Context().Err() != nil {
		// The client went away (or its deadline passed) mid-request: not
		// kpool's fault, so no ERROR line; the access log records 499.
		if rw, ok := w.(*recorder); ok {
			rw.status, rw.wrote = statusClientClosed, true
		}
		return
	}
	if !errors.As(err, &e) {
		id, _ := r.Context().Value(requestIDKey).(string)
		s.log.Error("internal error", "request_id", id, "method", r.Method, "path", r.URL.Path, "err", err)
		e = &kpool.Error{Code: kpool.CodeInternal, Message: "Internal server error", Details: "request id " + id}
	}
	if e.Code == kpool.CodeUnauthorized {
		w.Header().Set("WWW-Authenticate", "Bearer")
	}
	if e.Code == kpool.CodeUnavailable {
		// The database (or another dependency) is down for now: say when to
		// try again, and log the cause, which the caller does not see.
		if w.Header().Get("Retry-After") == "" {
			w.Header().Set("Retry-After", RetryUnavailable)
		}
		id, _ := r.Context().Value(requestIDKey).(string)
		s.log.Warn("unavailable", "request_id", id, "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeJSON(w, Status(e.Code), ErrorBody{Error: ErrorDetail{Code: e.Code, Message: e.Message, Details: e.Details, Fields: e.Fields}})
}

// statuses are the HTTP statuses of the error codes.
var statuses = map[string]int{
	kpool.CodeValidation:       http.StatusBadRequest,
	kpool.CodeNotFound:         http.StatusNotFound,
	kpool.CodeConflict:         http.StatusConflict,
	kpool.CodeNotImplemented:   http.StatusNotImplemented,
	kpool.CodeUnauthorized:     http.StatusUnauthorized,
	kpool.CodeForbidden:        http.StatusForbidden,
	kpool.CodePayloadTooLarge:  http.StatusRequestEntityTooLarge,
	kpool.CodeMethodNotAllowed: http.StatusMethodNotAllowed,
	kpool.CodeUnsupportedMedia: http.StatusUnsupportedMediaType,
	kpool.CodeUnavailable:      http.StatusServiceUnavailable,
	kpool.CodeRateLimited:      http.StatusTooManyRequests,
	kpool.CodeInternal:         http.StatusInternalServerError,
}

// Status returns the HTTP status of an error code (500 for one it does not
// know).
func Status(code string) int {
	if s, ok := statuses[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

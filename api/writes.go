package api

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/internal/jsondoc"
)

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

// decode checks a write's query (see writeQuery) and reads the body
// strictly into v, answering any error itself. dry says the query asked
// for a dry run.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any, allowed ...string) (dry, ok bool) {
	_, dry, err := writeQuery(r, allowed...)
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
		return false, false
	}
	return dry, true
}

// writeQuery checks a write's query parameters (only those allowed, each
// once) and says whether an allowed dry_run=true asks for a dry run.
func writeQuery(r *http.Request, allowed ...string) (url.Values, bool, error) {
	q, err := query(r, allowed...)
	if err != nil {
		return nil, false, err
	}
	dry, err := boolParam(q, "dry_run")
	return q, dry, err
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

// spec returns the spec a PUT or PATCH carries: nil when absent, and for a
// PUT also when null (a PUT changes only what it carries).
func spec(raw json.RawMessage, patch bool) json.RawMessage {
	if len(raw) == 0 || (!patch && strings.TrimSpace(string(raw)) == "null") {
		return nil
	}
	return raw
}

package oke

import (
	"fmt"
	"net/http"

	"github.com/kpool/kpool/cloudsim/sim"
)

// The error codes of OCI's API (docs.oracle.com, API Errors) that the
// Container Engine answers node pool calls with.
const (
	errNotAuthenticated   = "NotAuthenticated"                       // 401
	errNotFound           = "NotAuthorizedOrNotFound"                // 404
	errInvalidParameter   = "InvalidParameter"                       // 400
	errMissingParameter   = "MissingParameter"                       // 400
	errIncorrectState     = "IncorrectState"                         // 409
	errPreconditionFailed = "NoEtagMatch"                            // 412
	errTooMany            = "TooManyRequests"                        // 429
	errLimitExceeded      = "LimitExceeded"                          // 400
	errCannotParse        = "CannotParseRequest"                     // 400
	errRelatedNotFound    = "RelatedResourceNotAuthorizedOrNotFound" // 400
)

// apiError is OCI's error body.
type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// failf answers an OCI error.
func failf(status int, code, format string, args ...any) *sim.Reply {
	return jsonReply(status, apiError{Code: code, Message: fmt.Sprintf(format, args...)})
}

// invalid answers 400 InvalidParameter.
func invalid(format string, args ...any) *sim.Reply {
	return failf(http.StatusBadRequest, errInvalidParameter, format, args...)
}

// missing answers 400 MissingParameter.
func missing(param string) *sim.Reply {
	return failf(http.StatusBadRequest, errMissingParameter, "Missing required parameter %s.", param)
}

// notFound answers 404 NotAuthorizedOrNotFound, as OCI does both for a
// resource that does not exist and one the caller may not see.
func notFound(what, id string) *sim.Reply {
	return failf(http.StatusNotFound, errNotFound, "Authorization failed or requested resource not found: %s %s.", what, id)
}

// relatedNotFound answers 400 RelatedResourceNotAuthorizedOrNotFound, as
// OCI does for a resource named in the request's body (not its path or
// query) that does not exist or that the caller may not see.
func relatedNotFound(format string, args ...any) *sim.Reply {
	return failf(http.StatusBadRequest, errRelatedNotFound, "Authorization failed or the resource named in the request body was not found: "+format+".", args...)
}

// jsonReply answers v as JSON with status.
func jsonReply(status int, v any) *sim.Reply { return sim.JSON(status, "application/json", v) }

// codec words the engine's answers as OCI's errors.
type codec struct{}

func (codec) Throttled(*sim.Request, int) *sim.Reply {
	return failf(http.StatusTooManyRequests, errTooMany, "Too many requests for the tenancy.")
}

func (codec) BodyTooLarge(*sim.Request) *sim.Reply {
	return failf(http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "The request body is larger than %d bytes.", sim.MaxBody)
}

func (codec) BadBody(_ *sim.Request, err error) *sim.Reply {
	return failf(http.StatusBadRequest, errInvalidParameter, "The request body could not be read: %v", err)
}

func (codec) Fault(_ *sim.Request, kind string) *sim.Reply {
	if kind == sim.Fault503 {
		return failf(http.StatusServiceUnavailable, "ServiceUnavailable", "The service is currently unavailable (fault injected by kpool cloudsim).")
	}
	return failf(http.StatusInternalServerError, "InternalServerError", "Internal server error (fault injected by kpool cloudsim).")
}

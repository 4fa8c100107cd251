package oke

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/kpool/kpool/cloudsim/sim"
)

// The error codes of OCI's API (docs.oracle.com, API Errors) that the
// Container Engine answers node pool calls with.
const (
	errNotAuthenticated   = "NotAuthenticated"        // 401
	errNotFound           = "NotAuthorizedOrNotFound" // 404
	errInvalidParameter   = "InvalidParameter"        // 400
	errMissingParameter   = "MissingParameter"        // 400
	errIncorrectState     = "IncorrectState"          // 409
	errConflict           = "Conflict"                // 409
	errPreconditionFailed = "PreconditionFailed"      // 412
	errTooMany            = "TooManyRequests"         // 429
	errLimitExceeded      = "LimitExceeded"           // 400
	errCannotParse        = "CannotParseRequest"      // 400
	errNotAuthorized      = "NotAuthorizedOrResourceAlreadyExists"
)

// apiError is OCI's error body.
type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// failf answers an OCI error.
func failf(status int, code, format string, args ...any) *sim.Reply {
	rep := sim.NewReply(status)
	rep.Body, _ = json.Marshal(apiError{Code: code, Message: fmt.Sprintf(format, args...)})
	rep.Header.Set("Content-Type", "application/json")
	return rep
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

// jsonReply answers v as JSON with status.
func jsonReply(status int, v any) *sim.Reply {
	rep := sim.NewReply(status)
	b, err := json.Marshal(v)
	if err != nil {
		return failf(http.StatusInternalServerError, "InternalServerError", "encoding the response: %v", err)
	}
	rep.Body = b
	rep.Header.Set("Content-Type", "application/json")
	return rep
}

func itoa(n int) string { return strconv.Itoa(n) }

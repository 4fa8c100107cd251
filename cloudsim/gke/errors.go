package gke

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/kpool/kpool/cloudsim/sim"
)

// Google's canonical codes (google.rpc.Code) and the HTTP status each is
// answered with, as https://cloud.google.com/apis/design/errors lists them.
const (
	codeInvalidArgument    = "INVALID_ARGUMENT"
	codeFailedPrecondition = "FAILED_PRECONDITION"
	codeNotFound           = "NOT_FOUND"
	codeAlreadyExists      = "ALREADY_EXISTS"
	codeAborted            = "ABORTED"
	codePermissionDenied   = "PERMISSION_DENIED"
	codeUnauthenticated    = "UNAUTHENTICATED"
	codeResourceExhausted  = "RESOURCE_EXHAUSTED"
	codeUnimplemented      = "UNIMPLEMENTED"
	codeInternal           = "INTERNAL"
	codeUnavailable        = "UNAVAILABLE"
)

// httpStatus and rpcNumber are each code's HTTP status and number.
var (
	httpStatus = map[string]int{
		codeInvalidArgument: 400, codeFailedPrecondition: 400, codeNotFound: 404, codeAlreadyExists: 409,
		codeAborted: 409, codePermissionDenied: 403, codeUnauthenticated: 401, codeResourceExhausted: 429,
		codeUnimplemented: 501, codeInternal: 500, codeUnavailable: 503,
	}
	rpcNumber = map[string]int{
		codeInvalidArgument: 3, codeFailedPrecondition: 9, codeNotFound: 5, codeAlreadyExists: 6,
		codeAborted: 10, codePermissionDenied: 7, codeUnauthenticated: 16, codeResourceExhausted: 8,
		codeUnimplemented: 12, codeInternal: 13, codeUnavailable: 14,
	}
)

// googleError is the body of every error a Google REST API answers:
// {"error":{"code":404,"message":"...","status":"NOT_FOUND","details":[...]}}.
type googleError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
	Details []any  `json:"details,omitempty"`
}

// errorInfo is a google.rpc.ErrorInfo detail.
func errorInfo(reason string) map[string]any {
	return map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason,
		"domain": "googleapis.com", "metadata": map[string]string{"service": "container.googleapis.com"}}
}

// badRequest is a google.rpc.BadRequest detail naming the field at fault
// (its JSON path in the request, e.g. nodePool.config.diskType).
func badRequest(field, description string) map[string]any {
	return map[string]any{"@type": "type.googleapis.com/google.rpc.BadRequest",
		"fieldViolations": []map[string]string{{"field": field, "description": description}}}
}

// jsonReply answers v as JSON.
func jsonReply(status int, v any) *sim.Reply {
	return sim.JSON(status, "application/json; charset=UTF-8", v)
}

// errorReply answers a Google error of a canonical code.
func errorReply(code, format string, args ...any) *sim.Reply {
	return detailed(code, nil, format, args...)
}

// detailed answers a Google error with details.
func detailed(code string, details []any, format string, args ...any) *sim.Reply {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	status, ok := httpStatus[code]
	if !ok {
		status = http.StatusInternalServerError
	}
	return jsonReply(status, struct {
		Error googleError `json:"error"`
	}{googleError{Code: status, Message: msg, Status: code, Details: details}})
}

// invalid answers 400 INVALID_ARGUMENT about a request field (its JSON
// path), with a BadRequest detail naming it.
func invalid(field, format string, args ...any) *sim.Reply {
	msg := fmt.Sprintf(format, args...)
	return detailed(codeInvalidArgument, []any{badRequest(field, msg)}, "%s", msg)
}

// codec words the engine's answers as Google's errors.
type codec struct{}

func (codec) Throttled(r *sim.Request, secs int) *sim.Reply {
	rate, burst := r.RateLimit()
	return detailed(codeResourceExhausted, []any{errorInfo("RATE_LIMIT_EXCEEDED"),
		map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": strconv.Itoa(secs) + "s"}},
		"Quota exceeded for quota metric 'Requests' and limit 'Requests per minute' of service 'container.googleapis.com' (kpool cloudsim: %g requests per second, burst %d).", rate, burst)
}

func (codec) BodyTooLarge(*sim.Request) *sim.Reply {
	return errorReply(codeInvalidArgument, "Request payload size exceeds the limit: %d bytes.", sim.MaxBody)
}

func (codec) BadBody(_ *sim.Request, err error) *sim.Reply {
	return errorReply(codeInvalidArgument, "The request body could not be read: %v", err)
}

func (codec) Fault(_ *sim.Request, kind string) *sim.Reply {
	if kind == sim.Fault503 {
		return errorReply(codeUnavailable, "The service is currently unavailable (fault injected by kpool cloudsim).")
	}
	return errorReply(codeInternal, "Internal error encountered (fault injected by kpool cloudsim).")
}

package aks

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/kpool/kpool/cloudsim/sim"
)

// armError is ARM's ErrorDetail: the body of an error
// ({"error":{...}}), a failed operation's error, and, from api-version
// 2025-05-01, an agent pool's properties.status.provisioningError.
type armError struct {
	Code    string      `json:"code"`
	Message string      `json:"message"`
	Target  string      `json:"target,omitempty"`
	Details []*armError `json:"details,omitempty"`
}

// String is "code: message (detail code: detail message; ...)".
func (e *armError) String() string {
	out := e.Code + ": " + e.Message
	var ds []string
	for _, d := range e.Details {
		ds = append(ds, d.String())
	}
	if len(ds) > 0 {
		out += " (" + strings.Join(ds, "; ") + ")"
	}
	return out
}

// jsonReply answers v as JSON.
func jsonReply(status int, v any) *sim.Reply {
	return sim.JSON(status, "application/json; charset=utf-8", v)
}

// errorReply answers an ARM error.
func errorReply(status int, code, format string, args ...any) *sim.Reply {
	return targetedError(status, code, "", format, args...)
}

// targetedError answers an ARM error naming the property it is about.
func targetedError(status int, code, target, format string, args ...any) *sim.Reply {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	return jsonReply(status, struct {
		Error armError `json:"error"`
	}{armError{Code: code, Message: msg, Target: target}})
}

// invalid answers 400 InvalidParameter about the property prop (a JSON
// name such as "count"); the message names it as properties.<prop>.
func invalid(prop, format string, args ...any) *sim.Reply {
	return targetedError(http.StatusBadRequest, "InvalidParameter", "properties."+prop,
		"The value of parameter properties.%s is invalid: %s", prop, fmt.Sprintf(format, args...))
}

// codec words the engine's answers as ARM's errors.
type codec struct{}

func (codec) Throttled(r *sim.Request, secs int) *sim.Reply {
	rate, burst := r.RateLimit()
	return errorReply(http.StatusTooManyRequests, "TooManyRequests",
		"The request is being throttled as the limit has been reached for this subscription (%g requests per second, burst %d). Please try again after %d seconds.",
		rate, burst, secs)
}

func (codec) BodyTooLarge(*sim.Request) *sim.Reply {
	return errorReply(http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "The request content is larger than %d bytes.", sim.MaxBody)
}

func (codec) BadBody(_ *sim.Request, err error) *sim.Reply {
	return errorReply(http.StatusBadRequest, "InvalidRequestContent", "The request content could not be read: %v", err)
}

func (codec) Fault(r *sim.Request, kind string) *sim.Reply {
	if kind == sim.Fault503 {
		return errorReply(http.StatusServiceUnavailable, "ServiceUnavailable",
			"The service is temporarily unavailable; please retry (fault injected by kpool cloudsim).")
	}
	return errorReply(http.StatusInternalServerError, "InternalServerError",
		"Encountered internal server error. Diagnostic information: timestamp '%s', tracking id '%s' (fault injected by kpool cloudsim).",
		r.Now.UTC().Format("20060102T150405Z"), r.NewID())
}

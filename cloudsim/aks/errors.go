package aks

import (
	"encoding/json"
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
	rep := sim.NewReply(status)
	b, err := json.Marshal(v)
	if err != nil {
		return errorReply(http.StatusInternalServerError, "InternalServerError", "encoding the response: %v", err)
	}
	rep.Body = b
	rep.Header.Set("Content-Type", "application/json; charset=utf-8")
	return rep
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

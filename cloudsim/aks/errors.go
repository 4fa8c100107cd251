package aks

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// armError is the body of an ARM error: {"error":{"code","message"}}.
type armError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Target  string `json:"target,omitempty"`
}

// reply is an answer built under the server's lock and written after it.
type reply struct {
	status  int
	header  http.Header
	body    []byte
	drop    bool   // close the connection without answering
	created bool   // a PUT that created a pool
	fault   string // the fault injected, "" for none
}

func newReply(status int) *reply { return &reply{status: status, header: http.Header{}} }

// jsonReply answers v as JSON.
func jsonReply(status int, v any) *reply {
	rep := newReply(status)
	b, err := json.Marshal(v)
	if err != nil {
		return errorReply(http.StatusInternalServerError, "InternalServerError", "encoding the response: %v", err)
	}
	rep.body = b
	rep.header.Set("Content-Type", "application/json; charset=utf-8")
	return rep
}

// errorReply answers an ARM error.
func errorReply(status int, code, format string, args ...any) *reply {
	return targetedError(status, code, "", format, args...)
}

// targetedError answers an ARM error naming the property it is about.
func targetedError(status int, code, target, format string, args ...any) *reply {
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
func invalid(prop, format string, args ...any) *reply {
	return targetedError(http.StatusBadRequest, "InvalidParameter", "properties."+prop,
		"The value of parameter properties.%s is invalid: %s", prop, fmt.Sprintf(format, args...))
}

package provider

import (
	"context"
	"errors"
	"strings"

	"github.com/kpool/kpool"
)

// How drivers turn what a cloud answered into a provider Error: the
// reason's text, the spec field a refusal is about, and the errors of a
// call that got no answer or was never sent.

// FirstLine returns s on one line, its spaces collapsed, cut at 300
// bytes: a reason for a status, not a dump.
func FirstLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// FieldWord ties a word of a cloud's validation message to the spec field
// it is about.
type FieldWord struct {
	Word  string // lower case
	Field string // the spec field's path
}

// FieldOf guesses the spec field a cloud's validation message is about:
// the field of the first word in words that the message holds, ignoring
// case ("spec" when none does). Put the longer of two overlapping words
// first ("nodeshapeconfig" before "nodeshape").
func FieldOf(message string, words []FieldWord) string {
	low := strings.ToLower(message)
	for _, w := range words {
		if strings.Contains(low, w.Word) {
			return w.Field
		}
	}
	return "spec"
}

// Refused is the error of a request the wire did not send
// (*RefusedHostError in err's chain): a validation error on its field,
// never retried. ok is false when err is no such refusal.
func Refused(t kpool.PlatformType, err error) (e error, ok bool) {
	var rh *RefusedHostError
	if !errors.As(err, &rh) {
		return nil, false
	}
	return ValidationError(t, rh.Field(), "%s", rh.Error()), true
}

// Unanswered is the error of a call the cloud's API (api, "EKS") did not
// answer: transient, as an outage is, saying whether time ran out.
func Unanswered(t kpool.PlatformType, api string, err error) *Error {
	reason := "calling " + api + ": " + FirstLine(err.Error())
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		reason = "no answer from " + api + " in time: " + FirstLine(err.Error())
	}
	return &Error{Kind: KindTransient, Provider: t, Reason: reason, Err: err}
}

// CredentialError is an error of a credential's own (its token endpoint,
// the SDK's default chain), which a driver marks as its SDK hands it on,
// so that it tells a refused or unavailable identity from what the
// cloud's API answered.
type CredentialError struct{ Err error }

func (e *CredentialError) Error() string { return e.Err.Error() }
func (e *CredentialError) Unwrap() error { return e.Err }

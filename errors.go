package kpool

import (
	"errors"
	"fmt"
	"strings"
)

// Error codes. Every error that leaves kpool carries one of these; the API
// maps each to one HTTP status (api.Status).
const (
	CodeValidation       = "VALIDATION_ERROR"
	CodeNotFound         = "NOT_FOUND"
	CodeConflict         = "CONFLICT"
	CodeNotImplemented   = "NOT_IMPLEMENTED"
	CodeUnauthorized     = "UNAUTHORIZED"
	CodeForbidden        = "FORBIDDEN"
	CodeInternal         = "INTERNAL"
	CodePayloadTooLarge  = "PAYLOAD_TOO_LARGE"
	CodeMethodNotAllowed = "METHOD_NOT_ALLOWED"
	CodeUnsupportedMedia = "UNSUPPORTED_MEDIA_TYPE"
	CodeUnavailable      = "UNAVAILABLE"
	CodeRateLimited      = "RATE_LIMITED"
)

// Error is kpool's error: a code, a message for people, optional details and,
// for validation errors, the fields at fault.
type Error struct {
	Code    string
	Message string
	Details string
	Fields  []FieldError
	// cause is the error behind an UNAVAILABLE one (see Unavailable): kept
	// for errors.Is/As and logs, never shown to the API's callers.
	cause error
}

// FieldError names one field (a JSON path such as spec.autoscaling.maxNodes)
// and why its value was refused.
type FieldError struct {
	Field  string `json:"field"`
	Reason string `json:"reason"`
}

func (e *Error) Error() string {
	s := e.Message
	if e.Details != "" {
		s += ": " + e.Details
	}
	if e.cause != nil {
		s += ": " + e.cause.Error()
	}
	return s
}

// Unwrap returns the cause of an UNAVAILABLE error, if any.
func (e *Error) Unwrap() error { return e.cause }

// Unavailable returns an UNAVAILABLE error (503, try again later) with the
// message for people and the cause for logs: a dependency, such as the
// database, cannot be reached for now.
func Unavailable(message string, cause error) *Error {
	return &Error{Code: CodeUnavailable, Message: message, Details: "try again shortly", cause: cause}
}

// IsUnavailable reports whether err is UNAVAILABLE.
func IsUnavailable(err error) bool { return ErrorCode(err) == CodeUnavailable }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err: "" for nil, CodeInternal for an error
// that is not an *Error.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// IsNotFound, IsConflict and IsValidation report an error's code.
func IsNotFound(err error) bool       { return ErrorCode(err) == CodeNotFound }
func IsConflict(err error) bool       { return ErrorCode(err) == CodeConflict }
func IsValidation(err error) bool     { return ErrorCode(err) == CodeValidation }
func IsNotImplemented(err error) bool { return ErrorCode(err) == CodeNotImplemented }

// FieldErrors collects validation failures so that one response names them all.
type FieldErrors []FieldError

// Add records that field is invalid for the formatted reason.
func (fe *FieldErrors) Add(field, format string, args ...any) {
	*fe = append(*fe, FieldError{Field: field, Reason: fmt.Sprintf(format, args...)})
}

// Report records a problem as it is (the shape of jsondoc.Report).
func (fe *FieldErrors) Report(field, reason string) {
	*fe = append(*fe, FieldError{Field: field, Reason: reason})
}

// Err returns nil when nothing was recorded, otherwise a VALIDATION_ERROR
// whose details list every field and reason.
func (fe FieldErrors) Err() error {
	if len(fe) == 0 {
		return nil
	}
	parts := make([]string, len(fe))
	for i, f := range fe {
		parts[i] = f.Field + ": " + f.Reason
	}
	return &Error{
		Code:    CodeValidation,
		Message: "Validation failed",
		Details: strings.Join(parts, "; "),
		Fields:  append([]FieldError(nil), fe...),
	}
}

// Invalid returns a VALIDATION_ERROR for a single field.
func Invalid(field, format string, args ...any) error {
	var fe FieldErrors
	fe.Add(field, format, args...)
	return fe.Err()
}

// Errors a Store returns from Tx.CreateNodePool, at once or when the
// transaction commits.
var (
	// ErrProviderNameTaken: another pool of the cluster has the pool's
	// provider name. The service picks the next name and tries again.
	ErrProviderNameTaken = errors.New("provider name taken in the cluster")
	// ErrClusterDeleting: the cluster is being deleted and takes no new
	// pools. The database enforces it, so that no create can slip in
	// beside a cluster delete.
	ErrClusterDeleting = &Error{Code: CodeConflict, Message: "Cluster is being deleted"}
	// ErrClusterChanged: the cluster is no longer at the generation the
	// pool was checked against. The service checks it again.
	ErrClusterChanged = &Error{Code: CodeConflict, Message: "Cluster has changed"}
	// ErrCloudClusterTaken: another registration has the cluster's
	// CloudID (from Tx.CreateCluster and Tx.UpdateCluster). The service
	// says which only to a caller who may see it.
	ErrCloudClusterTaken = errors.New("the cloud cluster is registered already")
)

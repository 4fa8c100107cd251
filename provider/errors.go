package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kpool/kpool"
)

// Kind classifies a driver error by what the caller should do about it.
type Kind string

const (
	// KindNotImplemented is a capability boundary: never retry.
	KindNotImplemented Kind = "not implemented"
	// KindValidation: the provider refuses this spec; retry only once the
	// spec changes.
	KindValidation Kind = "validation"
	KindNotFound   Kind = "not found"
	// KindAlreadyExists: a create found a pool of that name that differs
	// from the spec only in fields an update can change.
	KindAlreadyExists Kind = "already exists"
	// KindThrottled: retry after RetryAfter.
	KindThrottled Kind = "throttled"
	// KindTransient: retry with backoff.
	KindTransient Kind = "transient"
	// KindBusy: the cloud refused the call because another operation runs
	// on the cluster or pool (GKE FAILED_PRECONDITION, ARM 409
	// OperationNotAllowed "in progress", EKS ResourceInUseException, OCI
	// 409 IncorrectState). Transient (IsTransient holds), but no fault to
	// back off from: the call goes once that operation ends, so it is tried
	// again at the pace an operation is followed.
	KindBusy             Kind = "busy"
	KindPermissionDenied Kind = "permission denied"
	// KindForeign: the pool carries another owner's mark (see Owner); it
	// is never adopted, changed or deleted, and no retry changes that.
	KindForeign Kind = "foreign"
	// KindQuota: the provider refuses for a quota or limit of the account,
	// region or cluster (CPUs in a region, node groups per cluster, nodes
	// per pool), not for the spec: the same call may succeed once the quota
	// is raised or capacity is freed, so it is tried again, slowly.
	KindQuota Kind = "quota"
	// KindCapacity: the cloud has no capacity for what the spec asks (a
	// zone, machine type or capacity type ran out: AKS
	// ZonalAllocationFailed, GKE ZONE_RESOURCE_POOL_EXHAUSTED). Not the
	// account's quota, not the spec's fault: the same call may succeed
	// later, or elsewhere (a logical pool moves the nodes to a fallback).
	KindCapacity Kind = "capacity"
)

// Error is every error a driver returns: the provider's own errors are
// mapped into these kinds, so nothing provider-specific leaks out.
type Error struct {
	Kind       Kind
	Provider   kpool.PlatformType
	Field      string // the spec field at fault, for validation errors
	Reason     string
	RetryAfter time.Duration // for throttling, when the provider said
	Err        error         // the provider's error, for logs
	// Code is the cloud's own error code and RequestID the id its answer
	// carried (ARM's x-ms-request-id, say), when the driver can tell: for
	// the controllers' log lines, so that a failure can be found in the
	// cloud's own logs and support cases. Empty when the cloud gave none.
	Code, RequestID string
}

func (e *Error) Error() string {
	msg := string(e.Provider) + ": " + string(e.Kind)
	if e.Field != "" {
		msg += ": " + e.Field
	}
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	if e.RetryAfter > 0 {
		msg += fmt.Sprintf(" (retry after %v)", e.RetryAfter)
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Is matches the sentinels below by kind: errors.Is(err, ErrThrottled).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok || t.Provider != "" || t.Field != "" || t.Reason != "" || t.Err != nil {
		return false
	}
	return t.Kind == e.Kind || (t.Kind == KindTransient && e.Kind == KindBusy)
}

// Sentinels for errors.Is.
var (
	ErrNotImplemented   = &Error{Kind: KindNotImplemented}
	ErrValidation       = &Error{Kind: KindValidation}
	ErrNotFound         = &Error{Kind: KindNotFound}
	ErrAlreadyExists    = &Error{Kind: KindAlreadyExists}
	ErrThrottled        = &Error{Kind: KindThrottled}
	ErrTransient        = &Error{Kind: KindTransient}
	ErrBusy             = &Error{Kind: KindBusy}
	ErrPermissionDenied = &Error{Kind: KindPermissionDenied}
	ErrForeign          = &Error{Kind: KindForeign}
	ErrQuota            = &Error{Kind: KindQuota}
	ErrCapacity         = &Error{Kind: KindCapacity}
)

func IsNotImplemented(err error) bool   { return errors.Is(err, ErrNotImplemented) }
func IsValidation(err error) bool       { return errors.Is(err, ErrValidation) }
func IsNotFound(err error) bool         { return errors.Is(err, ErrNotFound) }
func IsAlreadyExists(err error) bool    { return errors.Is(err, ErrAlreadyExists) }
func IsThrottled(err error) bool        { return errors.Is(err, ErrThrottled) }
func IsTransient(err error) bool        { return errors.Is(err, ErrTransient) }
func IsBusy(err error) bool             { return errors.Is(err, ErrBusy) }
func IsPermissionDenied(err error) bool { return errors.Is(err, ErrPermissionDenied) }
func IsForeign(err error) bool          { return errors.Is(err, ErrForeign) }
func IsQuota(err error) bool            { return errors.Is(err, ErrQuota) }
func IsCapacity(err error) bool         { return errors.Is(err, ErrCapacity) }

// ErrTimeout is wrapped by the error of a call the provider did not answer
// in time (see package deadline): transient, and a sign that the cluster's
// endpoint may be hanging.
var ErrTimeout = errors.New("no answer from the provider in time")

// IsTimeout reports whether a call ended because the provider did not
// answer in time.
func IsTimeout(err error) bool { return errors.Is(err, ErrTimeout) }

// Retryable reports whether trying the same call again may succeed.
func Retryable(err error) bool { return IsThrottled(err) || IsTransient(err) }

// RetryAfter returns how long the provider asked the caller to wait.
func RetryAfter(err error) (time.Duration, bool) {
	var e *Error
	if errors.As(err, &e) && e.RetryAfter > 0 {
		return e.RetryAfter, true
	}
	return 0, false
}

// NotImplementedError returns the capability-boundary error of a provider.
func NotImplementedError(p kpool.PlatformType, format string, args ...any) *Error {
	return &Error{Kind: KindNotImplemented, Provider: p, Reason: fmt.Sprintf(format, args...)}
}

// QuotaError returns the error of a quota or limit the provider enforces;
// field names the spec field that asks for what is over it ("" for none).
func QuotaError(p kpool.PlatformType, field, format string, args ...any) *Error {
	return &Error{Kind: KindQuota, Provider: p, Field: field, Reason: fmt.Sprintf(format, args...)}
}

// CapacityError returns the error of a call the cloud refused for want of
// capacity; code is the cloud's own error code.
func CapacityError(p kpool.PlatformType, code, format string, args ...any) *Error {
	return &Error{Kind: KindCapacity, Provider: p, Code: code, Reason: fmt.Sprintf(format, args...)}
}

// ValidationError returns a validation error on a spec field.
func ValidationError(p kpool.PlatformType, field, format string, args ...any) *Error {
	return &Error{Kind: KindValidation, Provider: p, Field: field, Reason: fmt.Sprintf(format, args...)}
}

// APIError turns a driver error into the error the API answers with:
// NOT_IMPLEMENTED for a capability boundary, VALIDATION_ERROR naming the
// field for a validation error; anything else is returned as it is.
func APIError(err error) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	switch e.Kind {
	case KindNotImplemented:
		return &kpool.Error{Code: kpool.CodeNotImplemented, Message: fmt.Sprintf("Not implemented by %s", e.Provider), Details: e.Reason}
	case KindValidation:
		field := e.Field
		if field == "" {
			field = "spec"
		}
		return kpool.Invalid(field, "%s: %s", e.Provider, e.Reason)
	}
	return err
}

// Outcome names a call's result by its error's kind, as metrics labels and
// span attributes give it: ok, a Kind with its spaces as underscores
// (not_found, permission_denied, quota: a value a query can name
// unquoted), canceled, or error.
func Outcome(err error) string {
	var e *Error
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &e):
		return strings.ReplaceAll(string(e.Kind), " ", "_")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "canceled"
	}
	return "error"
}

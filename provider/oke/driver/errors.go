package driver

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"

	"github.com/kpool/kpool/provider"
)

// retryable says which failures the SDK tries again: 500, 502, 503, 504,
// a connection dropped or refused, a try timed out. Never a refused host,
// throttling, a conflict or any other answer.
func retryable(r common.OCIOperationResponse) bool {
	err := r.Error
	if err == nil {
		return false
	}
	var done *provider.CallerDoneError
	if provider.IsRefusedHost(err) || errors.As(err, &done) {
		return false
	}
	if se, ok := common.IsServiceError(err); ok {
		switch se.GetHTTPStatusCode() {
		case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return false
	}
	return transportFailure(err)
}

// transportFailure reports whether err is the connection's, not an answer.
func transportFailure(err error) bool {
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &ne) || errors.As(err, &oe) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || common.IsNetworkError(err) ||
		strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "EOF")
}

// status is the HTTP status of a service error, 0 for any other error.
func status(err error) int {
	if se, ok := common.IsServiceError(err); ok {
		return se.GetHTTPStatusCode()
	}
	return 0
}

// throttleWait is the Retry-After of a throttled call whose answer gives
// none.
const throttleWait = time.Second

// classify maps an SDK error to a provider error. resp is the answer, when
// there was one (for Retry-After); field names the spec field a validation
// error is about ("" guesses it from OKE's message).
func classify(err error, resp *http.Response, field string) error {
	var rh *provider.RefusedHostError
	if errors.As(err, &rh) {
		return provider.ValidationError(platform, rh.Field(), "%s", rh.Error())
	}
	se, ok := common.IsServiceError(err)
	if !ok {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return &provider.Error{Kind: provider.KindTransient, Provider: platform, Reason: "no answer from OKE in time: " + firstLine(err.Error()), Err: err}
		}
		return &provider.Error{Kind: provider.KindTransient, Provider: platform, Reason: "calling OKE: " + firstLine(err.Error()), Err: err}
	}
	code, st := se.GetCode(), se.GetHTTPStatusCode()
	reason := code
	if msg := se.GetMessage(); msg != "" {
		reason += ": " + firstLine(msg)
	}
	e := &provider.Error{Provider: platform, Reason: reason, Err: err}
	switch {
	case st == http.StatusTooManyRequests || code == "TooManyRequests":
		e.Kind, e.RetryAfter = provider.KindThrottled, throttleWait
		if resp != nil {
			if d := provider.RetryAfterHeader(resp.Header, time.Now()); d > 0 {
				e.RetryAfter = d
			}
		}
	case st == http.StatusUnauthorized || st == http.StatusForbidden || code == "NotAuthenticated":
		e.Kind = provider.KindPermissionDenied
	case st == http.StatusNotFound:
		// OCI answers NotAuthorizedOrNotFound alike for a resource that
		// does not exist and one the caller may not see.
		e.Kind = provider.KindNotFound
	case st == http.StatusConflict || st == http.StatusPreconditionFailed:
		// Another work request holds the pool, or it changed since it
		// was read: try again once it settles.
		e.Kind = provider.KindTransient
	case st == http.StatusBadRequest:
		e.Kind, e.Field = provider.KindValidation, field
		if e.Field == "" {
			e.Field = fieldOf(reason)
		}
	default:
		e.Kind = provider.KindOfStatus(st)
	}
	return e
}

// fieldOf guesses the spec field an OKE validation message is about.
func fieldOf(reason string) string {
	low := strings.ToLower(reason)
	for _, f := range []struct{ word, field string }{
		{"nodeshapeconfig.ocpus", "spec.platform.oci.ocpus"}, {"memoryingbs", "spec.platform.oci.memoryInGBs"},
		{"nodeshapeconfig", "spec.platform.oci.ocpus"}, {"nodeshape", "spec.platform.oci.shape"},
		{"bootvolumesizeingbs", "spec.platform.oci.bootVolumeSizeInGBs"}, {"imageid", "spec.platform.oci.imageId"},
		{"nodesourcedetails", "spec.platform.oci.imageId"}, {"kubernetesversion", "spec.kubernetesVersion"},
		{"initialnodelabels", "spec.labels"}, {"nodeconfigdetails.freeformtags", "spec.platform.oci"}, {"freeformtags", "spec.tags"},
		{"availabilitydomain", "spec.zones"}, {"placementconfigs", "spec.zones"}, {"preemptible", "spec.platform.oci.preemptible"},
		{"size", "spec.nodeCount"}, {"name", "provider_name"},
	} {
		if strings.Contains(low, f.word) {
			return f.field
		}
	}
	return "spec"
}

// firstLine returns s on one line, its spaces collapsed, cut at 300
// bytes: a reason for a status, not a dump.
func firstLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

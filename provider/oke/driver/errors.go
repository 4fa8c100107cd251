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
	if e, ok := provider.Refused(platform, err); ok {
		return e
	}
	se, ok := common.IsServiceError(err)
	if !ok {
		return provider.Unanswered(platform, "OKE", err)
	}
	code, st := se.GetCode(), se.GetHTTPStatusCode()
	reason := code
	if msg := se.GetMessage(); msg != "" {
		reason += ": " + provider.FirstLine(msg)
	}
	e := &provider.Error{Provider: platform, Reason: reason, Err: err, Code: code, RequestID: se.GetOpcRequestID()}
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
	case st == http.StatusConflict && code == "IncorrectState":
		// Another work request holds the pool: try again once it ends.
		e.Kind = provider.KindBusy
	case st == http.StatusConflict || st == http.StatusPreconditionFailed:
		// It changed since it was read: try again once it settles.
		e.Kind = provider.KindTransient
	case st == http.StatusBadRequest && (code == "LimitExceeded" || code == "QuotaExceeded"):
		// A service limit of the tenancy (node pools per cluster, nodes
		// per pool) or a compartment quota: not the spec's fault; it may
		// pass once the limit is raised or capacity freed.
		e.Kind, e.Field = provider.KindQuota, field
		if e.Field == "" {
			e.Field = provider.FieldOf(reason, fieldWords)
		}
		if e.Field == "spec" {
			e.Field = "" // node pools per cluster: no field asks for it
		}
	case st == http.StatusBadRequest && code == "RelatedResourceNotAuthorizedOrNotFound" && strings.Contains(strings.ToLower(reason), "cluster"):
		// The OKE cluster named in the body is gone, or the key may not
		// see it: the cluster's registration, not the pool's spec.
		e.Kind = provider.KindNotFound
	case st == http.StatusBadRequest:
		e.Kind, e.Field = provider.KindValidation, field
		if e.Field == "" {
			e.Field = provider.FieldOf(reason, fieldWords)
		}
	default:
		e.Kind = provider.KindOfStatus(st)
	}
	return e
}

// fieldWords are the words of OKE's validation messages, with the spec
// field each is about, the longer of two overlapping words first.
var fieldWords = []provider.FieldWord{
	{Word: "nodeshapeconfig.ocpus", Field: "spec.platform.oci.ocpus"}, {Word: "memoryingbs", Field: "spec.platform.oci.memoryInGBs"},
	{Word: "nodeshapeconfig", Field: "spec.platform.oci.ocpus"}, {Word: "nodeshape", Field: "spec.platform.oci.shape"},
	{Word: "bootvolumesizeingbs", Field: "spec.platform.oci.bootVolumeSizeInGBs"}, {Word: "imageid", Field: "spec.platform.oci.imageId"},
	{Word: "nodesourcedetails", Field: "spec.platform.oci.imageId"}, {Word: "kubernetesversion", Field: "spec.kubernetesVersion"},
	{Word: "initialnodelabels", Field: "spec.labels"}, {Word: "nodeconfigdetails.freeformtags", Field: "spec.platform.oci"}, {Word: "freeformtags", Field: "spec.tags"},
	{Word: "availabilitydomain", Field: "spec.zones"}, {Word: "subnetid", Field: "spec.zones"}, {Word: "placementconfigs", Field: "spec.zones"}, {Word: "preemptible", Field: "spec.platform.oci.preemptible"},
	{Word: "size", Field: "spec.nodeCount"}, {Word: "nodes per", Field: "spec.nodeCount"}, {Word: "name", Field: "provider_name"},
}

package driver

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/kpool/kpool/provider"
)

// throttleWait is the Retry-After of a 429 that gives none.
const throttleWait = time.Second

func retryAfter(h http.Header, now time.Time) time.Duration {
	return provider.RetryAfterHeader(h, now)
}

// classify maps a client error to a provider error. field names the spec
// field a validation error is about ("" guesses it from Civo's reason).
func classify(err error, field string) error {
	var rh *provider.RefusedHostError
	if errors.As(err, &rh) {
		return provider.ValidationError(platform, rh.Field(), "%s", rh.Error())
	}
	var ae *APIError
	if !errors.As(err, &ae) {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return &provider.Error{Kind: provider.KindTransient, Provider: platform, Reason: "no answer from Civo in time: " + firstLine(err.Error()), Err: err}
		}
		return &provider.Error{Kind: provider.KindTransient, Provider: platform, Reason: "calling Civo: " + firstLine(err.Error()), Err: err}
	}
	reason := ae.Code
	if ae.Reason != "" {
		if reason != "" {
			reason += ": "
		}
		reason += firstLine(ae.Reason)
	}
	if reason == "" {
		reason = http.StatusText(ae.Status)
	}
	e := &provider.Error{Kind: provider.KindOfStatus(ae.Status), Provider: platform, Reason: reason, Err: err}
	switch e.Kind {
	case provider.KindThrottled:
		e.RetryAfter = ae.RetryAfter
		if e.RetryAfter <= 0 {
			e.RetryAfter = throttleWait
		}
	case provider.KindValidation:
		e.Field = field
		if e.Field == "" {
			e.Field = fieldOf(ae.Code + " " + ae.Reason)
		}
	}
	if ae.Status == http.StatusRequestEntityTooLarge || ae.Status == http.StatusUnprocessableEntity {
		e.Kind, e.Field = provider.KindValidation, "spec"
	}
	return e
}

// fieldOf guesses the spec field a Civo validation answer is about.
func fieldOf(reason string) string {
	low := strings.ToLower(reason)
	for _, f := range []struct{ word, field string }{
		{"size", "spec.platform.civo.size"}, {"public_ip", "spec.platform.civo.publicIpNodePool"},
		{"taint", "spec.taints"}, {"label", "spec.labels"}, {"count", "spec.nodeCount"},
		{"name", "provider_name"}, {"pool id", "provider_name"}, {"region", "spec.platform.civo.region"},
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

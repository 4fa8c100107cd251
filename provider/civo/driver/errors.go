package driver

import (
	"errors"
	"net/http"
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
	if e, ok := provider.Refused(platform, err); ok {
		return e
	}
	var ae *APIError
	if !errors.As(err, &ae) {
		return provider.Unanswered(platform, "Civo", err)
	}
	reason := ae.Code
	if ae.Reason != "" {
		if reason != "" {
			reason += ": "
		}
		reason += provider.FirstLine(ae.Reason)
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
			e.Field = provider.FieldOf(ae.Code+" "+ae.Reason, fieldWords)
		}
	}
	if ae.Status == http.StatusRequestEntityTooLarge || ae.Status == http.StatusUnprocessableEntity {
		e.Kind, e.Field = provider.KindValidation, "spec"
	}
	return e
}

// fieldWords are the words of Civo's validation answers, with the spec
// field each is about.
var fieldWords = []provider.FieldWord{
	{Word: "size", Field: "spec.platform.civo.size"}, {Word: "public_ip", Field: "spec.platform.civo.publicIpNodePool"},
	{Word: "taint", Field: "spec.taints"}, {Word: "label", Field: "spec.labels"}, {Word: "count", Field: "spec.nodeCount"},
	{Word: "name", Field: "provider_name"}, {Word: "pool id", Field: "provider_name"}, {Word: "region", Field: "spec.platform.civo.region"},
}

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

// Civo's error codes (civogo's errors.go table) the driver tells apart.
const (
	codeClusterNotFound = "database_kubernetes_cluster_not_found"
	codePoolNotFound    = "database_cluster_pool_not_found"
	// codeCapacity: the region is out of capacity for a size, the answer
	// to a create or scale that can start none of its nodes, and the
	// reason of the cluster's WorkerNodesReady condition while a pool's
	// nodes could not start for it.
	codeCapacity = "out_of_capacity"
)

// codeKind is what a Civo error code means for kpool, whatever its
// status: the kind, and the spec field it is about.
type codeKind struct {
	kind  provider.Kind
	field string
}

// codeKinds map Civo's codes (civogo's errors.go) to kinds. Neither is
// the spec's fault: quota_limit_reached is the account's quota (its
// instances, CPU, RAM or disk: Civo's docs, account/quota), KindQuota;
// out_of_capacity is the region's capacity for a size (civogo's
// OutOFCapacityError), not the account's: KindCapacity, which another
// size or a later try may get past.
var codeKinds = map[string]codeKind{
	"quota_limit_reached":                    {provider.KindQuota, "spec.nodeCount"},
	codeCapacity:                             {provider.KindCapacity, ""},
	codeClusterNotFound:                      {provider.KindNotFound, ""},
	codePoolNotFound:                         {provider.KindNotFound, ""},
	"database_region_not_found":              {provider.KindNotFound, ""},
	"region_unavailable":                     {provider.KindNotFound, ""},
	"database_size_not_found":                {provider.KindValidation, "spec.platform.civo.size"},
	"parameter_size_missing":                 {provider.KindValidation, "spec.platform.civo.size"},
	"parameter_label_invalid":                {provider.KindValidation, "spec.labels"},
	"parameter_name_invalid":                 {provider.KindValidation, "provider_name"},
	"authentication_invalid_key":             {provider.KindPermissionDenied, ""},
	"authentication_failed":                  {provider.KindPermissionDenied, ""},
	"authentication_access_denied":           {provider.KindPermissionDenied, ""},
	"cannot_scale_already_rescaling_cluster": {provider.KindBusy, ""},
}

// classify maps a client error to a provider error: by Civo's code where
// the driver knows it, else by the status. field names the spec field a
// validation error is about ("" takes the code's, or guesses it from
// Civo's reason).
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
	if ae.Details != "" {
		reason += " (" + provider.FirstLine(ae.Details) + ")"
	}
	if reason == "" {
		reason = http.StatusText(ae.Status)
	}
	e := &provider.Error{Kind: provider.KindOfStatus(ae.Status), Provider: platform, Reason: reason, Err: err, Code: ae.Code}
	if ck, ok := codeKinds[ae.Code]; ok {
		e.Kind = ck.kind
		if field == "" {
			field = ck.field
		}
	}
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
	case provider.KindQuota:
		e.Field = field
	}
	if (ae.Status == http.StatusRequestEntityTooLarge || ae.Status == http.StatusUnprocessableEntity) && e.Kind != provider.KindQuota && e.Kind != provider.KindCapacity {
		// Too large or unprocessable: the spec, on the code's field if
		// Civo named one.
		e.Kind = provider.KindValidation
		if e.Field == "" {
			e.Field = "spec"
		}
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

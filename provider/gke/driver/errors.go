package driver

import (
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode"

	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"

	"github.com/kpool/kpool/provider"
)

// googleBody is Google's error body.
type googleBody struct {
	Error struct {
		Code    int               `json:"code"`
		Message string            `json:"message"`
		Status  string            `json:"status"`
		Details []json.RawMessage `json:"details"`
	} `json:"error"`
}

// detail is the part of a google.rpc detail the driver reads: a
// RetryInfo's delay, a BadRequest's fields.
type detail struct {
	Type            string `json:"@type"`
	Reason          string `json:"reason"`
	RetryDelay      string `json:"retryDelay"`
	FieldViolations []struct {
		Field string `json:"field"`
	} `json:"fieldViolations"`
}

// poolMissing reports whether err says the node pool does not exist (a
// missing cluster says so of the cluster, which is not the pool's
// absence).
func poolMissing(err error) bool {
	var ge *googleapi.Error
	return errors.As(err, &ge) && ge.Code == http.StatusNotFound && strings.Contains(ge.Message, "/nodePools/")
}

// classify maps a client error to a provider error. field names the spec
// field a validation error is about ("" reads it from the error).
func classify(err error, field string) error {
	if e, ok := provider.Refused(platform, err); ok {
		return e
	}
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		return classifyUnanswered(err)
	}
	var body googleBody
	_ = json.Unmarshal([]byte(ge.Body), &body)
	status := body.Error.Status
	msg := ge.Message
	if msg == "" {
		msg = body.Error.Message
	}
	reason := strings.TrimSpace(status + ": " + msg)
	e := &provider.Error{Kind: provider.KindOfStatus(ge.Code), Provider: platform, Reason: provider.FirstLine(reason), Err: err, Code: status}
	switch {
	case status == "FAILED_PRECONDITION":
		// Another operation holds the cluster or pool (GKE runs one
		// node-pool operation at a time: OPERATION_IN_PROGRESS).
		e.Kind = provider.KindBusy
	case status == "ABORTED":
		// It changed since read.
		e.Kind = provider.KindTransient
	case status == "ALREADY_EXISTS":
		e.Kind = provider.KindAlreadyExists
	case status == "RESOURCE_EXHAUSTED" && ge.Code != http.StatusTooManyRequests:
		e.Kind = provider.KindThrottled // the request rate: wait and retry
	}
	fields := readDetails(body, e)
	if overQuota(ge.Code, msg) {
		e.Kind = provider.KindQuota
	}
	if code := stockoutCode(msg); code != "" {
		// A zone out of capacity: neither the account's quota nor the
		// spec's fault.
		e.Kind, e.Code, e.Field = provider.KindCapacity, code, ""
		return e
	}
	switch e.Kind {
	case provider.KindQuota:
		// Nodes and CPUs are the pool's count; a limit of pools is no field's.
		e.Field = "spec.nodeCount"
		if strings.Contains(msg, "node pools") {
			e.Field = "spec"
		}
	case provider.KindThrottled, provider.KindTransient, provider.KindBusy:
		if e.RetryAfter == 0 {
			e.RetryAfter = provider.RetryAfterHeader(ge.Header, time.Now())
		}
		if e.Kind == provider.KindThrottled && e.RetryAfter == 0 {
			e.RetryAfter = time.Second
		}
	case provider.KindValidation:
		e.Field = field
		if e.Field == "" {
			e.Field = "spec"
			for _, f := range fields {
				if sf := specField(f); sf != "" {
					e.Field = sf
					break
				}
			}
			if e.Field == "spec" && unofferedMachine.MatchString(msg) {
				e.Field = "spec.platform.gcp.machineType"
			}
		}
	}
	return e
}

// readDetails applies an error's google.rpc details to e (a quota
// failure, a retry delay) and returns the fields its BadRequest names.
func readDetails(body googleBody, e *provider.Error) []string {
	var fields []string
	for _, raw := range body.Error.Details {
		var d detail
		if json.Unmarshal(raw, &d) != nil {
			continue
		}
		if d.Type == quotaFailure || d.Reason == "QUOTA_EXCEEDED" {
			e.Kind = provider.KindQuota
		}
		if d.RetryDelay != "" {
			if delay, err := time.ParseDuration(d.RetryDelay); err == nil && delay > 0 {
				e.RetryAfter = delay
			}
		}
		for _, f := range d.FieldViolations {
			fields = append(fields, f.Field)
		}
	}
	return fields
}

// classifyUnanswered maps an error of a call the GKE API did not answer:
// the OAuth2 token endpoint refused or failed, no token could be had, or
// the request got no answer.
func classifyUnanswered(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil {
		// The token endpoint answered: it refused the identity, or is
		// having a bad moment.
		e := &provider.Error{Kind: provider.KindPermissionDenied, Provider: platform, Reason: "the OAuth2 token endpoint refused: " + re.Response.Status, Err: err}
		switch s := re.Response.StatusCode; {
		case s == http.StatusTooManyRequests:
			e.Kind, e.RetryAfter = provider.KindThrottled, max(provider.RetryAfterHeader(re.Response.Header, time.Now()), time.Second)
		case s == http.StatusRequestTimeout || s >= 500:
			e.Kind = provider.KindTransient
		}
		return e
	}
	if tokenFailure(err) {
		return &provider.Error{Kind: provider.KindPermissionDenied, Provider: platform, Reason: "no OAuth2 token: " + provider.FirstLine(err.Error()), Err: err}
	}
	return provider.Unanswered(platform, "the GKE API", err)
}

// unofferedMachine is GKE's refusal of a machine type a pool's zone does
// not offer, which names no field (no BadRequest): 400 INVALID_ARGUMENT
// `Invalid machine type "e2-standard-4" in zone "us-central2-b":
// GCE_NOT_FOUND` (GKE's answer recorded in keras-team/kinetic#305).
var unofferedMachine = regexp.MustCompile(`^(INVALID_ARGUMENT: )?Invalid machine type "[^"]*" in zone "[^"]*"`)

// quotaFailure is the detail of Google's quota errors
// (https://cloud.google.com/apis/design/errors#error_details).
const quotaFailure = "type.googleapis.com/google.rpc.QuotaFailure"

// overQuota reports whether an answer is a quota or limit of the project
// or cluster rather than of the spec or the caller's rights: Compute
// Engine's quotas pass through GKE as 403 "Insufficient regional quota to
// satisfy request: resource "CPUS": ...", which is no permission.
func overQuota(code int, msg string) bool {
	return code == http.StatusForbidden && strings.Contains(strings.ToLower(msg), "quota")
}

// specField maps a request field GKE names (nodePool.config.diskType, or
// its proto path node_pool.config.disk_type) to the spec field it comes
// from.
func specField(f string) string {
	f = camel(f)
	f = strings.TrimPrefix(f, "nodePool.")
	f = strings.TrimPrefix(f, "config.")
	if i := strings.IndexAny(f, ".["); i >= 0 {
		f = f[:i]
	}
	return map[string]string{
		"machineType": "spec.platform.gcp.machineType", "diskSizeGb": "spec.platform.gcp.diskSize", "diskType": "spec.platform.gcp.diskType",
		"accelerators": "spec.platform.gcp.accelerators", "spot": "spec.platform.gcp.preemptible", "preemptible": "spec.platform.gcp.preemptible",
		"locations": "spec.zones", "initialNodeCount": "spec.nodeCount", "nodeCount": "spec.nodeCount", "autoscaling": "spec.autoscaling",
		"version": "spec.kubernetesVersion", "nodeVersion": "spec.kubernetesVersion", "labels": "spec.labels", "taints": "spec.taints",
		"resourceLabels": "spec.tags", "name": "provider_name", "upgradeSettings": "spec.updateStrategy",
	}[f]
}

// tokenFailure reports whether err is the token source's (an OAuth2
// token endpoint that refused, or no Application Default Credentials).
func tokenFailure(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "oauth2: ") || strings.Contains(msg, "could not find default credentials")
}

// camel turns a proto path's names into their lowerCamelCase JSON names:
// node_pool.config.disk_size_gb is nodePool.config.diskSizeGb.
func camel(f string) string {
	var b strings.Builder
	up := false
	for _, r := range f {
		switch {
		case r == '_':
			up = true
		case up:
			b.WriteRune(unicode.ToUpper(r))
			up = false
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

package civo

import (
	"fmt"
	"net/http"

	"github.com/kpool/kpool/cloudsim/sim"
)

// Civo's error codes, each in civogo's errors.go table (code -> typed
// error). Those marked "kpool" are not: the emulator's own names for
// answers whose code Civo does not document.
const (
	codeAuthentication   = "authentication_invalid_key"
	codeAccessDenied     = "authentication_access_denied"
	codeRegionNotFound   = "database_region_not_found" // not in civogo's table; recorded in civo/cli#329
	codeClusterNotFound  = "database_kubernetes_cluster_not_found"
	codePoolNotFound     = "database_cluster_pool_not_found"
	codeInstanceNotFound = "database_cluster_pool_instance_not_found"
	codeSizeNotFound     = "database_size_not_found"
	codeSizeMissing      = "parameter_size_missing"
	codeLabelInvalid     = "parameter_label_invalid"
	codeNameInvalid      = "parameter_name_invalid"
	codeQuota            = "quota_limit_reached"
	codeBusy             = "cannot_scale_already_rescaling_cluster"
	codeAppNotFound      = "database_kubernetes_application_not_found"
	codeParameterInvalid = "parameter_invalid"               // kpool
	codeDuplicate        = "database_cluster_pool_duplicate" // kpool
	codeRateLimit        = "rate_limit_exceeded"             // kpool
)

// The reasons Civo gives, where an answer was recorded (civogo's typed
// errors carry the reason as their message).
const (
	// civo/cli#82: "DatabaseKubernetesClusterNotFound: Failed to find the
	// Kubernetes cluster in the internal database".
	reasonClusterNotFound = "Failed to find the Kubernetes cluster in the internal database"
	// civo/cli#329: 404 {"code":"database_region_not_found","reason":...}.
	reasonRegionNotFound = "Failed to find the region within the internal database"
	// civo/terraform-provider-civo#31: "DatabaseServiceNotFoundError:
	// Failed to find the size within the internal database".
	reasonSizeNotFound = "Failed to find the size within the internal database"
	// crossplane-contrib/provider-civo#9: "QuotaLimitReachedError: Failed
	// to perform this action due to a quota being at the limit".
	reasonQuota = "Failed to perform this action due to a quota being at the limit"
)

// apiError is Civo's error body (civogo's SimpleResponse: result, code,
// reason, details).
type apiError struct {
	Code    string `json:"code"`
	Reason  string `json:"reason"`
	Details string `json:"details,omitempty"`
}

// failf answers status with Civo's error body.
func failf(status int, code, format string, args ...any) *sim.Reply {
	return sim.JSON(status, "application/json; charset=utf-8", apiError{Code: code, Reason: fmt.Sprintf(format, args...)})
}

// detailed answers status with Civo's error body and its details, the
// part civogo appends to the reason (", details").
func detailed(status int, code, reason, details string) *sim.Reply {
	return sim.JSON(status, "application/json; charset=utf-8", apiError{Code: code, Reason: reason, Details: details})
}

// jsonReply answers v as JSON with status 200.
func jsonReply(v any) *sim.Reply {
	return sim.JSON(http.StatusOK, "application/json; charset=utf-8", v)
}

// success is civogo's SimpleResponse of a write that worked
// ({"result":"success"} in civogo's pool_test.go), with the id.
func success(id string) *sim.Reply {
	return jsonReply(map[string]string{"id": id, "result": "success"})
}

// page is a plain-text page: civo.com/api, "4xx/5xx status may not be
// JSON ... 404 Not Found pages are a standard page of text".
func page(status int, text string) *sim.Reply {
	rep := sim.NewReply(status)
	rep.Body = []byte(text + "\n")
	rep.Header.Set("Content-Type", "text/plain; charset=utf-8")
	return rep
}

func notEmulated(req *sim.Request) *sim.Reply {
	return page(http.StatusNotFound, fmt.Sprintf("Not Found (kpool cloudsim does not emulate %s %s)", req.HTTP.Method, req.HTTP.URL.EscapedPath()))
}

// codec words the engine's answers as Civo's API does.
type codec struct{}

func (codec) Throttled(*sim.Request, int) *sim.Reply {
	return failf(http.StatusTooManyRequests, codeRateLimit, "Too many requests, please slow down")
}

func (codec) BodyTooLarge(*sim.Request) *sim.Reply {
	return failf(http.StatusRequestEntityTooLarge, codeParameterInvalid, "The request body is larger than %d bytes", sim.MaxBody)
}

func (codec) BadBody(_ *sim.Request, err error) *sim.Reply {
	return failf(http.StatusBadRequest, codeParameterInvalid, "The request body could not be read: %v", err)
}

// Fault answers an injected fault: a 500 is the JSON body civogo's
// decodeError tells by its "status" (Rails' {"status":500,"error":...}),
// a 503 the plain page of the proxy in front of the API.
func (codec) Fault(_ *sim.Request, kind string) *sim.Reply {
	if kind == sim.Fault503 {
		return page(http.StatusServiceUnavailable, "503 Service Temporarily Unavailable (fault injected by kpool cloudsim)")
	}
	return sim.JSON(http.StatusInternalServerError, "application/json; charset=utf-8",
		map[string]any{"status": http.StatusInternalServerError, "error": "Internal Server Error (fault injected by kpool cloudsim)"})
}

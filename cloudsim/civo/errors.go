package civo

import (
	"fmt"
	"net/http"

	"github.com/kpool/kpool/cloudsim/sim"
)

// Civo's error codes, as civogo's errors.go decodes them (code -> typed
// error). Those marked "kpool" are not in civogo's table: the emulator's
// own names for answers whose exact code Civo does not document.
const (
	codeAuthentication   = "authentication_invalid_key"
	codeClusterNotFound  = "database_kubernetes_cluster_not_found"
	codePoolNotFound     = "database_kubernetes_cluster_pool_not_found" // kpool
	codeSizeNotFound     = "database_size_not_found"
	codeSizeMissing      = "parameter_size_missing"
	codeLabelInvalid     = "parameter_label_invalid"
	codeNameInvalid      = "parameter_name_invalid"
	codeParameterInvalid = "parameter_invalid"                          // kpool
	codeDuplicate        = "database_kubernetes_cluster_pool_duplicate" // kpool
	codeBusy             = "cannot_scale_already_rescaling_cluster"
	codeRegionMissing    = "region_unavailable"
	codeRateLimit        = "rate_limit_exceeded" // kpool
	codeInternal         = "internal_server_error"
	codeUnavailable      = "service_unavailable" // kpool
	codeNotFound         = "not_found"           // kpool
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
	return sim.JSON(status, "application/json", apiError{Code: code, Reason: fmt.Sprintf(format, args...)})
}

// jsonReply answers v as JSON with status 200.
func jsonReply(v any) *sim.Reply { return sim.JSON(http.StatusOK, "application/json", v) }

// success is civogo's SimpleResponse of a write that worked.
func success(id string) *sim.Reply {
	return jsonReply(map[string]string{"id": id, "result": "success"})
}

// codec words the engine's answers in Civo's error body.
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

func (codec) Fault(_ *sim.Request, kind string) *sim.Reply {
	if kind == sim.Fault503 {
		return failf(http.StatusServiceUnavailable, codeUnavailable, "Service temporarily unavailable (fault injected by kpool cloudsim)")
	}
	return failf(http.StatusInternalServerError, codeInternal, "Internal server error (fault injected by kpool cloudsim)")
}

package eks

import (
	"fmt"
	"net/http"

	"github.com/kpool/kpool/cloudsim/sim"
)

// The error shapes of the EKS service model (com.amazonaws.eks, as
// aws-sdk-go-v2/service/eks v1.105 carries them): name and HTTP status.
// The SDK finds the shape from the X-Amzn-ErrorType header, as AWS's
// REST-JSON services send it, and reads message and the members below
// from the body.
const (
	errNotFound           = "ResourceNotFoundException"   // 404
	errInUse              = "ResourceInUseException"      // 409
	errInvalidParameter   = "InvalidParameterException"   // 400
	errInvalidRequest     = "InvalidRequestException"     // 400
	errThrottling         = "ThrottlingException"         // 429
	errServer             = "ServerException"             // 500
	errUnavailable        = "ServiceUnavailableException" // 503
	errAccessDenied       = "AccessDeniedException"       // 403
	errBadRequest         = "BadRequestException"         // 400, the tagging operations'
	errTagNotFound        = "NotFoundException"           // 404, the tagging operations'
	errResourceLimit      = "ResourceLimitExceededException"
	errMissingToken       = "MissingAuthenticationTokenException" // 403, AWS's front door, not in the EKS model
	errIncompleteSig      = "IncompleteSignatureException"        // 403
	errInvalidSignature   = "InvalidSignatureException"           // 403
	errUnrecognizedClient = "UnrecognizedClientException"         // 403
	errSerialization      = "SerializationException"              // 400
)

var statusOf = map[string]int{
	errNotFound: http.StatusNotFound, errInUse: http.StatusConflict, errInvalidParameter: http.StatusBadRequest,
	errInvalidRequest: http.StatusBadRequest, errThrottling: http.StatusTooManyRequests, errServer: http.StatusInternalServerError,
	errUnavailable: http.StatusServiceUnavailable, errAccessDenied: http.StatusForbidden, errBadRequest: http.StatusBadRequest,
	errTagNotFound: http.StatusNotFound, errResourceLimit: http.StatusBadRequest, errMissingToken: http.StatusForbidden,
	errIncompleteSig: http.StatusForbidden, errInvalidSignature: http.StatusForbidden, errUnrecognizedClient: http.StatusForbidden,
	errSerialization: http.StatusBadRequest,
}

// apiError is an EKS error body: the message, and the resource names the
// exception shapes carry (clusterName, nodegroupName).
type apiError struct {
	Message       string `json:"message"`
	ClusterName   string `json:"clusterName,omitempty"`
	NodegroupName string `json:"nodegroupName,omitempty"`
}

// fail answers the error shape code with its model's status.
func fail(code string, e apiError) *sim.Reply {
	status, ok := statusOf[code]
	if !ok {
		status = http.StatusBadRequest
	}
	rep := sim.JSON(status, "application/json", e)
	rep.Header.Set("X-Amzn-ErrorType", code+":http://internal.amazon.com/coral/com.amazonaws.eks/")
	return rep
}

// failf answers code with a formatted message.
func failf(code, format string, args ...any) *sim.Reply {
	return fail(code, apiError{Message: fmt.Sprintf(format, args...)})
}

// invalid answers InvalidParameterException about a node group.
func invalid(c *cluster, ng, format string, args ...any) *sim.Reply {
	e := apiError{Message: fmt.Sprintf(format, args...), NodegroupName: ng}
	if c != nil {
		e.ClusterName = c.name
	}
	return fail(errInvalidParameter, e)
}

// jsonReply answers v as JSON with status 200.
func jsonReply(v any) *sim.Reply { return sim.JSON(http.StatusOK, "application/json", v) }

func ngNotFound(c *cluster, name string) *sim.Reply {
	return fail(errNotFound, apiError{Message: "No node group found for name: " + name + ".", ClusterName: c.name, NodegroupName: name})
}

// codec words the engine's answers in EKS's error shapes.
type codec struct{}

func (codec) Throttled(*sim.Request, int) *sim.Reply { return failf(errThrottling, "Rate exceeded") }

func (codec) BodyTooLarge(*sim.Request) *sim.Reply {
	return failf(errSerialization, "The request body is larger than %d bytes.", sim.MaxBody)
}

func (codec) BadBody(_ *sim.Request, err error) *sim.Reply {
	return failf(errSerialization, "The request body could not be read: %v", err)
}

func (codec) Fault(_ *sim.Request, kind string) *sim.Reply {
	if kind == sim.Fault503 {
		return failf(errUnavailable, "Service is unavailable, please retry (fault injected by kpool cloudsim).")
	}
	return failf(errServer, "An internal error occurred (fault injected by kpool cloudsim).")
}

package eks

import (
	"fmt"
	"net/http"

	"github.com/kpool/kpool/cloudsim/sim"
)

// errorShape is an error shape of the EKS service model (com.amazonaws.eks,
// as aws-sdk-go-v2/service/eks v1.105 carries them): its name, which the
// SDK finds in the X-Amzn-ErrorType header as AWS's REST-JSON services
// send it, and its HTTP status. The SDK reads message and the members of
// apiError from the body.
type errorShape struct {
	name   string
	status int
}

var (
	errNotFound         = errorShape{"ResourceNotFoundException", http.StatusNotFound}
	errInUse            = errorShape{"ResourceInUseException", http.StatusConflict}
	errInvalidParameter = errorShape{"InvalidParameterException", http.StatusBadRequest}
	errInvalidRequest   = errorShape{"InvalidRequestException", http.StatusBadRequest}
	errResourceLimit    = errorShape{"ResourceLimitExceededException", http.StatusBadRequest}
	errThrottling       = errorShape{"ThrottlingException", http.StatusTooManyRequests}
	errServer           = errorShape{"ServerException", http.StatusInternalServerError}
	errUnavailable      = errorShape{"ServiceUnavailableException", http.StatusServiceUnavailable}
	// The tagging operations' own.
	errBadRequest    = errorShape{"BadRequestException", http.StatusBadRequest}
	errTagNotFound   = errorShape{"NotFoundException", http.StatusNotFound}
	errSerialization = errorShape{"SerializationException", http.StatusBadRequest}
	// AWS's front door's, not in the EKS model.
	errMissingToken       = errorShape{"MissingAuthenticationTokenException", http.StatusForbidden}
	errIncompleteSig      = errorShape{"IncompleteSignatureException", http.StatusForbidden}
	errInvalidSignature   = errorShape{"InvalidSignatureException", http.StatusForbidden}
	errUnrecognizedClient = errorShape{"UnrecognizedClientException", http.StatusForbidden}
)

// apiError is an EKS error body: the message, and the resource names the
// exception shapes carry (clusterName, nodegroupName).
type apiError struct {
	Message       string `json:"message"`
	ClusterName   string `json:"clusterName,omitempty"`
	NodegroupName string `json:"nodegroupName,omitempty"`
}

// fail answers the error shape code with its model's status.
func fail(code errorShape, e apiError) *sim.Reply {
	rep := sim.JSON(code.status, "application/json", e)
	rep.Header.Set("X-Amzn-ErrorType", code.name+":http://internal.amazon.com/coral/com.amazonaws.eks/")
	return rep
}

// failf answers code with a formatted message.
func failf(code errorShape, format string, args ...any) *sim.Reply {
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

func (codec) Throttled(req *sim.Request, _ int) *sim.Reply {
	if isEC2(req.HTTP) {
		return ec2Fail(http.StatusServiceUnavailable, "RequestLimitExceeded", "Request limit exceeded.")
	}
	return failf(errThrottling, "Rate exceeded")
}

func (codec) BodyTooLarge(*sim.Request) *sim.Reply {
	return failf(errSerialization, "The request body is larger than %d bytes.", sim.MaxBody)
}

func (codec) BadBody(_ *sim.Request, err error) *sim.Reply {
	return failf(errSerialization, "The request body could not be read: %v", err)
}

func (codec) Fault(req *sim.Request, kind string) *sim.Reply {
	switch {
	case isEC2(req.HTTP) && kind == sim.Fault503:
		return ec2Fail(http.StatusServiceUnavailable, "Unavailable", "The server is overloaded (fault injected by kpool cloudsim).")
	case isEC2(req.HTTP):
		return ec2Fail(http.StatusInternalServerError, "InternalError", "An internal error has occurred (fault injected by kpool cloudsim).")
	}
	if kind == sim.Fault503 {
		return failf(errUnavailable, "Service is unavailable, please retry (fault injected by kpool cloudsim).")
	}
	return failf(errServer, "An internal error occurred (fault injected by kpool cloudsim).")
}

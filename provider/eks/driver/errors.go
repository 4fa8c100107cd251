package driver

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/smithy-go"

	"github.com/kpool/kpool/provider"
)

// identity marks the errors of the credentials provider it wraps
// (provider.CredentialError), so that classify tells them from the
// service's.
type identity struct{ inner aws.CredentialsProvider }

func (i identity) Retrieve(ctx context.Context) (aws.Credentials, error) {
	c, err := i.inner.Retrieve(ctx)
	if err != nil {
		return c, &provider.CredentialError{Err: err}
	}
	return c, nil
}

// retryable says which failures the SDK tries again: 500, 502, 503, 504,
// a connection dropped or refused, a try timed out. Never a refused host,
// a credential's error, throttling or any other answer.
func retryable(err error) aws.Ternary {
	var ce *provider.CredentialError
	if provider.IsRefusedHost(err) || errors.As(err, &ce) {
		return aws.FalseTernary
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		switch re.HTTPStatusCode() {
		case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return aws.TrueTernary
		}
		return aws.FalseTernary
	}
	if t := (retry.RetryableConnectionError{}).IsErrorRetryable(err); t != aws.UnknownTernary {
		return t
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return aws.TrueTernary
	}
	return aws.FalseTernary
}

// The codes of AWS's front door that refuse the caller's identity.
var authCodes = map[string]bool{
	"AccessDeniedException": true, "UnrecognizedClientException": true, "InvalidSignatureException": true,
	"MissingAuthenticationTokenException": true, "IncompleteSignatureException": true, "ExpiredTokenException": true,
	"InvalidClientTokenId": true, "SignatureDoesNotMatch": true,
	// EC2's (the node groups' launch templates).
	"AuthFailure": true, "UnauthorizedOperation": true, "MissingAuthenticationToken": true, "IncompleteSignature": true,
}

// throttleWait is the Retry-After of a throttled call when EKS gives none
// (it never does): a second, the SDK's own first backoff for throttling.
const throttleWait = time.Second

// classify maps an SDK error to a provider error. field names the spec
// field a validation error is about ("" guesses it from EKS's message).
func classify(err error, field string) error {
	if e, ok := provider.Refused(platform, err); ok {
		return e
	}
	var ce *provider.CredentialError
	if errors.As(err, &ce) {
		kind := provider.KindPermissionDenied
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			kind = provider.KindTransient
		}
		return &provider.Error{Kind: kind, Provider: platform, Reason: "no usable AWS credential: " + provider.FirstLine(ce.Err.Error()), Err: err}
	}
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return provider.Unanswered(platform, "EKS", err)
	}
	status := 0
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	if status >= 300 && status < 400 {
		// A redirect the client did not follow (a POST's body cannot be
		// sent again, so http.Client hands the answer back): refused as
		// every redirect is, never retried.
		return provider.ValidationError(platform, "spec.endpoint", "the endpoint answered %d, a redirect, which kpool does not follow: point spec.endpoint at the API itself", status)
	}
	code := ae.ErrorCode()
	reason := code
	if msg := ae.ErrorMessage(); msg != "" {
		reason += ": " + provider.FirstLine(msg)
	}
	e := &provider.Error{Provider: platform, Reason: reason, Err: err, Code: code}
	if re != nil {
		e.RequestID = re.ServiceRequestID()
	}
	var (
		throttled *types.ThrottlingException
		notFound  *types.ResourceNotFoundException
		inUse     *types.ResourceInUseException
		badParam  *types.InvalidParameterException
		badReq    *types.InvalidRequestException
		server    *types.ServerException
		limit     *types.ResourceLimitExceededException
	)
	switch {
	case errors.As(err, &limit):
		// EKS's service quotas (node groups per cluster, nodes per node
		// group): not the spec's fault, but the account's; retried
		// slowly, until the quota is raised or a pool goes.
		e.Kind, e.Field = provider.KindQuota, field
		if e.Field == "" {
			e.Field = provider.FieldOf(reason, fieldWords)
		}
	case errors.As(err, &throttled) || status == http.StatusTooManyRequests || code == "RequestLimitExceeded":
		e.Kind, e.RetryAfter = provider.KindThrottled, throttleWait
		if re != nil && re.Response != nil {
			if d := provider.RetryAfterHeader(re.Response.Header, time.Now()); d > 0 {
				e.RetryAfter = d
			}
		}
	case authCodes[code] || status == http.StatusForbidden || status == http.StatusUnauthorized:
		e.Kind = provider.KindPermissionDenied
	case errors.As(err, &notFound) || status == http.StatusNotFound:
		e.Kind = provider.KindNotFound
	case errors.As(err, &inUse):
		// Another update holds the node group: try again once it ends.
		e.Kind = provider.KindBusy
	case errors.As(err, &badParam), errors.As(err, &badReq), status == http.StatusBadRequest:
		e.Kind, e.Field = provider.KindValidation, field
		if e.Field == "" {
			e.Field = provider.FieldOf(reason, fieldWords)
		}
	case errors.As(err, &server):
		e.Kind = provider.KindTransient
	default:
		e.Kind = provider.KindOfStatus(status)
	}
	return e
}

// nodegroupMissing reports whether err says the node group does not
// exist, as opposed to its cluster: EKS names the node group in the
// exception when it is the one missing.
func nodegroupMissing(err error) bool {
	var nf *types.ResourceNotFoundException
	if !errors.As(err, &nf) {
		return false
	}
	if nf.NodegroupName != nil {
		return *nf.NodegroupName != ""
	}
	return strings.Contains(strings.ToLower(nf.ErrorMessage()), "node group") || strings.Contains(strings.ToLower(nf.ErrorMessage()), "nodegroup")
}

// fieldWords are the words of EKS's validation messages, with the spec
// field each is about.
var fieldWords = []provider.FieldWord{
	{Word: "maxunavailable", Field: "spec.updateStrategy.maxUnavailable"}, // updateConfig's; before "version" ("a version update")
	{Word: "instance type", Field: "spec.platform.aws.instanceType"}, {Word: "instancetypes", Field: "spec.platform.aws.instanceType"},
	{Word: "capacitytype", Field: "spec.platform.aws.spotInstances"}, {Word: "disksize", Field: "spec.platform.aws.volumeSize"},
	{Word: "subnet", Field: "spec.zones"}, {Word: "taint", Field: "spec.taints"}, {Word: "label", Field: "spec.labels"}, {Word: "tags", Field: "spec.tags"},
	{Word: "release version", Field: "spec.kubernetesVersion"}, {Word: "version", Field: "spec.kubernetesVersion"},
	{Word: "minimum capacity", Field: "spec.autoscaling.minNodes"}, {Word: "maximum capacity", Field: "spec.autoscaling.maxNodes"},
	{Word: "desired capacity", Field: "spec.nodeCount"}, {Word: "noderole", Field: "spec.platform.aws.nodeRoleArn"}, {Word: "role", Field: "spec.platform.aws.nodeRoleArn"},
	{Word: "amitype", Field: "spec.platform.aws"}, {Word: "nodegroup name", Field: "provider_name"},
}

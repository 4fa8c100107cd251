package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/aks"
)

// credential marks the errors of the credential it wraps
// (provider.CredentialError), so that classify can tell an identity outage
// (transient) from a refused identity.
// A failure after the wire refused one of its token requests (to another
// origin than its authority, a redirect) is that refusal: azidentity
// keeps only the text of its transport's errors.
type credential struct {
	inner    azcore.TokenCredential
	refusals *provider.Refusals // of its token requests; nil: none sent through the driver
}

func (c credential) GetToken(ctx context.Context, o policy.TokenRequestOptions) (azcore.AccessToken, error) {
	tk, err := c.inner.GetToken(ctx, o)
	if err != nil {
		if rh := c.refusals.Take(); rh != nil && !provider.IsRefusedHost(err) {
			err = rh
		}
		return tk, &provider.CredentialError{Err: err}
	}
	return tk, nil
}

// errPlainHTTP is what azcore answers when asked to send a bearer token
// over plain HTTP; it never sends it, so retrying is pointless.
const errPlainHTTP = "non-TLS protected (https) endpoints"

// classify maps an SDK error to a provider error. field names the spec
// field a validation error is about ("" guesses it from ARM's message).
func classify(err error, field string) error {
	if e, ok := provider.Refused(platform, err); ok {
		return e
	}
	var ce *provider.CredentialError
	if errors.As(err, &ce) {
		return classifyToken(ce.Err)
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		switch {
		case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
			// A tarpit, or the caller gave up: ARM may answer next time.
			return &provider.Error{Kind: provider.KindTransient, Provider: platform, Reason: "no answer from ARM in time: " + err.Error(), Err: err}
		case strings.Contains(err.Error(), errPlainHTTP):
			return provider.ValidationError(platform, "spec.endpoint", "ARM must be reached over https: the Azure SDK sends no credentials over plain http")
		}
		return &provider.Error{Kind: provider.KindTransient, Provider: platform, Reason: "calling ARM: " + provider.FirstLine(err.Error()), Err: err}
	}
	reason := re.ErrorCode
	if msg := armMessage(re); msg != "" {
		reason += ": " + msg
	}
	e := &provider.Error{Kind: provider.KindOfStatus(re.StatusCode), Provider: platform, Reason: reason, Err: err, Code: re.ErrorCode}
	if re.RawResponse != nil {
		e.RequestID = re.RawResponse.Header.Get("x-ms-request-id")
	}
	switch {
	case quotaError(re.ErrorCode, reason):
		e.Kind = provider.KindQuota
	case capacityCodes[re.ErrorCode]:
		e.Kind = provider.KindCapacity // shortage.go
	case re.StatusCode == http.StatusConflict && re.ErrorCode == "OperationNotAllowed" && strings.Contains(strings.ToLower(reason), "in progress"):
		// Another operation runs on the agent pool or cluster.
		e.Kind = provider.KindBusy
	}
	switch e.Kind {
	case provider.KindThrottled, provider.KindTransient, provider.KindBusy:
		if re.RawResponse != nil {
			e.RetryAfter = provider.RetryAfterHeader(re.RawResponse.Header, time.Now())
		}
	case provider.KindValidation:
		e.Field = field
		if e.Field == "" {
			e.Field = provider.FieldOf(reason, fieldWords)
		}
	case provider.KindQuota:
		// vCPUs are the pool's nodes; a limit of agent pools is no field's.
		e.Field = "spec.nodeCount"
		if strings.Contains(strings.ToLower(reason), "agent pools") {
			e.Field = "spec"
		}
	}
	return e
}

// quotaCodes are the codes of ARM's answers that say a quota or limit
// of the subscription or the cluster is reached, not that the spec is
// wrong: AKS's own vCPU check (ErrCode_InsufficientVCPUQuota, earlier
// InsufficientVCPUQuota), and Compute's and ARM's (QuotaExceeded). They
// are KindQuota, tried again slowly, whatever their status (AKS answers
// 400, which alone would say "invalid spec").
var quotaCodes = map[string]bool{
	"ErrCode_InsufficientVCPUQuota": true, "InsufficientVCPUQuota": true, "QuotaExceeded": true,
	"ErrCode_InsufficientQuota": true, "SubscriptionQuotaExceeded": true,
}

// quotaError reports whether an ARM error is a quota or limit: one of
// quotaCodes, or OperationNotAllowed whose message says a quota is
// exceeded or reached (Compute's "Operation could not be completed as it
// results in exceeding approved standardDSv5Family Cores quota", AKS's
// limit of agent pools per cluster). Other OperationNotAllowed answers
// (an operation in progress, the last System pool) are not.
func quotaError(code, reason string) bool {
	if quotaCodes[code] {
		return true
	}
	msg := strings.ToLower(reason)
	return code == "OperationNotAllowed" && strings.Contains(msg, "quota") &&
		(strings.Contains(msg, "exceed") || strings.Contains(msg, "reached"))
}

// classifyToken maps a credential's error. The token endpoint refusing
// the identity (400 unknown tenant, 401 bad secret, 403) is permission
// denied; the endpoint being unreachable, slow, throttling or answering
// 5xx is an outage, transient like ARM's own.
func classifyToken(err error) error {
	msg := err.Error()
	var af *azidentity.AuthenticationFailedError
	if errors.As(err, &af) && af.RawResponse != nil {
		msg = tokenReason(af)
	}
	deny := func(why string) error {
		return &provider.Error{Kind: provider.KindPermissionDenied, Provider: platform, Reason: why + ": " + provider.FirstLine(msg), Err: err}
	}
	outage := &provider.Error{Kind: provider.KindTransient, Provider: platform, Reason: "the Azure token endpoint is unavailable: " + provider.FirstLine(msg), Err: err}
	if af != nil && af.RawResponse != nil {
		switch s := af.RawResponse.StatusCode; {
		case s == http.StatusTooManyRequests:
			outage.Kind = provider.KindThrottled
			outage.RetryAfter = provider.RetryAfterHeader(af.RawResponse.Header, time.Now())
			return outage
		case s == http.StatusRequestTimeout || s >= 500:
			outage.RetryAfter = provider.RetryAfterHeader(af.RawResponse.Header, time.Now())
			return outage
		}
		return deny("Azure refused the credential")
	}
	switch {
	case af != nil:
		// Authentication failed with no answer: the endpoint was not reached.
		return outage
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled), unreachable(err.Error()):
		return outage
	}
	// A credential that is unavailable for want of configuration.
	return deny("no usable Azure credential")
}

// unreachable reports whether a credential's message (credential-
// unavailable errors carry only a message) says its token endpoint could
// not be reached or failed, rather than that it is not configured.
func unreachable(msg string) bool {
	msg = strings.ToLower(msg)
	for _, s := range []string{"no response", "connection refused", "connection reset", "timeout", "timed out",
		"deadline exceeded", "no such host", "dial tcp", "eof", "unexpected response \"5", "status code 5", "503", "502", "504", "500 "} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// tokenReason is the token endpoint's status and error_description.
func tokenReason(af *azidentity.AuthenticationFailedError) string {
	out := af.RawResponse.Status
	if body, err := runtime.Payload(af.RawResponse); err == nil {
		var b struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		if json.Unmarshal(body, &b) == nil && b.Error+b.Description != "" {
			out += ": " + strings.TrimSpace(b.Error+" "+b.Description)
		}
	}
	return provider.FirstLine(out)
}

// armMessage reads the message of an ARM error body.
func armMessage(re *azcore.ResponseError) string {
	if re.RawResponse == nil {
		return ""
	}
	body, err := runtime.Payload(re.RawResponse)
	if err != nil {
		return ""
	}
	var b struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &b) != nil {
		return ""
	}
	return b.Error.Message
}

// fieldWords are the agent-pool properties ARM's validation messages
// name ('vmSize', properties.vmSize), with the spec field each comes from.
var fieldWords = func() []provider.FieldWord {
	var out []provider.FieldWord
	for _, f := range []struct{ prop, field string }{
		{"vmSize", "spec.platform.azure.vmSize"}, {"availabilityZones", "spec.zones"}, {"osDiskSizeGB", "spec.platform.azure.osDiskSizeGB"},
		{"osDiskType", "spec.platform.azure.osDiskType"}, {"scaleSetPriority", "spec.platform.azure.spotInstances"},
		{"count", "spec.nodeCount"}, {"minCount", "spec.autoscaling.minNodes"}, {"maxCount", "spec.autoscaling.maxNodes"},
		{"orchestratorVersion", "spec.kubernetesVersion"}, {"nodeTaints", "spec.taints"}, {"nodeLabels", "spec.labels"},
		{"upgradeSettings.maxSurge", "spec.updateStrategy.maxSurge"}, {"upgradeSettings.drainTimeoutInMinutes", "spec.updateStrategy.drainTimeout"},
		{"upgradeSettings.nodeSoakDurationInMinutes", "spec.updateStrategy.soak"},
	} {
		prop := strings.ToLower(f.prop)
		out = append(out, provider.FieldWord{Word: "'" + prop + "'", Field: f.field}, provider.FieldWord{Word: "properties." + prop, Field: f.field})
	}
	// AKS's own wordings that name no property: a version the control
	// plane's does not allow (NodePoolMcVersionIncompatible, "Node pool
	// version 1.31.0 and control plane version 1.30.4 are incompatible"),
	// the last System pool made a User pool, a VM size the location does
	// not offer the subscription (BadRequest, "The VM size of
	// AgentPoolProfile:gpu is not allowed in your subscription in location
	// 'westeurope'", or "The VM size of Standard_B2s is not allowed …") and
	// a zone the size is not offered in
	// (AvailabilityZoneNotSupported, "The zone(s) '3' for resource 'gpu' is
	// not supported").
	// upgradeSettings' properties, however the message names their parent.
	out = append(out, provider.FieldWord{Word: "maxsurge", Field: "spec.updateStrategy.maxSurge"},
		provider.FieldWord{Word: "draintimeoutinminutes", Field: "spec.updateStrategy.drainTimeout"},
		provider.FieldWord{Word: "nodesoakdurationinminutes", Field: "spec.updateStrategy.soak"})
	return append(out, provider.FieldWord{Word: "nodepoolmcversionincompatible", Field: "spec.kubernetesVersion"},
		provider.FieldWord{Word: "at least one system agent pool", Field: "spec.mode"},
		provider.FieldWord{Word: "is not allowed in your subscription in location", Field: "spec.platform.azure.vmSize"},
		provider.FieldWord{Word: "availabilityzonenotsupported", Field: "spec.zones"})
}()

// defaultCredential is the identity of credentials of kind default:
// azidentity's DefaultAzureCredential (tests replace it).
var defaultCredential = func() (azcore.TokenCredential, error) { return azidentity.NewDefaultAzureCredential(nil) }

// token returns the Azure identity of a credential, made once.
func (d *Driver) token(cr *provider.Credential) (azcore.TokenCredential, error) {
	return d.tokens.Load(cr.Name, func() (azcore.TokenCredential, error) { return d.newToken(cr) })
}

// newToken makes the Azure identity of a credential, its errors marked
// (credential).
func (d *Driver) newToken(cr *provider.Credential) (azcore.TokenCredential, error) {
	var tc azcore.TokenCredential
	var err error
	var refusals *provider.Refusals
	switch cr.Kind {
	case provider.CredentialDefault:
		tc, err = defaultCredential()
	case provider.CredentialEmulator:
		tc, err = provider.IdentityOf[azcore.TokenCredential](cr)
	case aks.CredentialClientSecret:
		refusals = &provider.Refusals{}
		tc, err = d.clientSecret(cr, refusals)
	default:
		err = fmt.Errorf("kind %q is not an Azure credential kind", cr.Kind)
	}
	if err != nil {
		return nil, &provider.Error{Kind: provider.KindPermissionDenied, Provider: platform, Reason: "no Azure credential " + cr.Name + ": " + err.Error(), Err: err}
	}
	return credential{inner: tc, refusals: refusals}, nil
}

// clientSecret is the identity of a client-secret credential. The secret
// goes to the credential's authority (Entra ID's public one unless the
// operator names another), and nowhere else: not to ARM, nor where the
// authority redirects.
func (d *Driver) clientSecret(cr *provider.Credential, refusals *provider.Refusals) (azcore.TokenCredential, error) {
	secret, err := cr.Secret()
	if err != nil {
		return nil, err
	}
	authority := cloud.AzurePublic.ActiveDirectoryAuthorityHost
	o := &azidentity.ClientSecretCredentialOptions{}
	if host := aks.AuthorityHost(cr); host != "" {
		authority = host
		o.Cloud.ActiveDirectoryAuthorityHost = host
		o.DisableInstanceDiscovery = true // no call to the public cloud's discovery
	}
	o.Transport = provider.NewTokenGuard(cr, authority, d.opts.Transport, refusals)
	return azidentity.NewClientSecretCredential(cr.Settings["tenantId"], cr.Settings["clientId"], secret, o)
}

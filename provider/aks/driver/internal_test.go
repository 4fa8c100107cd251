package driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

func response(status int, header http.Header, body string) *http.Response {
	if header == nil {
		header = http.Header{}
	}
	req, _ := http.NewRequest(http.MethodGet, "https://login.example/tenant/oauth2/v2.0/token", nil)
	return &http.Response{StatusCode: status, Status: http.StatusText(status), Header: header, Body: io.NopCloser(strings.NewReader(body)), Request: req}
}

// fromToken wraps err as it reaches classify from a credential: marked by
// the driver's credential, then wrapped by azcore's bearer-token policy.
func fromToken(err error) error {
	return fmt.Errorf("bearer token policy: %w", &provider.CredentialError{Err: err})
}

func armError(status int, code, msg string, header http.Header) error {
	resp := response(status, header, fmt.Sprintf(`{"error":{"code":%q,"message":%q}}`, code, msg))
	return &azcore.ResponseError{StatusCode: status, ErrorCode: code, RawResponse: resp}
}

func TestClassify(t *testing.T) {
	retry := http.Header{"Retry-After": {"7"}}
	for _, tc := range []struct {
		name       string
		err        error
		kind       provider.Kind
		field      string
		retryAfter time.Duration
	}{
		{"token endpoint 401, bad client secret", fromToken(&azidentity.AuthenticationFailedError{RawResponse: response(401, nil,
			`{"error":"invalid_client","error_description":"AADSTS7000215: Invalid client secret provided."}`)}), provider.KindPermissionDenied, "", 0},
		{"token endpoint 400, unknown tenant", fromToken(&azidentity.AuthenticationFailedError{RawResponse: response(400, nil,
			`{"error":"invalid_request","error_description":"AADSTS90002: Tenant not found."}`)}), provider.KindPermissionDenied, "", 0},
		{"token endpoint 403", fromToken(&azidentity.AuthenticationFailedError{RawResponse: response(403, nil, "")}), provider.KindPermissionDenied, "", 0},
		{"token endpoint 500", fromToken(&azidentity.AuthenticationFailedError{RawResponse: response(500, nil, "")}), provider.KindTransient, "", 0},
		{"token endpoint 503 with Retry-After", fromToken(&azidentity.AuthenticationFailedError{RawResponse: response(503, retry, "")}), provider.KindTransient, "", 7 * time.Second},
		{"token endpoint 504", fromToken(&azidentity.AuthenticationFailedError{RawResponse: response(504, nil, "")}), provider.KindTransient, "", 0},
		{"token endpoint 408", fromToken(&azidentity.AuthenticationFailedError{RawResponse: response(408, nil, "")}), provider.KindTransient, "", 0},
		{"token endpoint 429", fromToken(&azidentity.AuthenticationFailedError{RawResponse: response(429, retry, "")}), provider.KindThrottled, "", 7 * time.Second},
		{"token endpoint unreachable (no response)", fromToken(&azidentity.AuthenticationFailedError{}), provider.KindTransient, "", 0},
		{"credential unavailable: IMDS timed out", fromToken(azidentity.NewCredentialUnavailableError(
			"ManagedIdentityCredential: managed identity timed out. See https://aka.ms/azsdk/go/identity/troubleshoot#dac")), provider.KindTransient, "", 0},
		{"credential unavailable: connection refused", fromToken(azidentity.NewCredentialUnavailableError(
			`ManagedIdentityCredential: Get "http://169.254.169.254/metadata/identity/oauth2/token": dial tcp 169.254.169.254:80: connect: connection refused`)), provider.KindTransient, "", 0},
		{"credential unavailable: 503 from IMDS", fromToken(azidentity.NewCredentialUnavailableError(
			`ManagedIdentityCredential: unexpected response "503 Service Unavailable"`)), provider.KindTransient, "", 0},
		{"credential unavailable: not configured", fromToken(azidentity.NewCredentialUnavailableError(
			"EnvironmentCredential: missing environment variable AZURE_TENANT_ID")), provider.KindPermissionDenied, "", 0},
		{"credential: deadline", fromToken(context.DeadlineExceeded), provider.KindTransient, "", 0},
		{"ARM over plain http", errors.New("authorized requests are not permitted for non-TLS protected (https) endpoints"), provider.KindValidation, "spec.endpoint", 0},
		{"ARM tarpit", fmt.Errorf("Get \"https://127.0.0.1/x\": %w", context.DeadlineExceeded), provider.KindTransient, "", 0},
		{"ARM dropped connection", errors.New(`Get "https://127.0.0.1/x": EOF`), provider.KindTransient, "", 0},
		{"ARM 400 on count", armError(400, "InvalidParameter", "The value of parameter properties.count is invalid", nil), provider.KindValidation, "spec.nodeCount", 0},
		{"AKS VM size not offered", armError(400, "BadRequest",
			"The VM size of AgentPoolProfile:gpu is not allowed in your subscription in location 'westeurope'.  For more details, please visit https://aka.ms/aks/quotas-skus-regions", nil),
			provider.KindValidation, "spec.platform.azure.vmSize", 0},
		{"AKS VM size not offered, naming the size", armError(400, "BadRequest",
			"The VM size of Standard_B2s is not allowed in your subscription in location 'westus2'. The available VM sizes are 'standard_d16pds_v5,standard_d2ps_v5'", nil),
			provider.KindValidation, "spec.platform.azure.vmSize", 0},
		{"Compute SKU not available for capacity", armError(409, "SkuNotAvailable",
			"The requested VM size for resource 'Following SKUs have failed for Capacity Restrictions: Standard_B2s' is currently not available in location 'eastus'. "+
				"Please try another size or deploy to a different location or different zone. See https://aka.ms/azureskunotavailable for details.", nil),
			provider.KindCapacity, "", 0},
		{"zonal allocation failed, answered at once", armError(400, "ZonalAllocationFailed",
			"Allocation failed. We do not have sufficient capacity for the requested VM size in this zone.", nil), provider.KindCapacity, "", 0},
		{"AKS zone not offered", armError(400, "AvailabilityZoneNotSupported",
			"The zone(s) '1' for resource 'linuxpool' is not supported. The supported zones for location 'eastus2' are '2'", nil),
			provider.KindValidation, "spec.zones", 0},
		{"ARM 401", armError(401, "InvalidAuthenticationToken", "The access token is invalid.", nil), provider.KindPermissionDenied, "", 0},
		{"ARM 404", armError(404, "ResourceNotFound", "not found", nil), provider.KindNotFound, "", 0},
		{"ARM 409, operation in progress", armError(409, "OperationNotAllowed", "in progress", nil), provider.KindBusy, "", 0},
		{"ARM 429", armError(429, "TooManyRequests", "throttled", retry), provider.KindThrottled, "", 7 * time.Second},
		{"AKS vCPU quota", armError(400, "ErrCode_InsufficientVCPUQuota",
			"Insufficient vcpu quota requested 2, remaining 0 for family StandardDasv7Family for region eastus. Surge nodes would also consume vcpu quota.", nil), provider.KindQuota, "spec.nodeCount", 0},
		{"AKS vCPU quota, older code", armError(400, "InsufficientVCPUQuota", "Insufficient regional vcpu quota left", nil), provider.KindQuota, "spec.nodeCount", 0},
		{"ARM QuotaExceeded", armError(400, "QuotaExceeded", "Operation results in exceeding quota limits of Core. Maximum allowed: 10, Current in use: 10, Additional requested: 2.", nil), provider.KindQuota, "spec.nodeCount", 0},
		{"Compute cores quota", armError(400, "OperationNotAllowed", "Operation could not be completed as it results in exceeding approved standardDSv5Family Cores quota. Current Limit: 10, Current Usage: 8, Additional Required: 4", nil), provider.KindQuota, "spec.nodeCount", 0},
		{"AKS agent pool count", armError(400, "OperationNotAllowed", "Managed cluster 'c' already has the maximum of 100 agent pools: the agent pool count quota is reached.", nil), provider.KindQuota, "spec", 0},
		{"the last System pool is no quota", armError(400, "OperationNotAllowed", "There has to be at least one system agent pool.", nil), provider.KindValidation, "spec.mode", 0},
		{"AKS version skew", armError(400, "NodePoolMcVersionIncompatible", "Node pool version 1.33.3 and control plane version 1.33.2 are incompatible. "+
			"Patch version of node pool version 3 is bigger than control plane version 2. For more information, please check https://aka.ms/aks/nodepoolmcversionincompatible", nil),
			provider.KindValidation, "spec.kubernetesVersion", 0},
		{"ARM 503", armError(503, "ServiceUnavailable", "try later", retry), provider.KindTransient, "", 7 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := classify(tc.err, "")
			var e *provider.Error
			if !errors.As(err, &e) {
				t.Fatalf("%v is not a provider error", err)
			}
			if e.Kind != tc.kind || e.Field != tc.field || e.RetryAfter != tc.retryAfter {
				t.Fatalf("got kind %q field %q retry after %v, want %q %q %v (%v)", e.Kind, e.Field, e.RetryAfter, tc.kind, tc.field, tc.retryAfter, err)
			}
			if strings.Contains(e.Reason, "\n") {
				t.Fatalf("reason spans lines: %q", e.Reason)
			}
		})
	}
}

type noToken struct{}

func (noToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{}, errors.New("no token in this test")
}

// TestClientCacheBounded: clusters in ever new subscriptions and endpoints
// (both chosen by users) do not grow the driver's clients without bound.
func TestClientCacheBounded(t *testing.T) {
	var eps []string
	for i := range 7 {
		eps = append(eps, fmt.Sprintf("https://arm%d.example", i))
	}
	set, err := provider.DefaultCredentials([]provider.Profile{profile}, eps)
	if err != nil {
		t.Fatal(err)
	}
	old := defaultCredential
	defaultCredential = func() (azcore.TokenCredential, error) { return noToken{}, nil }
	t.Cleanup(func() { defaultCredential = old })
	d := New(provider.DriverOptions{Credentials: set})
	for i := range 3 * provider.CacheSize {
		c := &kpool.Cluster{Name: "c", Spec: kpool.ClusterSpec{
			Endpoint: fmt.Sprintf("https://arm%d.example", i%7),
			Platform: kpool.ClusterPlatform{Type: kpool.PlatformAzure, Azure: &kpool.AzureCluster{
				SubscriptionID: fmt.Sprintf("00000000-0000-0000-0000-%012d", i), ResourceGroup: "rg", ClusterName: "aks"}},
		}}
		if _, _, err := d.client(c); err != nil {
			t.Fatal(err)
		}
		d.started(c, "pool", response(http.StatusOK, http.Header{"Azure-Asyncoperation": {"https://arm.example/op"}}, ""))
	}
	if n := d.clients.Len(); n != provider.CacheSize {
		t.Fatalf("%d clients cached, want %d", n, provider.CacheSize)
	}
	if n := d.ops.Len(); n != provider.CacheSize {
		t.Fatalf("%d operations kept, want %d", n, provider.CacheSize)
	}
}

func TestState(t *testing.T) {
	for s, want := range map[string]provider.State{
		"Succeeded": provider.StateReady, "Failed": provider.StateFailed, "Canceled": provider.StateFailed,
		"Creating": provider.StateCreating, "Deleting": provider.StateDeleting,
		"Updating": provider.StateUpdating, "Scaling": provider.StateUpdating, "Upgrading": provider.StateUpdating,
		"UpgradingNodeImageVersion": provider.StateUpdating, "Starting": provider.StateUpdating, "Stopping": provider.StateUpdating,
		"Canceling": provider.StateUpdating, "Migrating": provider.StateUpdating, "Reconciling": provider.StateUpdating,
		"Accepted": provider.StateUpdating, "Repairing": provider.StateUpdating,
		"": provider.StateUnknown, "Weird": provider.StateUnknown,
	} {
		if got := state(s); got != want {
			t.Errorf("state(%q) = %s, want %s", s, got, want)
		}
	}
}

// TestObserveProgress: what a pool's provisioning and power states say of
// its nodes. Only a running, provisioned pool has a known ready count
// above 0; a stopped one has 0, known; any other is unknown, not 0.
func TestObserveProgress(t *testing.T) {
	zones := []*string{ptr.To("1"), ptr.To("2")}
	for _, tc := range []struct {
		prov, power string
		state       provider.State
		ready       int
		unknown     bool
		message     string
		byZone      bool
	}{
		{"Succeeded", "Running", provider.StateReady, 5, false, "", true},
		{"Succeeded", "", provider.StateReady, 5, false, "", true},
		{"Succeeded", "Stopped", provider.StateUnknown, 0, false, "is stopped", false},
		{"Scaling", "Running", provider.StateUpdating, 0, true, "", false},
		{"Updating", "Running", provider.StateUpdating, 0, true, "", false},
		{"Upgrading", "Running", provider.StateUpdating, 0, true, "", false},
		{"Starting", "Running", provider.StateUpdating, 0, true, "", false},
		{"Stopping", "Stopped", provider.StateUpdating, 0, true, "", false},
		{"Creating", "Running", provider.StateCreating, 0, true, "", false},
		{"Deleting", "Running", provider.StateDeleting, 0, true, "", false},
		{"Failed", "Running", provider.StateFailed, 0, true, "", false},
		{"Canceled", "Running", provider.StateFailed, 0, true, "was canceled", false},
	} {
		t.Run(tc.prov+"/"+tc.power, func(t *testing.T) {
			pr := &armProps{ProvisioningState: ptr.To(tc.prov), Count: ptr.To(int32(5)), AvailabilityZones: zones}
			if tc.power != "" {
				pr.PowerState = &armPower{Code: ptr.To(armCode(tc.power))}
			}
			p := observe(&armPool{Name: ptr.To("web"), Properties: pr})
			if p.State != tc.state || p.ReadyNodes != tc.ready || p.ReadyUnknown != tc.unknown || p.Nodes != 5 || (p.NodesByZone != nil) != tc.byZone {
				t.Fatalf("state %s ready %d unknown %v nodes %d by zone %v", p.State, p.ReadyNodes, p.ReadyUnknown, p.Nodes, p.NodesByZone)
			}
			if !strings.Contains(p.Message, tc.message) || (tc.message == "") != (p.Message == "") {
				t.Fatalf("message %q, want %q", p.Message, tc.message)
			}
		})
	}
}

type (
	armPool  = armcontainerservice.AgentPool
	armProps = armcontainerservice.ManagedClusterAgentPoolProfileProperties
	armPower = armcontainerservice.PowerState
	armCode  = armcontainerservice.Code
)

// TestProvisioningErrors reads properties.status.provisioningError
// (ErrorDetail) from a list page as AKS sends it from api-version
// 2025-05-01, which armcontainerservice v6 does not decode.
func TestProvisioningErrors(t *testing.T) {
	page := `{"value":[
	 {"name":"Web","properties":{"provisioningState":"Failed","status":{"provisioningError":{"code":"ReconcileVMSSAgentPoolFailed",
	   "message":"could not allocate","details":[{"code":"AllocationFailed","message":"Allocation failed."},{"code":"ZonalAllocationFailed","message":"zone 2"}]}}}},
	 {"name":"ok","properties":{"provisioningState":"Succeeded","status":{}}},
	 {"name":"old","properties":{"provisioningState":"Failed"}}]}`
	got := provisioningErrors(response(http.StatusOK, nil, page))
	want := "ReconcileVMSSAgentPoolFailed: could not allocate (AllocationFailed: Allocation failed.; ZonalAllocationFailed: zone 2)"
	if len(got) != 1 || got["web"].String() != want {
		t.Fatalf("got %q", got)
	}
	if got := provisioningErrors(response(http.StatusOK, nil, "not json")); len(got) != 0 {
		t.Fatalf("from garbage: %q", got)
	}
}

// TestZonesIn reads the zones an allocation error names, as logical zones.
func TestZonesIn(t *testing.T) {
	c := &kpool.Cluster{Spec: kpool.ClusterSpec{Platform: kpool.ClusterPlatform{Type: kpool.PlatformAzure,
		Azure: &kpool.AzureCluster{Location: "westeurope"}}}}
	for _, tc := range []struct {
		msg  string
		want []string
	}{
		{"We do not have sufficient capacity for the requested VM size Standard_D4s_v5 in zone '2'. Read more", []string{"2"}},
		{"Allocation failed. VM(s) of size Standard_D4s_v5 in zones '1', '3' with the following constraints", []string{"1", "3"}},
		{"We do not have sufficient capacity for the requested VM size in this zone.", nil},
		{"the requested VM size in this region", nil},
	} {
		if got := zonesIn(c, tc.msg); !slices.Equal(got, tc.want) {
			t.Errorf("%q: got %v, want %v", tc.msg, got, tc.want)
		}
	}
}

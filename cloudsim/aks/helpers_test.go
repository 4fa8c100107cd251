package aks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/aks"
	"github.com/kpool/kpool/cloudsim/sim"
)

const (
	sub     = "0b1f6471-1bf0-4dda-aec3-111122223333"
	group   = "rg-prod"
	cluster = "aks-prod"
	token   = "test-token"
)

var (
	ctx   = context.Background()
	start = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
)

// staticToken is a credential that always returns the same token.
type staticToken string

func (t staticToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: string(t), ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// ticking is a transport that moves the clock forward before each request,
// so that a poller's loop sees simulated time pass without sleeping.
type ticking struct {
	next  policy.Transporter
	clock *sim.ManualClock
	step  time.Duration
}

func (t ticking) Do(req *http.Request) (*http.Response, error) {
	t.clock.Advance(t.step)
	return t.next.Do(req)
}

// env is an emulator on a loopback TLS port and SDK clients of it.
type env struct {
	t      *testing.T
	clock  *sim.ManualClock
	sim    *aks.Server
	ep     *sim.TLSEndpoint
	http   *http.Client
	pools  *armcontainerservice.AgentPoolsClient
	opts   aks.Options
	caPEM  []byte
	client func(cred azcore.TokenCredential, transport policy.Transporter) *armcontainerservice.AgentPoolsClient
}

func newEnv(t *testing.T, o aks.Options) *env {
	t.Helper()
	clock := sim.NewManualClock(start)
	if o.Engine.Clock == nil {
		o.Engine.Clock = clock
	}
	if o.Engine.OperationTime == 0 {
		o.Engine.OperationTime = 30 * time.Second
	}
	if o.Engine.NodeTime == 0 {
		o.Engine.NodeTime = 10 * time.Second
	}
	emu := aks.New(o)
	emu.AddCluster(sub, group, cluster, "westeurope", "1.30.4")
	ep, caPEM, err := sim.TLSServer(emu, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ep.Close() })
	e := &env{t: t, clock: clock, sim: emu, ep: ep, http: ep.Client(), opts: o, caPEM: caPEM}
	e.client = func(cred azcore.TokenCredential, transport policy.Transporter) *armcontainerservice.AgentPoolsClient {
		cl, err := armcontainerservice.NewAgentPoolsClient(sub, cred, clientOptions(ep.URL, transport))
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	e.pools = e.client(staticToken(token), e.http)
	return e
}

func clientOptions(endpoint string, transport policy.Transporter) *arm.ClientOptions {
	return &arm.ClientOptions{ClientOptions: policy.ClientOptions{
		Cloud: cloud.Configuration{Services: map[cloud.ServiceName]cloud.ServiceConfiguration{
			cloud.ResourceManager: {Endpoint: endpoint, Audience: "https://management.core.windows.net/"},
		}},
		Transport: transport,
		Retry:     policy.RetryOptions{MaxRetries: -1},
	}}
}

// poolPath is the ARM path of a pool.
func poolPath(name string) string {
	return "/subscriptions/" + sub + "/resourceGroups/" + group + "/providers/Microsoft.ContainerService/managedClusters/" + cluster + "/agentPools/" + name
}

// raw sends a request with the test token (unless a header overrides it)
// and returns the response with its body read.
func (e *env) raw(method, target string, body any, header map[string]string) (*http.Response, []byte) {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	if !strings.HasPrefix(target, "https://") {
		target = e.ep.URL + target
	}
	req, err := http.NewRequest(method, target, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := e.http.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp, b
}

type (
	pollerOf     = runtime.Poller[armcontainerservice.AgentPoolsClientCreateOrUpdateResponse]
	deletePoller = runtime.Poller[armcontainerservice.AgentPoolsClientDeleteResponse]
)

// create starts a create with the SDK and returns its poller.
func (e *env) create(name string, pr *armcontainerservice.ManagedClusterAgentPoolProfileProperties) *pollerOf {
	e.t.Helper()
	p, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, name, armcontainerservice.AgentPool{Properties: pr}, nil)
	if err != nil {
		e.t.Fatalf("create %s: %v", name, err)
	}
	return p
}

// settle lets every operation finish.
func (e *env) settle() { e.clock.Advance(24 * time.Hour) }

// state returns a pool as the emulator has it, failing the test if missing.
func (e *env) state(name string) aks.PoolState {
	e.t.Helper()
	st, ok := e.sim.Pool(sub, group, cluster, name)
	if !ok {
		e.t.Fatalf("pool %s does not exist", name)
	}
	return st
}

// get reads a pool with the SDK.
func (e *env) get(name string) armcontainerservice.AgentPool {
	e.t.Helper()
	r, err := e.pools.Get(ctx, group, cluster, name, nil)
	if err != nil {
		e.t.Fatalf("get %s: %v", name, err)
	}
	return r.AgentPool
}

// responseError returns err as an *azcore.ResponseError or fails.
func responseError(t *testing.T, err error) *azcore.ResponseError {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("error %v (%T) is not an *azcore.ResponseError", err, err)
	}
	return re
}

// wantError checks that err is an ARM error with status and code.
func wantError(t *testing.T, err error, status int, code string) *azcore.ResponseError {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want %d %s", status, code)
	}
	re := responseError(t, err)
	if re.StatusCode != status || re.ErrorCode != code {
		t.Fatalf("error %d %s; want %d %s (%v)", re.StatusCode, re.ErrorCode, status, code, err)
	}
	return re
}

// armErrorOf decodes an ARM error body.
func armErrorOf(t *testing.T, body []byte) (code, message string) {
	t.Helper()
	var b struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(body, &b); err != nil || b.Error.Code == "" {
		t.Fatalf("not an ARM error body: %s", body)
	}
	return b.Error.Code, b.Error.Message
}

// basic returns the properties of a small Linux user pool.
func basic(count int32) *armcontainerservice.ManagedClusterAgentPoolProfileProperties {
	return &armcontainerservice.ManagedClusterAgentPoolProfileProperties{
		VMSize: ptr.To("Standard_D4s_v5"),
		Count:  ptr.To(count),
	}
}

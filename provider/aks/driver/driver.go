// Package driver is the AKS driver: kpool node pools as AKS agent pools,
// through the official SDK (armcontainerservice/v6 AgentPoolsClient). What
// kpool knows of AKS without the SDK is its profile, package aks.
package driver

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/aks"
)

const platform = aks.Type

var profile = aks.Profile{}

// Options configure the driver.
type Options struct {
	// Credentials say which of the operator's credentials each cluster
	// uses, for which subscriptions, and the hosts it may be sent to. Nil
	// means provider.DefaultCredentials(nil): the default chain, any
	// subscription, public ARM only.
	Credentials provider.Credentials
	// Credential is the identity of credentials of kind "default". Nil
	// means azidentity's DefaultAzureCredential (environment, workload
	// identity, managed identity, Azure CLI), made when first needed.
	Credential azcore.TokenCredential
	// Transport sends the HTTP requests, to ARM and to a client-secret
	// credential's authority; nil is http.DefaultTransport. Set it to trust
	// the certificate of an endpoint the system does not. An *http.Client
	// gives its Transport (the driver follows no redirect); any other
	// Transporter must send the one request it is given.
	Transport policy.Transporter
	// Retry is how the SDK times out and retries a call; nil is Retry().
	Retry *policy.RetryOptions
	// ListRetry is the same for the pages of a list after the first; nil
	// is ListRetry(). The first page is retried as one call is (Retry).
	ListRetry *policy.RetryOptions
}

// Retry returns the driver's SDK retry options for one call: no try
// outlives TryTimeout (a tarpit cannot hold a call for ever), and a
// failure a retry may cure (408, 500, 502, 503, 504, a dropped
// connection, a try timed out) is retried twice, quickly. 429 is not
// retried here, nor an answer whose Retry-After exceeds MaxRetryDelay:
// throttling and asked-for waits go back to kpool's controllers, which
// back off and honour Retry-After without holding a worker. Agent-pool
// calls are GET, PUT and DELETE, all idempotent.
func Retry() policy.RetryOptions {
	return policy.RetryOptions{
		MaxRetries:    2,
		TryTimeout:    30 * time.Second,
		RetryDelay:    100 * time.Millisecond,
		MaxRetryDelay: 500 * time.Millisecond,
		StatusCodes: []int{http.StatusRequestTimeout, http.StatusInternalServerError, http.StatusBadGateway,
			http.StatusServiceUnavailable, http.StatusGatewayTimeout},
	}
}

// ListRetry returns Retry() for the pages of a list after the first, but
// honouring a Retry-After of up to 2 s: a list that fails on a later page
// starts again from the first, so a 40-page list would rarely end if one
// 503 of ARM's ended it. The first page is retried as one call is: nothing
// is lost by handing its wait back to the controllers, which do not hold
// a slot while they wait.
func ListRetry() policy.RetryOptions {
	o := Retry()
	o.MaxRetryDelay = 2 * time.Second
	return o
}

// cacheSize bounds the driver's caches: clients by subscription and
// endpoint, operations by pool. Both keys are chosen by users.
const cacheSize = 256

// Driver is the AKS driver.
type Driver struct {
	opts             Options
	retry, listRetry policy.RetryOptions

	creds provider.Credentials

	mu      sync.Mutex
	tokens  map[string]azcore.TokenCredential // by credential name, wrapped in credential
	clients *lru[*clients]
	ops     *lru[*opRecord]
}

// clients are what the driver calls one subscription's ARM endpoint with.
type clients struct {
	pools *armcontainerservice.AgentPoolsClient
	// pl sends the requests the generated client has no method for (an
	// operation's status), with the same credential, retries and transport.
	pl runtime.Pipeline
}

// New returns an AKS driver.
func New(o Options) *Driver {
	d := &Driver{opts: o, retry: Retry(), listRetry: ListRetry(), clients: newLRU[*clients](cacheSize), ops: newLRU[*opRecord](cacheSize)}
	if o.Retry != nil {
		d.retry = *o.Retry
	}
	if o.ListRetry != nil {
		d.listRetry = *o.ListRetry
	}
	d.tokens = map[string]azcore.TokenCredential{}
	d.creds = provider.CredentialsOr(o.Credentials, profile)
	return d
}

var _ provider.Driver = (*Driver)(nil)

// Capabilities returns AKS's capabilities.
func (d *Driver) Capabilities() provider.Capabilities { return profile.Capabilities() }

// client returns the clients of a cluster's credential, subscription and
// ARM endpoint (the public cloud's unless the cluster names another). The
// credential must allow both: a cluster that names another host or
// subscription is refused here, before any request, and every request is
// checked again at the wire (provider.Guard).
func (d *Driver) client(c *kpool.Cluster) (*clients, *kpool.AzureCluster, error) {
	a := c.Spec.Platform.Azure
	if a == nil {
		return nil, nil, provider.ValidationError(platform, "spec.platform.azure", "cluster %s has no azure settings", c.Name)
	}
	if e := c.Spec.Endpoint; e != "" {
		u, err := url.Parse(e)
		switch {
		case err != nil || u.Host == "":
			return nil, nil, provider.ValidationError(platform, "spec.endpoint", "%q is not an absolute URL", e)
		case !strings.EqualFold(u.Scheme, "https"):
			// azcore refuses to send a bearer token over plain http:
			// every call would fail, so say so once, as a spec error.
			return nil, nil, provider.ValidationError(platform, "spec.endpoint", "%q: ARM must be reached over https (the Azure SDK sends no credentials over %s)", e, u.Scheme)
		}
	}
	cr, err := d.creds.Resolve(c)
	if err != nil {
		return nil, nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	key := cr.Name + " " + a.SubscriptionID + " " + c.Spec.Endpoint
	if cs, ok := d.clients.get(key); ok {
		return cs, a, nil
	}
	tc, err := d.token(cr)
	if err != nil {
		return nil, nil, err
	}
	cfg := cloud.AzurePublic
	if c.Spec.Endpoint != "" {
		cfg.Services = map[cloud.ServiceName]cloud.ServiceConfiguration{
			cloud.ResourceManager: {Endpoint: c.Spec.Endpoint, Audience: cloud.AzurePublic.Services[cloud.ResourceManager].Audience},
		}
	}
	// Every request, the SDK's retries and operation URLs included, passes
	// the wire's check, and no redirect is followed (provider.Guard).
	opts := &arm.ClientOptions{ClientOptions: policy.ClientOptions{Cloud: cfg, Retry: d.retry,
		Transport: provider.NewGuard(cr, 0, provider.RoundTripperOf(d.opts.Transport))}}
	pools, err := armcontainerservice.NewAgentPoolsClient(a.SubscriptionID, tc, opts)
	if err != nil {
		return nil, nil, classify(err, "")
	}
	ac, err := arm.NewClient("kpool/aks", "v1.0.0", tc, opts)
	if err != nil {
		return nil, nil, classify(err, "")
	}
	cs := &clients{pools: pools, pl: ac.Pipeline()}
	d.clients.put(key, cs)
	return cs, a, nil
}

// NodePoolList lists the cluster's agent pools.
func (d *Driver) NodePoolList(ctx context.Context, c *kpool.Cluster) ([]provider.Pool, error) {
	cs, a, err := d.client(c)
	if err != nil {
		return nil, err
	}
	var out []provider.Pool
	pager := cs.pools.NewListPager(a.ResourceGroup, a.ClusterName, nil)
	pageCtx := policy.WithRetryOptions(ctx, d.retry)
	for first := true; pager.More(); first = false {
		if !first {
			pageCtx = policy.WithRetryOptions(ctx, d.listRetry)
		}
		var raw *http.Response
		page, err := pager.NextPage(runtime.WithCaptureResponse(pageCtx, &raw))
		if err != nil {
			return nil, classify(err, "")
		}
		reasons := provisioningErrors(raw)
		for _, ap := range page.Value {
			if ap == nil {
				continue
			}
			p := observe(ap)
			if p.State == provider.StateFailed {
				d.explain(ctx, cs, opKey(c, p.ProviderName), &p, reasons[strings.ToLower(p.ProviderName)])
			}
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProviderName < out[j].ProviderName })
	return out, nil
}

// get reads one agent pool; a missing one is (nil, nil).
func get(ctx context.Context, cl *clients, a *kpool.AzureCluster, name string) (*armcontainerservice.AgentPool, error) {
	resp, err := cl.pools.Get(ctx, a.ResourceGroup, a.ClusterName, name, nil)
	if err != nil {
		if poolMissing(err) {
			return nil, nil
		}
		return nil, classify(err, "")
	}
	return &resp.AgentPool, nil
}

// poolMissing reports whether err says the agent pool does not exist, as
// opposed to its cluster, resource group or subscription.
func poolMissing(err error) bool {
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusNotFound {
		return false
	}
	switch re.ErrorCode {
	case "ParentResourceNotFound", "ResourceGroupNotFound", "SubscriptionNotFound":
		return false
	}
	return true
}

// NodePoolCreate creates an agent pool, or returns the existing one when it
// already matches.
func (d *Driver) NodePoolCreate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	if !aks.Names.Match(s.ProviderName) {
		return nil, provider.ValidationError(platform, "provider_name", "%q is not an AKS agent pool name: 1-12 lowercase letters and digits, starting with a letter", s.ProviderName)
	}
	cs, a, err := d.client(c)
	if err != nil {
		return nil, err
	}
	existing, err := get(ctx, cs, a, s.ProviderName)
	if err != nil {
		return nil, err
	}
	if existing != nil {
		return adopt(existing, s)
	}
	// Create only: two creates racing cannot both write the pool.
	return d.put(ctx, c, cs, a, s, properties(s), &armcontainerservice.AgentPoolsClientBeginCreateOrUpdateOptions{IfNoneMatch: to("*")})
}

// put sends an agent pool and returns it as AKS accepted it, without
// waiting for the operation. A failed precondition (the pool appeared, or
// changed, since it was read) is transient: list again. The operation's
// status URL is kept, to tell why it failed if it does.
func (d *Driver) put(ctx context.Context, c *kpool.Cluster, cl *clients, a *kpool.AzureCluster, s provider.PoolSpec,
	props *armcontainerservice.ManagedClusterAgentPoolProfileProperties, opts *armcontainerservice.AgentPoolsClientBeginCreateOrUpdateOptions) (*provider.Pool, error) {
	var raw *http.Response
	_, err := cl.pools.BeginCreateOrUpdate(runtime.WithCaptureResponse(ctx, &raw), a.ResourceGroup, a.ClusterName, s.ProviderName,
		armcontainerservice.AgentPool{Properties: props}, opts)
	if err != nil {
		var re *azcore.ResponseError
		if errors.As(err, &re) && re.StatusCode == http.StatusPreconditionFailed {
			return nil, &provider.Error{Kind: provider.KindTransient, Provider: platform, Reason: "agent pool " + s.ProviderName + " was written concurrently; list again", Err: err}
		}
		return nil, classify(err, "")
	}
	d.started(c, s.ProviderName, raw)
	return accepted(raw, s)
}

// NodePoolUpdate changes an agent pool's mutable settings: count or
// autoscaler bounds, labels, taints, tags, mode and version, and writes
// the spec's owner's mark on a pool that has none. The placement labels
// stay as the pool has them; with autoscaling on, the count stays the
// autoscaler's. A pool another owner marked is refused (KindForeign).
func (d *Driver) NodePoolUpdate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	cs, a, err := d.client(c)
	if err != nil {
		return nil, err
	}
	existing, err := get(ctx, cs, a, s.ProviderName)
	if err != nil {
		return nil, err
	}
	if existing == nil {
		return nil, &provider.Error{Kind: provider.KindNotFound, Provider: platform, Reason: "agent pool " + s.ProviderName + " not found"}
	}
	if err := immutable(existing, s); err != nil {
		return nil, err
	}
	old := existing.Properties
	if old == nil {
		old = &armcontainerservice.ManagedClusterAgentPoolProfileProperties{}
	}
	observed := observe(existing)
	// The PUT below carries the If-Match of the pool read here: a mark
	// written meanwhile fails it, and the next pass reads it.
	if s.Owner, err = provider.Remark(platform, s.ProviderName, observed.Owner, s.Owner); err != nil {
		return nil, err
	}
	labels := make(map[string]string, len(s.Labels))
	for k, v := range s.Labels {
		labels[k] = v
	}
	s.Labels = labels // the caller's map stays as it was
	for _, k := range []string{provider.LabelPool, provider.LabelZone} {
		if v, ok := observed.Labels[k]; ok {
			s.Labels[k] = v
		} else {
			delete(s.Labels, k)
		}
	}
	want := properties(s)
	next := *old // keep what kpool does not manage
	next.EnableAutoScaling, next.MinCount, next.MaxCount = want.EnableAutoScaling, want.MinCount, want.MaxCount
	next.Count = want.Count
	if s.Autoscaling && old.Count != nil {
		n := min(max(int(*old.Count), s.MinCount), s.MaxCount)
		next.Count = to(int32(n))
	}
	next.NodeLabels, next.NodeTaints, next.Tags, next.Mode = want.NodeLabels, want.NodeTaints, want.Tags, want.Mode
	if want.OrchestratorVersion != nil {
		next.OrchestratorVersion = want.OrchestratorVersion
	}
	// Read-only properties are not sent back.
	next.ProvisioningState, next.CurrentOrchestratorVersion, next.NodeImageVersion, next.ETag, next.PowerState = nil, nil, nil, nil, nil
	var opts *armcontainerservice.AgentPoolsClientBeginCreateOrUpdateOptions
	if old.ETag != nil {
		opts = &armcontainerservice.AgentPoolsClientBeginCreateOrUpdateOptions{IfMatch: old.ETag}
	}
	return d.put(ctx, c, cs, a, s, &next, opts)
}

// NodePoolDelete deletes an agent pool; a missing one is not an error.
func (d *Driver) NodePoolDelete(ctx context.Context, c *kpool.Cluster, providerName string) error {
	cs, a, err := d.client(c)
	if err != nil {
		return err
	}
	var raw *http.Response
	if _, err := cs.pools.BeginDelete(runtime.WithCaptureResponse(ctx, &raw), a.ResourceGroup, a.ClusterName, providerName, nil); err != nil {
		if poolMissing(err) {
			return nil
		}
		return classify(err, "")
	}
	d.started(c, providerName, raw)
	return nil
}

// Package driver is the AKS driver: kpool node pools as AKS agent pools,
// through the official SDK (armcontainerservice/v6 AgentPoolsClient). What
// kpool knows of AKS without the SDK is its profile, package aks.
package driver

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v6"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/aks"
)

const platform = aks.Type

var profile = aks.Profile{}

// Driver is the AKS driver.
type Driver struct {
	opts             provider.DriverOptions
	retry, listRetry policy.RetryOptions // opts.Retry as azcore takes it

	tokens  *provider.Cache[azcore.TokenCredential] // by credential name, wrapped in credential
	clients *provider.Cache[*clients]               // by credential, subscription and endpoint
	ops     *provider.Cache[*opRecord]              // by opKey

	mu sync.Mutex // held to read and write the records in ops
}

// clients are what the driver calls one subscription's ARM endpoint with.
type clients struct {
	pools *armcontainerservice.AgentPoolsClient
	// machines lists a pool's machines, the names deleteMachines takes.
	machines *armcontainerservice.MachinesClient
	// clusters and skus read the catalogues of ClusterFacts: the managed
	// cluster, and Compute's Resource SKUs of its location.
	clusters *armcontainerservice.ManagedClustersClient
	skus     *armcompute.ResourceSKUsClient
	// pl sends the requests the generated client has no method for (an
	// operation's status), with the same credential, retries and transport.
	pl runtime.Pipeline
}

// New returns an AKS driver. Credentials of kind default are
// azidentity's DefaultAzureCredential (environment, workload identity,
// managed identity, Azure CLI), made when first needed.
func New(o provider.DriverOptions) *Driver {
	o = o.For(profile)
	r := retryOptions(*o.Retry)
	return &Driver{opts: o, retry: r, listRetry: listRetryOptions(r),
		tokens: provider.NewCache[azcore.TokenCredential](provider.CacheSize), clients: provider.NewCache[*clients](provider.CacheSize),
		ops: provider.NewCache[*opRecord](provider.CacheSize)}
}

var _ provider.Driver = (*Driver)(nil)

// Capabilities returns AKS's capabilities.
func (d *Driver) Capabilities() provider.Capabilities { return profile.Capabilities() }

// retryOptions maps the driver's retries onto azcore's. 429 is not
// retried, nor an answer whose Retry-After exceeds MaxDelay: throttling
// and asked-for waits go back to kpool's controllers, which honour them
// without holding a worker. Agent-pool calls are GET, PUT and DELETE, all
// idempotent; the one POST, deleteMachines, is sent without retries
// (NodePoolRemoveNodes).
func retryOptions(r provider.Retry) policy.RetryOptions {
	return policy.RetryOptions{
		MaxRetries:    orNone(int32(r.Tries() - 1)),
		TryTimeout:    r.TryTimeout,
		RetryDelay:    orNone(r.Delay),
		MaxRetryDelay: orNone(r.MaxDelay),
		StatusCodes: []int{http.StatusRequestTimeout, http.StatusInternalServerError, http.StatusBadGateway,
			http.StatusServiceUnavailable, http.StatusGatewayTimeout},
	}
}

// orNone is v as azcore's retry options read it: azcore takes 0 for its
// own default and a negative value for none.
func orNone[T int32 | time.Duration](v T) T {
	if v == 0 {
		return -1
	}
	return v
}

// listRetryOptions are r for the pages of a list after the first: they
// honour a Retry-After four times as long (2 s by default), since a list
// that fails on a later page starts again from the first, and a 40-page
// list would rarely end if one 503 of ARM's ended it. The first page is
// retried as one call is: nothing is lost by handing its wait back to the
// controllers, which do not hold a slot while they wait.
func listRetryOptions(r policy.RetryOptions) policy.RetryOptions {
	if r.MaxRetryDelay > 0 {
		r.MaxRetryDelay *= 4
	}
	return r
}

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
	endpoint, err := provider.Endpoint(c, "", "ARM")
	if err != nil {
		return nil, nil, err
	}
	cr, err := d.opts.Credentials.Resolve(c)
	if err != nil {
		return nil, nil, err
	}
	cs, err := d.clients.Load(cr.Name+" "+a.SubscriptionID+" "+endpoint, func() (*clients, error) { return d.newClients(cr, a, endpoint) })
	return cs, a, err
}

// newClients makes the clients of a credential, subscription and endpoint.
func (d *Driver) newClients(cr *provider.Credential, a *kpool.AzureCluster, endpoint string) (*clients, error) {
	tc, err := d.token(cr)
	if err != nil {
		return nil, err
	}
	cfg := cloud.AzurePublic
	if endpoint != "" {
		cfg.Services = map[cloud.ServiceName]cloud.ServiceConfiguration{
			cloud.ResourceManager: {Endpoint: endpoint, Audience: cloud.AzurePublic.Services[cloud.ResourceManager].Audience},
		}
	}
	// Every request, the SDK's retries and operation URLs included, passes
	// the wire's check, and no redirect is followed (provider.Guard).
	opts := &arm.ClientOptions{ClientOptions: policy.ClientOptions{Cloud: cfg, Retry: d.retry,
		Transport: provider.NewGuard(cr, 0, d.opts.Transport)}}
	pools, err := armcontainerservice.NewAgentPoolsClient(a.SubscriptionID, tc, opts)
	if err != nil {
		return nil, classify(err, "")
	}
	mcs, err := armcontainerservice.NewManagedClustersClient(a.SubscriptionID, tc, opts)
	if err != nil {
		return nil, classify(err, "")
	}
	machines, err := armcontainerservice.NewMachinesClient(a.SubscriptionID, tc, opts)
	if err != nil {
		return nil, classify(err, "")
	}
	skus, err := armcompute.NewResourceSKUsClient(a.SubscriptionID, tc, opts)
	if err != nil {
		return nil, classify(err, "")
	}
	ac, err := arm.NewClient("kpool/aks", "v1.0.0", tc, opts)
	if err != nil {
		return nil, classify(err, "")
	}
	return &clients{pools: pools, machines: machines, clusters: mcs, skus: skus, pl: ac.Pipeline()}, nil
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
				failed := d.explain(ctx, cs, opKey(c, p.ProviderName), &p, reasons[strings.ToLower(p.ProviderName)])
				d.shortage(ctx, c, cs, a, &p, failed)
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
// already matches (provider.Adopt).
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
		p := observe(existing)
		return provider.Adopt(profile, s, &p)
	}
	// Create only: two creates racing cannot both write the pool.
	return d.put(ctx, c, cs, a, s, properties(s), &armcontainerservice.AgentPoolsClientBeginCreateOrUpdateOptions{IfNoneMatch: ptr.To("*")})
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
// autoscaler bounds, labels, taints, tags, mode, version and the
// upgradeSettings the spec's strategy sets, and writes
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
		return nil, provider.NotFoundError(platform, "agent pool", s.ProviderName)
	}
	observed := observe(existing)
	if err := provider.Refuse(profile, s, &observed); err != nil {
		return nil, err
	}
	// The PUT below carries the If-Match of the pool read here: a mark
	// written meanwhile fails it, and the next pass reads it.
	if s.Owner, err = provider.Remark(platform, s.ProviderName, observed.Owner, s.Owner); err != nil {
		return nil, err
	}
	s.Labels = provider.KeepPlacement(s.Labels, observed.Labels)
	next, opts := updated(existing.Properties, s)
	return d.put(ctx, c, cs, a, s, next, opts)
}

// updated is the agent pool an update sends: old, with what kpool manages
// from s, and the If-Match of old's eTag.
func updated(old *armcontainerservice.ManagedClusterAgentPoolProfileProperties, s provider.PoolSpec) (
	*armcontainerservice.ManagedClusterAgentPoolProfileProperties, *armcontainerservice.AgentPoolsClientBeginCreateOrUpdateOptions) {
	if old == nil {
		old = &armcontainerservice.ManagedClusterAgentPoolProfileProperties{}
	}
	want := properties(s)
	next := *old // keep what kpool does not manage
	next.EnableAutoScaling, next.MinCount, next.MaxCount = want.EnableAutoScaling, want.MinCount, want.MaxCount
	next.Count = want.Count
	if s.Autoscaling && old.Count != nil {
		n := min(max(int(*old.Count), s.MinCount), s.MaxCount)
		next.Count = ptr.To(int32(n))
	}
	next.NodeLabels, next.NodeTaints, next.Tags, next.Mode = want.NodeLabels, want.NodeTaints, want.Tags, want.Mode
	if want.OrchestratorVersion != nil {
		next.OrchestratorVersion = want.OrchestratorVersion
	}
	next.UpgradeSettings = upgradeSettings(old.UpgradeSettings, s.Upgrade)
	// Read-only properties are not sent back.
	next.ProvisioningState, next.CurrentOrchestratorVersion, next.NodeImageVersion, next.ETag, next.PowerState = nil, nil, nil, nil, nil
	var opts *armcontainerservice.AgentPoolsClientBeginCreateOrUpdateOptions
	if old.ETag != nil {
		opts = &armcontainerservice.AgentPoolsClientBeginCreateOrUpdateOptions{IfMatch: old.ETag}
	}
	return &next, opts
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

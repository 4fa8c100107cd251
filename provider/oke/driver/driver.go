// Package driver is the OKE driver: kpool node pools as OKE node pools,
// through Oracle's official SDK (oci-go-sdk/v65/containerengine). What
// kpool knows of OKE without the SDK is its profile, package oke.
package driver

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	"github.com/oracle/oci-go-sdk/v65/core"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/oke"
)

const platform = oke.Type

var profile = oke.Profile{}

// versionsFor is how long a cluster's node pool versions are kept.
const versionsFor = 10 * time.Minute

// Driver is the OKE driver.
type Driver struct {
	opts provider.DriverOptions

	clients  *provider.Cache[*ce.ContainerEngineClient] // by credential, region and endpoint
	computes *provider.Cache[*core.ComputeClient]       // likewise
	versions *provider.Cache[versionSet]                // by client key and cluster OCID
	failures *provider.Cache[string]                    // a failed work request's errors, by its OCID
	reads    *provider.Refresh[*ce.NodePool]            // the pools lists read, by cluster and OCID
}

type versionSet struct {
	list []string
	at   time.Time
}

// New returns an OKE driver. Credentials of kind default are
// common.DefaultConfigProvider(): the OCI config file (~/.oci/config) and
// the OCI_ environment variables, read when first needed, in each
// cluster's region. The SDK's own retry policy (eight tries over minutes,
// 409 and 429 included) and its circuit breaker are off: the driver's
// retries are provider.Retry's, and throttling and conflicts go back to
// kpool's controllers. Creates carry an opc-retry-token the SDK keeps
// across tries, so a retried create makes one pool.
func New(o provider.DriverOptions) *Driver {
	return &Driver{opts: o.For(profile),
		clients: provider.NewCache[*ce.ContainerEngineClient](provider.CacheSize), computes: provider.NewCache[*core.ComputeClient](provider.CacheSize), versions: provider.NewCache[versionSet](provider.CacheSize),
		failures: provider.NewCache[string](provider.CacheSize), reads: provider.NewRefresh[*ce.NodePool](provider.RefreshPools)}
}

var _ provider.Driver = (*Driver)(nil)

// Capabilities returns OKE's capabilities.
func (d *Driver) Capabilities() provider.Capabilities { return profile.Capabilities() }

// conn is a client for one cluster.
type conn struct {
	cl  *ce.ContainerEngineClient
	oci *kpool.OCICluster
	key string
	// cr and endpoint are the credential and the endpoint of the
	// cluster's calls, for its Compute client (computeClient).
	cr       *provider.Credential
	endpoint string
}

// client returns the Container Engine client of a cluster's credential,
// region and endpoint (the region's public one unless the cluster names
// another). The credential must allow both: a cluster that names another
// host or compartment is refused here, before any request, and every
// request is checked again at the wire (provider.Guard).
func (d *Driver) client(c *kpool.Cluster) (*conn, error) {
	o := c.Spec.Platform.OCI
	switch {
	case o == nil:
		return nil, provider.ValidationError(platform, "spec.platform.oci", "cluster %s has no oci settings", c.Name)
	case o.Region == "":
		return nil, provider.ValidationError(platform, "spec.platform.oci.region", "cluster %s names no region", c.Name)
	case o.CompartmentID == "":
		return nil, provider.ValidationError(platform, "spec.platform.oci.compartmentId", "cluster %s names no compartment", c.Name)
	case o.ClusterID == "":
		return nil, provider.ValidationError(platform, "spec.platform.oci.clusterId", "cluster %s names no OKE cluster OCID", c.Name)
	}
	endpoint, err := provider.Endpoint(c, oke.PublicEndpoint(o.Region), "OKE")
	if err != nil {
		return nil, err
	}
	cr, err := d.opts.Credentials.Resolve(c)
	if err != nil {
		return nil, err
	}
	key := cr.Name + " " + o.Region + " " + endpoint
	cl, err := d.clients.Load(key, func() (*ce.ContainerEngineClient, error) { return d.newClient(cr, o.Region, endpoint) })
	if err != nil {
		return nil, err
	}
	return &conn{cl: cl, oci: o, key: key, cr: cr, endpoint: endpoint}, nil
}

// newClient makes the Container Engine client of a credential in a
// region at endpoint, with the driver's retries: each try bounded by
// TryTimeout (provider.Guard), what a retry may cure tried again
// (retryable).
func (d *Driver) newClient(cr *provider.Credential, region, endpoint string) (*ce.ContainerEngineClient, error) {
	cp, err := d.identity(cr, region)
	if err != nil {
		return nil, err
	}
	cl, err := ce.NewContainerEngineClientWithConfigurationProvider(cp)
	if err != nil {
		// The SDK checks the key here; its message names no secret, but
		// is kept out of the reason all the same.
		return nil, &provider.Error{Kind: provider.KindPermissionDenied, Provider: platform,
			Reason: fmt.Sprintf("credential %s: no usable OCI identity (the tenancy, user, fingerprint or private key could not be read)", cr.Name), Err: err}
	}
	d.wire(&cl.BaseClient, cr, endpoint)
	return &cl, nil
}

// wire points an SDK client at endpoint, through the credential's guard,
// with the driver's retries and no circuit breaker.
func (d *Driver) wire(b *common.BaseClient, cr *provider.Credential, endpoint string) {
	b.Host = endpoint
	r := *d.opts.Retry
	b.HTTPClient = provider.NewGuard(cr, r.TryTimeout, d.opts.Transport)
	policy := common.NewRetryPolicy(uint(r.Tries()), retryable, func(o common.OCIOperationResponse) time.Duration { return r.Backoff(int(o.AttemptNumber)) })
	b.Configuration.RetryPolicy = &policy
	b.Configuration.CircuitBreaker = nil
}

// list returns the cluster's node pools (of a name, when given), without
// the DELETED ones.
func (cn *conn) list(ctx context.Context, name string) ([]ce.NodePoolSummary, error) {
	var out []ce.NodePoolSummary
	req := ce.ListNodePoolsRequest{CompartmentId: common.String(cn.oci.CompartmentID), ClusterId: common.String(cn.oci.ClusterID)}
	if name != "" {
		req.Name = common.String(name)
	}
	for pages := 0; ; pages++ {
		resp, err := cn.cl.ListNodePools(provider.Detached(ctx), req)
		if err != nil {
			return nil, classify(err, resp.RawResponse, "")
		}
		for _, s := range resp.Items {
			if s.LifecycleState != ce.NodePoolLifecycleStateDeleted && s.Id != nil && (name == "" || ptr.Deref(s.Name, "") == name) {
				out = append(out, s)
			}
		}
		if resp.OpcNextPage == nil || *resp.OpcNextPage == "" || pages > 10000 {
			return out, nil
		}
		req.Page = resp.OpcNextPage
	}
}

// get reads a node pool and its etag; a missing one is (nil, "", nil).
func (cn *conn) get(ctx context.Context, id string) (*ce.NodePool, string, error) {
	resp, err := cn.cl.GetNodePool(provider.Detached(ctx), ce.GetNodePoolRequest{NodePoolId: common.String(id)})
	if err != nil {
		if status(err) == http.StatusNotFound {
			return nil, "", nil
		}
		return nil, "", classify(err, resp.RawResponse, "")
	}
	return &resp.NodePool, ptr.Deref(resp.Etag, ""), nil
}

// byName finds the pool of a provider name: the first one not being
// deleted, else the first; nil when there is none.
func (cn *conn) byName(ctx context.Context, name string) (*ce.NodePool, string, []ce.NodePoolSummary, error) {
	sums, err := cn.list(ctx, name)
	if err != nil || len(sums) == 0 {
		return nil, "", nil, err
	}
	pick := 0
	for i, s := range sums {
		if s.LifecycleState != ce.NodePoolLifecycleStateDeleting {
			pick = i
			break
		}
	}
	np, etag, err := cn.get(ctx, *sums[pick].Id)
	if np != nil && np.LifecycleState == ce.NodePoolLifecycleStateDeleted {
		np = nil
	}
	return np, etag, sums, err
}

// NodePoolCreate creates a node pool, or returns the existing one when it
// already matches. Work requests are not waited on: the pool is returned
// Creating.
func (d *Driver) NodePoolCreate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	if err := provider.CheckSupported(profile.Capabilities(), s); err != nil {
		return nil, err
	}
	if !profile.Capabilities().Names.Match(s.ProviderName) {
		return nil, provider.ValidationError(platform, "provider_name", "%q is not an OKE node pool name: 1-255 letters, digits, '_', '.' or '-', starting with a letter or digit", s.ProviderName)
	}
	cn, err := d.client(c)
	if err != nil {
		return nil, err
	}
	in, err := createDetails(c, cn.oci, s)
	if err != nil {
		return nil, err
	}
	existing, _, _, err := cn.byName(ctx, s.ProviderName)
	if err != nil {
		return nil, err
	}
	if existing != nil {
		a, err := cn.readAutoscaler(ctx)
		if err != nil {
			return nil, err
		}
		return adopt(c, existing, s, a)
	}
	if in.KubernetesVersion, err = d.version(ctx, cn, s.Version); err != nil {
		return nil, err
	}
	resp, err := cn.cl.CreateNodePool(provider.Detached(ctx), ce.CreateNodePoolRequest{CreateNodePoolDetails: in})
	if err != nil {
		return nil, classify(err, resp.RawResponse, "")
	}
	np := ce.NodePool{Name: in.Name, CompartmentId: in.CompartmentId, ClusterId: in.ClusterId, KubernetesVersion: in.KubernetesVersion,
		NodeShape: in.NodeShape, NodeSourceDetails: in.NodeSourceDetails, InitialNodeLabels: in.InitialNodeLabels, FreeformTags: in.FreeformTags,
		LifecycleState: ce.NodePoolLifecycleStateCreating, NodePoolCyclingDetails: in.NodePoolCyclingDetails, NodeEvictionNodePoolSettings: in.NodeEvictionNodePoolSettings,
		NodeConfigDetails: &ce.NodePoolNodeConfigDetails{Size: in.NodeConfigDetails.Size, PlacementConfigs: in.NodeConfigDetails.PlacementConfigs,
			FreeformTags: in.NodeConfigDetails.FreeformTags}}
	if sc := in.NodeShapeConfig; sc != nil {
		np.NodeShapeConfig = &ce.NodeShapeConfig{Ocpus: sc.Ocpus, MemoryInGBs: sc.MemoryInGBs}
	}
	p := observe(c, np)
	p.ReadyUnknown = false
	if resp.OpcWorkRequestId != nil {
		p.Extra["workRequest"] = *resp.OpcWorkRequestId
	}
	if s.Autoscaling {
		// The entry needs the new pool's OCID, which the create does not
		// answer: the pool is listed (CREATING) at once. A failure here
		// leaves the entry to the next pass, which sees it missing.
		if made, _, _, err := cn.byName(ctx, s.ProviderName); err == nil && made != nil {
			p.Extra["id"] = ptr.Deref(made.Id, "")
			_ = cn.syncBounds(ctx, p.Extra["id"], s, &p)
		}
	}
	return &p, nil
}

// syncBounds makes the pool's entry in the Cluster Autoscaler add-on the
// spec's, and reports it on p.
func (cn *conn) syncBounds(ctx context.Context, id string, s provider.PoolSpec, p *provider.Pool) error {
	if err := cn.setBounds(ctx, id, wantBounds(s)); err != nil {
		return err
	}
	p.Autoscaling, p.MinCount, p.MaxCount = false, 0, 0
	if s.Autoscaling {
		p.Autoscaling, p.MinCount, p.MaxCount = true, s.MinCount, s.MaxCount
	}
	return nil
}

// NodePoolDelete deletes the node pools of a provider name; none is not
// an error, nor one already being deleted.
func (d *Driver) NodePoolDelete(ctx context.Context, c *kpool.Cluster, providerName string) error {
	cn, err := d.client(c)
	if err != nil {
		return err
	}
	sums, err := cn.list(ctx, providerName)
	if err != nil {
		return err
	}
	for _, s := range sums {
		if s.LifecycleState == ce.NodePoolLifecycleStateDeleting {
			continue
		}
		// The autoscaler's entry goes first: it must not scale a pool
		// being deleted, nor name one that is gone.
		if err := cn.setBounds(ctx, *s.Id, nil); err != nil {
			return err
		}
		resp, err := cn.cl.DeleteNodePool(provider.Detached(ctx), ce.DeleteNodePoolRequest{NodePoolId: s.Id})
		d.invalidate(cn, s.Id)
		if err != nil && status(err) != http.StatusNotFound {
			return classify(err, resp.RawResponse, "")
		}
	}
	return nil
}

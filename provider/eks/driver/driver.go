// Package driver is the EKS driver: kpool node pools as EKS managed node
// groups, through the official SDK (aws-sdk-go-v2/service/eks). What kpool
// knows of EKS without the SDK is its profile, package eks.
package driver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/eks"
)

const platform = eks.Type

var profile = eks.Profile{}

// Options configure the driver.
type Options struct {
	// Credentials say which of the operator's credentials each cluster
	// uses, for which accounts, and the hosts it may be sent to. Nil means
	// provider.DefaultCredentials: the default chain, any account, the
	// public regional EKS endpoints only.
	Credentials provider.Credentials
	// Credential is the identity of credentials of kind "default". Nil
	// means the SDK's default chain (environment, shared config and
	// credentials files, web identity, ECS and EC2 roles), loaded when
	// first needed.
	Credential aws.CredentialsProvider
	// Transport sends each HTTP request once the wire's check passed it
	// (provider.Wire); nil is http.DefaultTransport. Set it to trust the
	// certificate of an endpoint the system does not.
	Transport http.RoundTripper
	// Retry is how the SDK times out and retries a call; nil is Retry().
	Retry *RetryOptions
}

// RetryOptions bound the SDK's retries of one call.
type RetryOptions struct {
	// MaxAttempts is the number of tries, the first included.
	MaxAttempts int
	// TryTimeout bounds each try, from sending the request to reading the
	// answer's body.
	TryTimeout time.Duration
	// MaxBackoff bounds the wait between tries.
	MaxBackoff time.Duration
}

// Retry returns the driver's retry options: no try outlives TryTimeout (a
// tarpit cannot hold a call for ever), and a failure a retry may cure (500,
// 502, 503, 504, a dropped connection, a try timed out) is tried twice
// more, quickly. Throttling is never retried here: it goes back to kpool's
// controllers, which back off without holding a worker. The node-group
// calls are idempotent (creates carry a clientRequestToken the SDK keeps
// across tries).
func Retry() RetryOptions {
	return RetryOptions{MaxAttempts: 3, TryTimeout: 30 * time.Second, MaxBackoff: 500 * time.Millisecond}
}

// cacheSize bounds the driver's clients: cluster specs choose their keys.
const cacheSize = 256

// Driver is the EKS driver.
type Driver struct {
	opts  Options
	retry RetryOptions
	creds provider.Credentials

	mu       sync.Mutex
	identity map[string]aws.CredentialsProvider // by credential name
	clients  map[string]*awseks.Client
}

// New returns an EKS driver.
func New(o Options) *Driver {
	d := &Driver{opts: o, retry: Retry(), identity: map[string]aws.CredentialsProvider{}, clients: map[string]*awseks.Client{}}
	if o.Retry != nil {
		d.retry = *o.Retry
	}
	d.creds = provider.CredentialsOr(o.Credentials, profile)
	return d
}

var _ provider.Driver = (*Driver)(nil)

// Capabilities returns EKS's capabilities.
func (d *Driver) Capabilities() provider.Capabilities { return profile.Capabilities() }

// client returns the EKS client of a cluster's credential, region and
// endpoint (the region's public one unless the cluster names another).
// The credential must allow both: a cluster that names another host or
// account is refused here, before any request, and every request is
// checked again at the wire (provider.Guard).
func (d *Driver) client(ctx context.Context, c *kpool.Cluster) (*awseks.Client, *kpool.AWSCluster, error) {
	a := c.Spec.Platform.AWS
	if a == nil {
		return nil, nil, provider.ValidationError(platform, "spec.platform.aws", "cluster %s has no aws settings", c.Name)
	}
	if a.Region == "" {
		return nil, nil, provider.ValidationError(platform, "spec.platform.aws.region", "cluster %s names no region", c.Name)
	}
	if e := c.Spec.Endpoint; e != "" {
		u, err := url.Parse(e)
		switch {
		case err != nil || u.Host == "":
			return nil, nil, provider.ValidationError(platform, "spec.endpoint", "%q is not an absolute URL", e)
		case !strings.EqualFold(u.Scheme, "https"):
			return nil, nil, provider.ValidationError(platform, "spec.endpoint", "%q: EKS must be reached over https: kpool sends no signed request over %s", e, u.Scheme)
		}
	}
	cr, err := d.creds.Resolve(c)
	if err != nil {
		return nil, nil, err
	}
	key := cr.Name + " " + a.Region + " " + c.Spec.Endpoint
	d.mu.Lock()
	defer d.mu.Unlock()
	if cl, ok := d.clients[key]; ok {
		return cl, a, nil
	}
	id, err := d.credential(ctx, cr)
	if err != nil {
		return nil, nil, err
	}
	r := d.retry
	o := awseks.Options{
		Region:      a.Region,
		Credentials: id,
		HTTPClient:  provider.NewGuard(cr, r.TryTimeout, d.opts.Transport),
		Retryer: retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = max(r.MaxAttempts, 1)
			so.MaxBackoff = r.MaxBackoff
			so.RateLimiter = ratelimit.None
			so.Retryables = []retry.IsErrorRetryable{retry.IsErrorRetryableFunc(retryable)}
		}),
	}
	if c.Spec.Endpoint != "" {
		o.BaseEndpoint = aws.String(strings.TrimSuffix(c.Spec.Endpoint, "/"))
	}
	cl := awseks.New(o)
	if len(d.clients) >= cacheSize {
		clear(d.clients) // rare: many distinct endpoints; clients are cheap to make again
	}
	d.clients[key] = cl
	return cl, a, nil
}

// credential returns the AWS identity of a credential, made once. d.mu is
// held.
func (d *Driver) credential(ctx context.Context, cr *provider.Credential) (aws.CredentialsProvider, error) {
	if id, ok := d.identity[cr.Name]; ok {
		return id, nil
	}
	var id aws.CredentialsProvider
	var err error
	switch cr.Kind {
	case provider.CredentialDefault:
		id = d.opts.Credential
		if id == nil {
			var cfg aws.Config
			if cfg, err = config.LoadDefaultConfig(ctx); err == nil {
				id = cfg.Credentials
			}
		}
	case provider.CredentialEmulator:
		id, err = provider.IdentityOf[aws.CredentialsProvider](cr)
	case provider.CredentialStatic:
		var key, secret string
		if key, secret, err = cr.AccessKey(); err == nil {
			id = credentials.NewStaticCredentialsProvider(key, secret, "")
		}
	default:
		err = fmt.Errorf("kind %q is not an AWS credential kind", cr.Kind)
	}
	if err == nil && id == nil {
		err = errors.New("the default chain found no credentials")
	}
	if err != nil {
		return nil, &provider.Error{Kind: provider.KindPermissionDenied, Provider: platform, Reason: "no AWS credential " + cr.Name + ": " + err.Error(), Err: err}
	}
	id = identity{id}
	d.identity[cr.Name] = id
	return id, nil
}

// NodePoolList lists the cluster's node groups: ListNodegroups, paged,
// then DescribeNodegroup of each.
func (d *Driver) NodePoolList(ctx context.Context, c *kpool.Cluster) ([]provider.Pool, error) {
	cl, a, err := d.client(ctx, c)
	if err != nil {
		return nil, err
	}
	var names []string
	pager := awseks.NewListNodegroupsPaginator(cl, &awseks.ListNodegroupsInput{ClusterName: aws.String(a.ClusterName)})
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, classify(err, "")
		}
		names = append(names, page.Nodegroups...)
	}
	// EKS lists names only: each node group is described, listDescribes
	// at a time. One whose describe fails for a passing reason (after the
	// SDK's retries) is reported Unknown, which the controllers wait on,
	// rather than failing the whole list: with a hundred node groups, one
	// bad answer in a hundred would otherwise stall the whole cluster.
	// Throttling and refusals still fail the list, so that the caller backs
	// off or reports them.
	pools := make([]*provider.Pool, len(names))
	errs := make([]error, len(names))
	sem := make(chan struct{}, listDescribes)
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			ng, err := describe(ctx, cl, a, n)
			switch {
			case err != nil && provider.IsTransient(err) && !provider.IsThrottled(err) && ctx.Err() == nil:
				pools[i] = &provider.Pool{PoolSpec: provider.PoolSpec{ProviderName: n}, State: provider.StateUnknown,
					ReadyUnknown: true, Message: "DescribeNodegroup failed: " + err.Error()}
			case err != nil:
				errs[i] = err
			case ng != nil: // nil: deleted since it was listed
				p := observe(c, ng)
				pools[i] = &p
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	var out []provider.Pool
	for _, p := range pools {
		if p != nil {
			out = append(out, *p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProviderName < out[j].ProviderName })
	return out, nil
}

// listDescribes is how many DescribeNodegroup calls a list has in flight.
const listDescribes = 8

// describe reads one node group; a missing one is (nil, nil).
func describe(ctx context.Context, cl *awseks.Client, a *kpool.AWSCluster, name string) (*types.Nodegroup, error) {
	out, err := cl.DescribeNodegroup(ctx, &awseks.DescribeNodegroupInput{ClusterName: aws.String(a.ClusterName), NodegroupName: aws.String(name)})
	if err != nil {
		if nodegroupMissing(err) {
			return nil, nil
		}
		return nil, classify(err, "")
	}
	return out.Nodegroup, nil
}

// NodePoolCreate creates a node group, or returns the existing one when it
// already matches.
func (d *Driver) NodePoolCreate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	if !profile.Capabilities().Names.Match(s.ProviderName) {
		return nil, provider.ValidationError(platform, "provider_name", "%q is not an EKS node group name: 1-63 letters, digits, '-' or '_', starting with a letter or digit", s.ProviderName)
	}
	if err := unsupported(s); err != nil {
		return nil, err
	}
	cl, a, err := d.client(ctx, c)
	if err != nil {
		return nil, err
	}
	in, err := createInput(c, a, s)
	if err != nil {
		return nil, err
	}
	existing, err := describe(ctx, cl, a, s.ProviderName)
	if err != nil {
		return nil, err
	}
	if existing != nil {
		return adopt(c, existing, s)
	}
	out, err := cl.CreateNodegroup(ctx, in)
	if err != nil {
		var inUse *types.ResourceInUseException
		if errors.As(err, &inUse) {
			return nil, &provider.Error{Kind: provider.KindTransient, Provider: platform, Reason: "node group " + s.ProviderName + " was created concurrently; list again", Err: err}
		}
		return nil, classify(err, "")
	}
	p := observe(c, out.Nodegroup)
	return &p, nil
}

// NodePoolDelete deletes a node group; a missing one is not an error.
func (d *Driver) NodePoolDelete(ctx context.Context, c *kpool.Cluster, providerName string) error {
	cl, a, err := d.client(ctx, c)
	if err != nil {
		return err
	}
	_, err = cl.DeleteNodegroup(ctx, &awseks.DeleteNodegroupInput{ClusterName: aws.String(a.ClusterName), NodegroupName: aws.String(providerName)})
	if err != nil && !nodegroupMissing(err) {
		return classify(err, "")
	}
	return nil
}

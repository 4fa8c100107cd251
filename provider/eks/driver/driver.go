// Package driver is the EKS driver: kpool node pools as EKS managed node
// groups, through the official SDK (aws-sdk-go-v2/service/eks). What kpool
// knows of EKS without the SDK is its profile, package eks.
package driver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/eks"
)

const platform = eks.Type

var profile = eks.Profile{}

// Driver is the EKS driver.
type Driver struct {
	opts provider.DriverOptions

	identities *provider.Cache[aws.CredentialsProvider] // by credential name
	clients    *provider.Cache[*awseks.Client]          // by credential, region and endpoint
	ec2s       *provider.Cache[*ec2.Client]             // by credential, region and endpoint
	volumes    *provider.Cache[volume]                  // what a launch template version gives, by template id and version
	reads      *provider.Refresh[kept]                  // the node groups lists read, by cluster and name
}

// New returns an EKS driver. Credentials of kind default are the SDK's
// default chain (environment, shared config and credentials files, web
// identity, ECS and EC2 roles), loaded when first needed. The node-group
// calls it retries are idempotent: creates carry a clientRequestToken the
// SDK keeps across tries.
func New(o provider.DriverOptions) *Driver {
	return &Driver{opts: o.For(profile),
		identities: provider.NewCache[aws.CredentialsProvider](provider.CacheSize), volumes: provider.NewCache[volume](provider.CacheSize), clients: provider.NewCache[*awseks.Client](provider.CacheSize),
		ec2s: provider.NewCache[*ec2.Client](provider.CacheSize), reads: provider.NewRefresh[kept](provider.RefreshPools)}
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
	endpoint, err := provider.Endpoint(c, "", "EKS")
	if err != nil {
		return nil, nil, err
	}
	cr, err := d.opts.Credentials.Resolve(c)
	if err != nil {
		return nil, nil, err
	}
	cl, err := d.clients.Load(cr.Name+" "+a.Region+" "+endpoint, func() (*awseks.Client, error) {
		id, err := d.credential(ctx, cr)
		if err != nil {
			return nil, err
		}
		return d.newClient(cr, id, a.Region, endpoint), nil
	})
	return cl, a, err
}

// newClient makes the client of a credential in a region at endpoint (""
// is the region's public one), with the driver's retries: each try bounded
// by TryTimeout (provider.Guard), what a retry may cure tried again
// (retryable), nothing held back by the SDK's own retry quota.
func (d *Driver) newClient(cr *provider.Credential, id aws.CredentialsProvider, region, endpoint string) *awseks.Client {
	r := *d.opts.Retry
	o := awseks.Options{
		Region:      region,
		Credentials: id,
		HTTPClient:  provider.NewGuard(cr, r.TryTimeout, d.opts.Transport),
		Retryer:     retryer(r),
	}
	if endpoint != "" {
		o.BaseEndpoint = aws.String(endpoint)
	}
	return awseks.New(o)
}

// credential returns the AWS identity of a credential, made once.
func (d *Driver) credential(ctx context.Context, cr *provider.Credential) (aws.CredentialsProvider, error) {
	return d.identities.Load(cr.Name, func() (aws.CredentialsProvider, error) {
		var id aws.CredentialsProvider
		var err error
		switch cr.Kind {
		case provider.CredentialDefault:
			var cfg aws.Config
			if cfg, err = config.LoadDefaultConfig(ctx); err == nil {
				id = cfg.Credentials
			}
		case provider.CredentialEmulator:
			id, err = provider.IdentityOf[aws.CredentialsProvider](cr)
		case eks.CredentialStatic:
			id, err = staticKey(cr)
		default:
			err = fmt.Errorf("kind %q is not an AWS credential kind", cr.Kind)
		}
		if err == nil && id == nil {
			err = errors.New("the default chain found no credentials")
		}
		if err != nil {
			return nil, &provider.Error{Kind: provider.KindPermissionDenied, Provider: platform, Reason: "no AWS credential " + cr.Name + ": " + err.Error(), Err: err}
		}
		return identity{id}, nil
	})
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
	defer d.invalidate(c, s.ProviderName)
	in, err := createInput(c, a, s)
	if err != nil {
		return nil, err
	}
	ec2cl, err := d.ec2Client(ctx, c)
	if err != nil {
		return nil, err
	}
	existing, err := describe(ctx, cl, a, s.ProviderName)
	if err != nil {
		return nil, err
	}
	if existing != nil {
		p, err := d.observeAll(ctx, ec2cl, c, existing)
		if err != nil {
			return nil, err
		}
		return provider.Adopt(profile, s, &p)
	}
	// The template first, found by name after a crash: EKS refuses
	// diskSize with a launch template, whose volume it is.
	if in.LaunchTemplate, err = ensureTemplate(ctx, ec2cl, a.ClusterName, s); err != nil {
		return nil, err
	}
	in.DiskSize = nil
	out, err := cl.CreateNodegroup(ctx, in)
	if err != nil {
		var inUse *types.ResourceInUseException
		if errors.As(err, &inUse) {
			return nil, &provider.Error{Kind: provider.KindTransient, Provider: platform, Reason: "node group " + s.ProviderName + " was created concurrently; list again", Err: err}
		}
		err = classify(err, "")
		if !provider.IsTransient(err) && !provider.IsThrottled(err) {
			// Refused: no node group uses the template. Marked, the list
			// deletes it unless a create takes it again (which makes a
			// fresh one).
			_ = markDeleting(ctx, ec2cl, a.ClusterName, s.ProviderName)
		}
		return nil, err
	}
	p := observe(c, out.Nodegroup)
	applyVolume(&p, wanted(s))
	return &p, nil
}

// NodePoolDelete deletes a node group; a missing one is not an error. Its
// launch template is marked to be deleted by the list that finds the node
// group gone, or deleted at once when it is gone already.
func (d *Driver) NodePoolDelete(ctx context.Context, c *kpool.Cluster, providerName string) error {
	cl, a, err := d.client(ctx, c)
	if err != nil {
		return err
	}
	defer d.invalidate(c, providerName)
	ec2cl, err := d.ec2Client(ctx, c)
	if err != nil {
		return err
	}
	if err := markDeleting(ctx, ec2cl, a.ClusterName, providerName); err != nil {
		return err
	}
	_, err = cl.DeleteNodegroup(ctx, &awseks.DeleteNodegroupInput{ClusterName: aws.String(a.ClusterName), NodegroupName: aws.String(providerName)})
	switch {
	case err != nil && nodegroupMissing(err):
		return deleteTemplate(ctx, ec2cl, templateName(a.ClusterName, providerName))
	case err != nil:
		return classify(err, "")
	}
	return nil
}

// staticKey is the identity of a static credential: its access key, read
// from the variables or files the operator named.
func staticKey(cr *provider.Credential) (aws.CredentialsProvider, error) {
	id, err := cr.Read("accessKeyId")
	if err != nil {
		return nil, err
	}
	secret, err := cr.Read("secretAccessKey")
	if err != nil {
		return nil, err
	}
	return credentials.NewStaticCredentialsProvider(id, secret, ""), nil
}

// retryer is the SDK's standard retryer on the driver's retries (tries,
// backoff, what is retryable), without the SDK's own client-side rate
// limit: EKS's and EC2's clients share it.
func retryer(r provider.Retry) aws.Retryer {
	return retry.NewStandard(func(so *retry.StandardOptions) {
		so.MaxAttempts = r.Tries()
		so.MaxBackoff = r.MaxDelay
		so.Backoff = retry.BackoffDelayerFunc(func(attempt int, _ error) (time.Duration, error) { return r.Backoff(attempt), nil })
		so.RateLimiter = ratelimit.None
		so.Retryables = []retry.IsErrorRetryable{retry.IsErrorRetryableFunc(retryable)}
	})
}

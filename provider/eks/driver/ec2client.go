package driver

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// ec2Client returns the EC2 client of a cluster's credential, region and
// endpoint, for its node groups' launch templates: the cluster's endpoint
// when it names one (an emulator serves EKS and EC2 there), else the
// region's public EC2 endpoint. The same checks as the EKS client's
// apply, and the same retries.
func (d *Driver) ec2Client(ctx context.Context, c *kpool.Cluster) (*ec2.Client, error) {
	a := c.Spec.Platform.AWS
	if _, _, err := d.client(ctx, c); err != nil {
		return nil, err
	}
	endpoint, err := provider.Endpoint(c, "", "EC2")
	if err != nil {
		return nil, err
	}
	cr, err := d.opts.Credentials.Resolve(c)
	if err != nil {
		return nil, err
	}
	return d.ec2s.Load(cr.Name+" "+a.Region+" "+endpoint, func() (*ec2.Client, error) {
		id, err := d.credential(ctx, cr)
		if err != nil {
			return nil, err
		}
		r := *d.opts.Retry
		o := ec2.Options{
			Region:      a.Region,
			Credentials: id,
			HTTPClient:  provider.NewGuard(cr, r.TryTimeout, d.opts.Transport),
			Retryer: retry.NewStandard(func(so *retry.StandardOptions) {
				so.MaxAttempts = r.Tries()
				so.MaxBackoff = r.MaxDelay
				so.Backoff = retry.BackoffDelayerFunc(func(attempt int, _ error) (time.Duration, error) { return r.Backoff(attempt), nil })
				so.RateLimiter = ratelimit.None
				so.Retryables = []retry.IsErrorRetryable{retry.IsErrorRetryableFunc(retryable)}
			}),
		}
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		return ec2.New(o), nil
	})
}

package driver

import (
	"context"
	"encoding/base64"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

var _ provider.KubeReacher = (*Driver)(nil)

// The EKS token's form and life, as aws-iam-authenticator's
// pkg/token/token.go (and `aws eks get-token`) make it: the presigned URL
// is good for 15 minutes after its X-Amz-Date whatever X-Amz-Expires says
// (set to 60 "for legacy reasons"), and the token is used one minute less.
const (
	tokenPrefix   = "k8s-aws-v1."
	clusterHeader = "x-k8s-aws-id"
	tokenLife     = 14 * time.Minute
)

// KubeAccess reaches an EKS cluster's Kubernetes API as `aws eks
// get-token` and `aws eks update-kubeconfig` do: the endpoint and CA from
// DescribeCluster (through the driver's guarded client), checked with
// provider.CheckKubeServer before anything is made for it, and a token:
// STS GetCallerIdentity presigned with the cluster's credential, the
// x-k8s-aws-id header naming the cluster among the signed headers.
func (d *Driver) KubeAccess(ctx context.Context, c *kpool.Cluster) (*provider.KubeAccess, error) {
	cl, a, err := d.client(ctx, c)
	if err != nil {
		return nil, err
	}
	out, err := cl.DescribeCluster(ctx, &awseks.DescribeClusterInput{Name: aws.String(a.ClusterName)})
	if err != nil {
		return nil, classify(err, "")
	}
	cr, err := d.opts.Credentials.Resolve(c)
	if err != nil {
		return nil, err
	}
	server := aws.ToString(out.Cluster.Endpoint)
	if err := provider.CheckKubeServer(profile, cr, c, server); err != nil {
		return nil, err
	}
	var ca []byte
	if out.Cluster.CertificateAuthority != nil && aws.ToString(out.Cluster.CertificateAuthority.Data) != "" {
		if ca, err = base64.StdEncoding.DecodeString(aws.ToString(out.Cluster.CertificateAuthority.Data)); err != nil {
			return nil, &provider.Error{Kind: provider.KindTransient, Provider: platform, Reason: "DescribeCluster's certificateAuthority.data is not base64", Err: err}
		}
	}
	token, err := d.token(ctx, c, cr, a)
	if err != nil {
		return nil, err
	}
	return &provider.KubeAccess{Server: server, CA: ca, Token: token, Expires: time.Now().Add(tokenLife)}, nil
}

// token presigns STS GetCallerIdentity for the cluster with the
// credential's identity, at the cluster's STS endpoint: its spec.endpoint
// when it names one (an emulator plays STS there too), else the region's
// public one (sts.<region>.amazonaws.com). Nothing is sent: presigning
// is local, and the cluster's API server calls STS with the URL.
func (d *Driver) token(ctx context.Context, c *kpool.Cluster, cr *provider.Credential, a *kpool.AWSCluster) (string, error) {
	endpoint, err := provider.Endpoint(c, "", "STS")
	if err != nil {
		return "", err
	}
	id, err := d.credential(ctx, cr)
	if err != nil {
		return "", err
	}
	o := sts.Options{Region: a.Region, Credentials: id}
	if endpoint != "" {
		o.BaseEndpoint = aws.String(endpoint)
	}
	pc := sts.NewPresignClient(sts.New(o), func(po *sts.PresignOptions) {
		po.ClientOptions = append(po.ClientOptions, func(so *sts.Options) {
			so.APIOptions = append(so.APIOptions, smithyhttp.SetHeaderValue(clusterHeader, a.ClusterName),
				smithyhttp.SetHeaderValue("X-Amz-Expires", "60"))
		})
	})
	req, err := pc.PresignGetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return "", classify(err, "")
	}
	return tokenPrefix + base64.RawURLEncoding.EncodeToString([]byte(req.URL)), nil
}

package driver

import (
	"context"
	"errors"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

var _ provider.KubeReacher = (*Driver)(nil)

// KubeAccess is the cluster's Kubernetes API as Civo hands it out: the
// kubeconfig of the cluster GET (the one the autoscaler's client is built
// from), read by kubeconfigOf, its server checked (CheckKubeServer: the
// cluster's endpoint's origin, one the credential may reach, or, for a
// cluster on Civo's public API, an IP address, as Civo's servers are
// https://<ip>:6443). Civo's kubeconfig does not expire: no Expires.
func (d *Driver) KubeAccess(ctx context.Context, c *kpool.Cluster) (*provider.KubeAccess, error) {
	cl, id, err := d.client(c)
	if err != nil {
		return nil, err
	}
	cv, err := cl.Cluster(ctx, id)
	if err != nil {
		return nil, classify(err, "")
	}
	cfg, err := kubeconfigOf(cv.KubeConfig)
	if err != nil {
		return nil, &provider.Error{Kind: provider.KindPermissionDenied, Provider: platform, Reason: err.Error(), Err: err}
	}
	if err := cl.checkKube(cfg.Host); err != nil {
		return nil, err
	}
	tls := cfg.TLSClientConfig
	if cfg.BearerToken == "" && (len(tls.CertData) == 0 || len(tls.KeyData) == 0) {
		err := errors.New("the kubeconfig Civo returned has neither a bearer token nor a client certificate and key")
		return nil, &provider.Error{Kind: provider.KindPermissionDenied, Provider: platform, Reason: err.Error(), Err: err}
	}
	return &provider.KubeAccess{Server: cfg.Host, CA: tls.CAData, Token: cfg.BearerToken, ClientCert: tls.CertData, ClientKey: tls.KeyData}, nil
}

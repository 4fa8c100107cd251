package driver

import (
	"context"
	"errors"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// aksServerScope is the scope of the Entra ID tokens an AKS-managed
// Microsoft Entra ID cluster's API server takes: the AKS AAD Server
// application's (Azure/kubelogin, "Using kubelogin with AKS";
// learn.microsoft.com/azure/aks/kubelogin-authentication). kpool asks for
// it with the cluster's own Azure credential instead of running kubelogin.
const aksServerScope = "6dae42f8-4368-4678-94ff-3960e28e3630/.default"

var _ provider.KubeReacher = (*Driver)(nil)

// KubeAccess reaches the cluster's Kubernetes API as AKS hands it out: the
// kubeconfig of ManagedClustersClient.ListClusterUserCredentials, called
// with the cluster's credential through the driver's guarded client. Its
// server and CA are taken as AKS answered them; its bearer token, or, for
// a user that runs kubelogin (an AAD-enabled cluster), an Entra ID token
// for the AKS server application got with the same credential. Nothing of
// the kubeconfig is run or read from disk; the server is checked
// (provider.CheckKubeServer) before anything is sent to it.
func (d *Driver) KubeAccess(ctx context.Context, c *kpool.Cluster) (*provider.KubeAccess, error) {
	cs, a, err := d.client(c)
	if err != nil {
		return nil, err
	}
	cr, err := d.opts.Credentials.Resolve(c)
	if err != nil {
		return nil, err
	}
	res, err := cs.clusters.ListClusterUserCredentials(ctx, a.ResourceGroup, a.ClusterName, nil)
	if err != nil {
		return nil, classify(err, "")
	}
	if len(res.Kubeconfigs) == 0 || res.Kubeconfigs[0] == nil {
		return nil, kubeconfigError(c, "AKS answered no kubeconfig", nil)
	}
	acc, user, err := readKubeconfig(res.Kubeconfigs[0].Value)
	if err != nil {
		return nil, kubeconfigError(c, err.Error(), err)
	}
	if err := provider.CheckKubeServer(profile, cr, c, acc.Server); err != nil {
		return nil, err
	}
	switch {
	case acc.Token != "":
	case user.Exec != nil || user.AuthProvider != nil:
		if err := d.entraToken(ctx, cr, acc); err != nil {
			return nil, err
		}
	case len(user.ClientCertificateData) > 0:
		return nil, kubeconfigError(c, "its user has only a client certificate; kpool reaches Kubernetes APIs with bearer tokens "+
			"(a cluster with Entra ID integration hands out a kubelogin user, one with local accounts a token)", nil)
	default:
		return nil, kubeconfigError(c, "its user has no bearer token, exec plugin or auth provider", nil)
	}
	return acc, nil
}

// entraToken puts on acc an Entra ID token for the AKS server application,
// got with the cluster's Azure credential, and its expiry.
func (d *Driver) entraToken(ctx context.Context, cr *provider.Credential, acc *provider.KubeAccess) error {
	tc, err := d.token(cr)
	if err != nil {
		return err
	}
	tok, err := tc.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{aksServerScope}})
	if err != nil {
		return classify(err, "")
	}
	acc.Token, acc.Expires = tok.Token, tok.ExpiresOn
	return nil
}

// readKubeconfig takes the server, CA and token of a kubeconfig's current
// context, and returns its user for the caller to judge. A kubeconfig
// that names files (a CA, a token or a certificate on the disk kpool runs
// on) or skips TLS verification is refused: a cloud's answer chooses
// neither what kpool reads nor whether it checks the server.
func readKubeconfig(b []byte) (*provider.KubeAccess, *clientcmdapi.AuthInfo, error) {
	cfg, err := clientcmd.Load(b)
	if err != nil {
		return nil, nil, errors.New("it is not a kubeconfig")
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok || ctx == nil {
		return nil, nil, fmt.Errorf("it has no current context %q", cfg.CurrentContext)
	}
	cl, user := cfg.Clusters[ctx.Cluster], cfg.AuthInfos[ctx.AuthInfo]
	if cl == nil || user == nil {
		return nil, nil, errors.New("its current context names no cluster or no user")
	}
	switch {
	case cl.InsecureSkipTLSVerify:
		return nil, nil, errors.New("it skips TLS verification")
	case cl.CertificateAuthority != "" || user.TokenFile != "" || user.ClientCertificate != "" || user.ClientKey != "":
		return nil, nil, errors.New("it names local files")
	case cl.ProxyURL != "":
		return nil, nil, errors.New("it names a proxy")
	}
	return &provider.KubeAccess{Server: cl.Server, CA: cl.CertificateAuthorityData, Token: user.Token}, user, nil
}

// kubeconfigError is a kubeconfig AKS answered that kpool cannot use: the
// operator's to look at (permission denied), never with its contents.
func kubeconfigError(c *kpool.Cluster, why string, err error) error {
	return &provider.Error{Kind: provider.KindPermissionDenied, Provider: platform,
		Reason: "the kubeconfig AKS hands out for cluster " + c.Name + " cannot be used: " + why, Err: err}
}

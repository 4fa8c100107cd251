package kubeapi

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// A cluster's access from the operator's kubeconfig credential
// (spec.kubeconfig) instead of its driver: the kubeconfig is the
// operator's, and only what kpool can hold to the entry's endpoints is
// taken from it.

// KubeconfigSource returns the Source of cl's kubeconfig credential: each
// call resolves spec.kubeconfig again through creds (an entry the operator
// removed or changed is seen) and reads its kubeconfig (FromKubeconfig).
func KubeconfigSource(creds provider.Kubeconfigs, cl *kpool.Cluster) Source {
	c := *cl
	return func(ctx context.Context) (*provider.KubeAccess, error) {
		if creds == nil {
			return nil, provider.ValidationError(c.Spec.Platform.Type, "spec.kubeconfig", "this kpool has no named credentials (kpool serve --credentials)")
		}
		cred, err := creds.Kubeconfig(&c)
		if err != nil {
			return nil, err
		}
		if cred == nil {
			return nil, ErrNoAccess
		}
		return FromKubeconfig(cred)(ctx)
	}
}

// FromKubeconfig returns the Source of a kubeconfig credential: each call
// reads its secret and takes the current context's server, CA, and token
// or client certificate. It refuses what would send the credential where
// the operator did not say, or run or read anything on kpool's host: exec
// and auth-provider users, files named by path, user and password,
// impersonation, insecure-skip-tls-verify, a proxy-url, and a server that
// is not https at one of the entry's endpoints. Errors name
// spec.kubeconfig and the credential, never the kubeconfig's content.
func FromKubeconfig(cred *provider.Credential) Source {
	return func(context.Context) (*provider.KubeAccess, error) {
		fail := func(format string, args ...any) error {
			return provider.ValidationError(cred.Type, "spec.kubeconfig", "credential %q: %s", cred.Name, fmt.Sprintf(format, args...))
		}
		raw, err := cred.Read("kubeconfig")
		if err != nil {
			return nil, provider.ValidationError(cred.Type, "spec.kubeconfig", "%v", err)
		}
		cfg, err := clientcmd.Load([]byte(raw))
		if err != nil {
			// clientcmd's message may quote the document: not repeated.
			return nil, fail("its kubeconfig is not one client-go can read")
		}
		cluster, user, err := current(cfg)
		if err != nil {
			return nil, fail("%v", err)
		}
		if why := refuseCluster(cluster, cred); why != "" {
			return nil, fail("%s", why)
		}
		if why := refuseUser(user); why != "" {
			return nil, fail("%s", why)
		}
		return &provider.KubeAccess{Server: cluster.Server, CA: cluster.CertificateAuthorityData,
			Token: user.Token, ClientCert: user.ClientCertificateData, ClientKey: user.ClientKeyData}, nil
	}
}

// current returns the cluster and user of the kubeconfig's current
// context (its only one when it names none).
func current(cfg *clientcmdapi.Config) (*clientcmdapi.Cluster, *clientcmdapi.AuthInfo, error) {
	name := cfg.CurrentContext
	if name == "" && len(cfg.Contexts) == 1 {
		for n := range cfg.Contexts {
			name = n
		}
	}
	ctx := cfg.Contexts[name]
	if ctx == nil {
		return nil, nil, fmt.Errorf("its kubeconfig has no current-context (or names one it lacks)")
	}
	cluster, user := cfg.Clusters[ctx.Cluster], cfg.AuthInfos[ctx.AuthInfo]
	switch {
	case cluster == nil:
		return nil, nil, fmt.Errorf("its current context names a cluster the kubeconfig lacks")
	case user == nil:
		return nil, nil, fmt.Errorf("its current context names a user the kubeconfig lacks")
	}
	return cluster, user, nil
}

// refuseCluster says why kpool does not use a kubeconfig's cluster ("":
// it does).
func refuseCluster(c *clientcmdapi.Cluster, cred *provider.Credential) string {
	switch {
	case c.CertificateAuthority != "":
		return "its cluster names certificate-authority by path; give certificate-authority-data"
	case c.InsecureSkipTLSVerify:
		return "its cluster sets insecure-skip-tls-verify: kpool sends a credential only to a server it verifies"
	case c.ProxyURL != "":
		return "its cluster sets proxy-url: kpool sends a cluster's credential to its server only"
	}
	o, err := kpool.Origin(c.Server)
	if err != nil || !strings.HasPrefix(strings.ToLower(c.Server), "https://") {
		return "its cluster's server is not an https URL"
	}
	if !cred.AllowsOrigin(o) {
		return fmt.Sprintf("its cluster's server %s is not among the entry's endpoints", o)
	}
	return ""
}

// refuseUser says why kpool does not use a kubeconfig's user ("": it
// does).
func refuseUser(u *clientcmdapi.AuthInfo) string {
	switch {
	case u.Exec != nil:
		return "its user runs a command (exec): kpool runs nothing a kubeconfig names"
	case u.AuthProvider != nil:
		return "its user uses an auth-provider: give a token or a client certificate"
	case u.ClientCertificate != "" || u.ClientKey != "" || u.TokenFile != "":
		return "its user names files by path (client-certificate, client-key or tokenFile); give their data"
	case u.Username != "" || u.Password != "":
		return "its user logs in with a username and password: give a token or a client certificate"
	case u.Impersonate != "" || u.ImpersonateUID != "" || len(u.ImpersonateGroups) > 0 || len(u.ImpersonateUserExtra) > 0:
		return "its user impersonates another: kpool acts as the kubeconfig's user only"
	case (len(u.ClientCertificateData) == 0) != (len(u.ClientKeyData) == 0):
		return "its user gives a client certificate without its key, or a key without its certificate"
	case u.Token == "" && len(u.ClientCertificateData) == 0:
		return "its user gives neither a token nor a client certificate"
	}
	return ""
}

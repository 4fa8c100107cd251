package provider

import (
	"context"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/kpool/kpool"
)

// KubeAccess is how kpool reaches a cluster's Kubernetes API, as the
// cluster's cloud hands it out: the API server and its CA as the cloud's API
// answered them (never a user's field), and a bearer token got the cloud's
// way (an ARM kubeconfig's token, an EKS token presigned with STS, a Google
// access token, an OKE token signed with the caller's key, the token of
// Civo's kubeconfig).
type KubeAccess struct {
	// Server is the API server's https URL; it may carry a path (an
	// emulated cluster's API is served under one).
	Server string
	// CA is the PEM of the server's certificate authority; nil: the
	// system's roots.
	CA    []byte
	Token string
	// ClientCert and ClientKey are a client certificate and its key (PEM),
	// for a cluster whose kubeconfig logs in with one (Civo's k3s, AKS's
	// admin credential); with or instead of Token.
	ClientCert, ClientKey []byte
	// Expires is when Token stops being accepted (zero: not known to);
	// kpool asks for a new access before then.
	Expires time.Time
}

// KubeReacher is a driver that reaches its clusters' Kubernetes API. Before
// it returns, the driver checks the server with CheckKubeServer: a cloud
// answer (or an emulator) naming a host the operator did not allow is a
// *RefusedHostError, and nothing is sent there.
type KubeReacher interface {
	KubeAccess(ctx context.Context, c *kpool.Cluster) (*KubeAccess, error)
}

// KubeHosts is a profile that says where its cloud's clusters' API servers
// are: host name suffixes (".azmk8s.io"), and IPAddresses for a cloud whose
// clusters' endpoints are IP addresses (GKE's). A profile without it has
// its clusters' API servers only where its credentials may be sent.
type KubeHosts interface {
	KubeHostSuffixes() []string
	KubeIPAddresses() bool
}

// CheckKubeServer returns an error unless kpool may send cred's cluster
// token to server: it must be https, and at the origin of the cluster's
// spec.endpoint (an emulator, a sovereign cloud: the cloud's API and the
// cluster's share it), or at an origin cred may be sent to, or, for a
// cluster on the public cloud, on one of the cloud's hosts (KubeHosts).
func CheckKubeServer(p Profile, cred *Credential, c *kpool.Cluster, server string) error {
	u, err := url.Parse(server)
	if err != nil || u.Host == "" || !strings.EqualFold(u.Scheme, "https") {
		name := ""
		if cred != nil {
			name = cred.Name
		}
		return &RefusedHostError{Credential: name, Host: server}
	}
	origin, _ := kpool.Origin(u.Scheme + "://" + u.Host)
	if e := c.Spec.Endpoint; e != "" {
		if o, err := kpool.Origin(e); err == nil && o == origin {
			return nil
		}
	}
	if cred != nil && cred.AllowsOrigin(origin) {
		return nil
	}
	if h, ok := p.(KubeHosts); ok && c.Spec.Endpoint == "" {
		host := strings.ToLower(u.Hostname())
		if h.KubeIPAddresses() && net.ParseIP(host) != nil {
			return nil
		}
		for _, s := range h.KubeHostSuffixes() {
			if strings.HasSuffix(host, strings.ToLower(s)) {
				return nil
			}
		}
	}
	name := ""
	if cred != nil {
		name = cred.Name
	}
	return &RefusedHostError{Credential: name, Host: u.Scheme + "://" + u.Host}
}

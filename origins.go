package kpool

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Origins is the operator's allow-list of endpoints (--allowed-endpoints):
// https origins any user may put in spec.endpoint. Admins may set others.
// The zero value allows nothing.
type Origins map[string]bool

// ParseOrigins builds an allow-list from https origins such as
// https://arm.example or https://127.0.0.1:8443.
func ParseOrigins(list []string) (Origins, error) {
	o := Origins{}
	for _, s := range list {
		if strings.TrimSpace(s) == "" {
			continue
		}
		n, err := Origin(s)
		if err != nil {
			return nil, err
		}
		if u, _ := url.Parse(strings.TrimSpace(s)); u.Path != "" && u.Path != "/" {
			return nil, fmt.Errorf("%q: give an origin (https://host[:port]), without a path", s)
		}
		o[n] = true
	}
	return o, nil
}

// Origin returns the origin of an https URL in the one form kpool compares:
// https://host:port, the host in lower case and the port always given.
func Origin(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	switch {
	case err != nil || !u.IsAbs() || u.Host == "":
		return "", fmt.Errorf("%q is not an absolute URL", raw)
	case !strings.EqualFold(u.Scheme, "https"):
		return "", fmt.Errorf("%q: only https endpoints may receive credentials", raw)
	case u.User != nil:
		return "", fmt.Errorf("%q must not carry credentials", raw)
	case u.RawQuery != "" || u.Fragment != "":
		return "", fmt.Errorf("%q must not have a query or fragment", raw)
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return "", fmt.Errorf("%q has no host", raw)
	}
	if port == "" {
		port = "443"
	}
	return "https://" + net.JoinHostPort(strings.ToLower(strings.TrimSuffix(host, ".")), port), nil
}

// Allows reports whether endpoint's origin is on the list.
func (o Origins) Allows(endpoint string) bool {
	n, err := Origin(endpoint)
	return err == nil && o[n]
}

// CredentialGrants says which of the operator's named credentials a caller
// may give a cluster (spec.credential, or the platform's default when it is
// empty). Package provider's CredentialSet is one.
type CredentialGrants interface {
	// Grant returns the entry that grants id the credential spec names
	// for the cluster spec describes (its subscription, account or
	// project, and its endpoint), a cluster of team ("": none), or an
	// error naming spec.credential or spec.endpoint.
	Grant(id *Identity, team string, spec *ClusterSpec) (basis string, err error)
	// Holds returns an error naming spec.credential unless the grant the
	// cluster's credential was chosen by (Cluster.Grant) still stands:
	// the operator may have taken it away since.
	Holds(c *Cluster) error
	// GrantKubeconfig returns the entry that grants id the kubeconfig
	// credential spec names (Cluster.KubeconfigGrant), or an error naming
	// spec.kubeconfig unless it is one of the cluster's platform that id
	// may use for a cluster of team and of spec's scope.
	GrantKubeconfig(id *Identity, team string, spec *ClusterSpec) (basis string, err error)
}

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
}

// authorizeCloud checks that the caller may point a cluster of team where
// next says: its endpoint and its credential. On an update (old != nil)
// only what changes is checked (chosen checks the credential again: a new
// team, or a credential sent again), so that a user may still edit a
// cluster an admin pointed elsewhere. It is the API's check; the drivers
// check again, at the wire, whatever is stored.
//
// It returns the grant's basis (Cluster.Grant) when the credential was
// checked, and keep true when it was not and the cluster keeps its own.
func (s *Service) authorizeCloud(id *Identity, team string, chosen bool, old, next *ClusterSpec) (basis string, keep bool, err error) {
	endpointChanged := old == nil || old.Endpoint != next.Endpoint
	if e := next.Endpoint; e != "" && endpointChanged && !id.Admin && !s.Endpoints.Allows(e) {
		return "", false, &Error{Code: CodeForbidden, Message: "Endpoint not allowed",
			Details: fmt.Sprintf("spec.endpoint: %q is not on the operator's list of allowed endpoints; only admins may set another", e),
			Fields:  []FieldError{{Field: "spec.endpoint", Reason: "not on the operator's list of allowed endpoints (--allowed-endpoints); only admins may set another"}}}
	}
	if old != nil && !endpointChanged && !chosen && old.Credential == next.Credential {
		return "", true, nil
	}
	if s.Credentials == nil {
		if next.Credential != "" {
			return "", false, Invalid("spec.credential", "this kpool has no named credentials (kpool serve --credentials)")
		}
		return "", false, nil
	}
	basis, err = s.Credentials.Grant(id, team, next)
	return basis, false, err
}

// credentialHolds refuses a use of cluster c (a pool written in it) when the
// grant its credential was chosen by has been taken away.
func (s *Service) credentialHolds(c *Cluster) error {
	if s.Credentials == nil {
		return nil
	}
	return s.Credentials.Holds(c)
}

package service

import (
	"fmt"

	"github.com/kpool/kpool"
)

// authorizeCloud checks that the caller may point a cluster of team where
// next says: its endpoint and its credential. On an update (old != nil)
// only what changes is checked (chosen checks the credential again: a new
// team, or a credential sent again), so that a user may still edit a
// cluster an admin pointed elsewhere. It is the API's check; the drivers
// check again, at the wire, whatever is stored.
//
// It returns the grant's basis (Cluster.Grant) when the credential was
// checked, and keep true when it was not and the cluster keeps its own.
func (s *Service) authorizeCloud(id *kpool.Identity, team string, chosen bool, old, next *kpool.ClusterSpec) (basis string, keep bool, err error) {
	endpointChanged := old == nil || old.Endpoint != next.Endpoint
	if e := next.Endpoint; e != "" && endpointChanged && !id.Admin && !s.Endpoints.Allows(e) {
		return "", false, &kpool.Error{Code: kpool.CodeForbidden, Message: "Endpoint not allowed",
			Details: fmt.Sprintf("spec.endpoint: %q is not on the operator's list of allowed endpoints; only admins may set another", e),
			Fields:  []kpool.FieldError{{Field: "spec.endpoint", Reason: "not on the operator's list of allowed endpoints (--allowed-endpoints); only admins may set another"}}}
	}
	if old != nil && !endpointChanged && !chosen && old.Credential == next.Credential {
		return "", true, nil
	}
	if s.Credentials == nil {
		if next.Credential != "" {
			return "", false, kpool.Invalid("spec.credential", "this kpool has no named credentials (kpool serve --credentials)")
		}
		return "", false, nil
	}
	basis, err = s.Credentials.Grant(id, team, next)
	return basis, false, err
}

// credentialHolds refuses a use of cluster c (a pool written in it) when the
// grant its credential was chosen by has been taken away.
func (s *Service) credentialHolds(c *kpool.Cluster) error {
	if s.Credentials == nil {
		return nil
	}
	return s.Credentials.Holds(c)
}

// authorizeKubeconfig checks that the caller may give a cluster of team the
// kubeconfig credential next names (spec.kubeconfig), when it is new or
// chosen again: one of the cluster's platform granted to the caller. It
// returns the grant's basis (Cluster.KubeconfigGrant), and keep true when
// it was not checked and the cluster keeps its own.
func (s *Service) authorizeKubeconfig(id *kpool.Identity, team string, chosen bool, old, next *kpool.ClusterSpec) (basis string, keep bool, err error) {
	switch {
	case next.Kubeconfig == "":
		return "", false, nil
	case old != nil && !chosen && old.Kubeconfig == next.Kubeconfig:
		return "", true, nil
	case s.Credentials == nil:
		return "", false, kpool.Invalid("spec.kubeconfig", "this kpool has no named credentials (kpool serve --credentials)")
	}
	basis, err = s.Credentials.GrantKubeconfig(id, team, next)
	return basis, false, err
}
